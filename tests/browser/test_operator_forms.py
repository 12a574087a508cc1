"""What an operator types or does is never undone by a live refresh, at 1440x900 in Chromium: a
refused task form keeps its errors and values while another instance's commit refreshes the
inbox; an open variable editor keeps what was typed while the rest of the inspector moves on; a
button pressed while the list's refresh is on its way still does what it says."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, Route, ViewportSize, expect

from engine.handle import InstanceHandle
from engine.store.tasks import TaskRow
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval
from tests.browser.test_forms import LEAVE
from tests.browser.test_live_refresh import settle
from tests.engine.modification_support import forked

pytestmark = pytest.mark.browser

WIDE: ViewportSize = {"width": 1440, "height": 900}


def _open(login: Login, role: str, path: str) -> Page:
    page = login(role)
    page.set_viewport_size(WIDE)
    page.goto(path)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    return page


def _heard(page: Page, instance_id: object) -> None:
    """The page received an event of `instance_id` (its refresh was asked for)."""
    page.wait_for_function(
        "id => window.Interlock.events.some(e => e.instance_id === id)", arg=str(instance_id)
    )


def _leave_form_open(
    console: ConsoleServer, login: Login
) -> tuple[InstanceHandle, TaskRow, Page, Locator]:
    """An operator's inbox with the form of a new leave request's task unfolded."""
    console.engine.deploy(LEAVE)
    mine = console.engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = mine.user_tasks()
    page = _open(login, "operator", "/tasks")
    settle(page, console)
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    return mine, task, page, page.locator(f"#task-form-{task.id}")


def test_a_refused_task_form_survives_another_instances_commit(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    mine, task, page, form = _leave_form_open(console, login)
    form.get_by_label("Approved days").fill("45")
    form.get_by_label("Comment").fill("Whole month")
    form.get_by_label("Decision").select_option("reject")
    form.get_by_role("button", name="Complete").click()
    error = page.locator(f"#task-form-{task.id}-3-error")
    expect(error).to_have_text("must be at most 30")

    # Another instance commits while the operator is in the comment field: the inbox refreshes
    # (its task appears) around the open form, and the typing goes on where it was.
    comment = form.get_by_label("Comment")
    comment.focus()
    comment.press("End")
    other = engine.start_latest(
        "leave_request", form={"employee": "Bo", "days": "2", "firstDay": "01/03/2027"}
    )
    (other_task,) = other.user_tasks()
    _heard(page, other.id)
    expect(page.locator(f'tr[data-task="{other_task.id}"]')).to_have_count(1)
    settle(page, console)
    form = page.locator(f"#task-form-{task.id}")
    expect(form.get_by_label("Comment")).to_be_focused()
    page.keyboard.type(", from Monday")
    expect(form.get_by_label("Comment")).to_have_value("Whole month, from Monday")
    expect(form).to_be_visible()
    expect(form.get_by_label("Approved days")).to_have_value("45")
    expect(form.get_by_label("Decision")).to_have_value("reject")
    expect(error).to_have_text("must be at most 30")
    expect(form.get_by_role("alert")).to_contain_text("Nothing was saved")
    assert [t.id for t in mine.user_tasks()] == [task.id]

    # Corrected and accepted: the form is done with, and its row leaves the inbox.
    form.get_by_label("Approved days").fill("20")
    form.get_by_role("button", name="Complete").click()
    expect(page.locator(".flash.ok")).to_have_text("Task completed.")
    expect(page.locator(f'tr[data-task="{task.id}"]')).to_have_count(0)
    expect(page.locator(f'tr[data-task="{other_task.id}"]')).to_have_count(1)
    assert mine.variables()["approvedDays"] == 20


def test_an_open_variable_editor_survives_a_refresh_of_the_inspector(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval", {"amount": 5})
    page = _open(login, "operator", f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    settle(page, console)

    row = page.locator('#variables-body tr[data-variable="amount"]')
    row.locator("summary").click()
    editor = row.locator("form.edit")
    editor.get_by_label("Type").select_option("long")
    editor.get_by_label("Value").fill("five")
    editor.get_by_role("button", name="Save").click()
    refused = page.locator("#flash-variables .flash.error")
    expect(refused).to_be_visible()
    assert handle.variables()["amount"] == 5

    # Someone else completes a task of the instance: the inspector refreshes (the task leaves
    # its panel, its variable appears beside the editor) and the editor stays as it was, with
    # the refusal beside it.
    invoice = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Invoice")
    engine.complete_task(invoice.id, {"invoiced": True})
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
    expect(page.locator('#variables-body tr[data-variable="invoiced"] .value')).to_have_text("true")
    settle(page, console)
    expect(editor).to_be_visible()
    expect(editor.get_by_label("Value")).to_have_value("five")
    expect(editor.get_by_label("Type")).to_have_value("long")
    expect(refused).to_be_visible()

    # Corrected and saved, the editor is done with: the panel shows both changes.
    editor.get_by_label("Value").fill("7")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator('#variables-body tr[data-variable="amount"] .value')).to_have_text("7")
    expect(page.locator('#variables-body tr[data-variable="invoiced"] .value')).to_have_text("true")
    assert handle.variables()["amount"] == 7


def test_a_button_pressed_while_the_list_refreshes_still_acts(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(LEAVE)
    mine = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = mine.user_tasks()
    page = _open(login, "operator", "/tasks")
    settle(page, console)

    # The inbox's refresh is asked for and held on its way; meanwhile the operator claims.
    held: list[Route] = []

    def hold_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(lambda url: "fragment=rows" in url, hold_first)
    with page.expect_request(lambda request: "fragment=rows" in request.url):
        engine.start_latest(
            "leave_request", form={"employee": "Bo", "days": "2", "firstDay": "01/03/2027"}
        )
    with page.expect_request(lambda request: request.url.endswith(f"/tasks/{task.id}/claim")):
        page.locator(f'tr[data-task="{task.id}"]').get_by_role("button", name="Claim").click()
    expect(page.locator("#flash-user_tasks .flash.ok")).to_be_visible()
    held[0].continue_()
    expect(page.locator(f'tr[data-task="{task.id}"] td').nth(2)).to_have_text("operator")
    assert mine.user_tasks()[0].assignee == "operator"


def test_a_polled_part_holds_a_form_being_filled_in(console: ConsoleServer, login: Login) -> None:
    page = _open(login, "operator", "/workers")
    # A form unfolded inside the part the page polls every 3 seconds, and something typed.
    page.evaluate(
        """() => {
          const body = document.getElementById("workers-body");
          body.insertAdjacentHTML("beforeend",
            '<details id="typing" open><summary>Note</summary><form><input name="note" ' +
            'aria-label="Note"></form></details>');
          window.polls = 0;
          body.addEventListener("htmx:beforeRequest", () => { window.polls += 1; });
        }"""
    )
    page.get_by_label("Note").fill("half-typed")
    page.locator("h1").click()
    page.wait_for_function("() => window.polls >= 2")
    expect(page.get_by_label("Note")).to_have_value("half-typed")

    # Folded, the form holds nothing: the next poll replaces the part.
    page.locator("#typing summary").click()
    expect(page.locator("#typing")).to_have_count(0)


def _inspect(login: Login, instance_id: object) -> Page:
    page = _open(login, "operator", f"/instances/{instance_id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    return page


# Where a flow's first segment has its middle on the page.
FLOW_MIDDLE = """id => {
  const diagram = window.InterlockDiagram;
  const [a, b] = diagram.registry.get(id).waypoints;
  const box = diagram.canvas.viewbox();
  const frame = diagram.canvas.getContainer().getBoundingClientRect();
  return [frame.left + ((a.x + b.x) / 2 - box.x) * box.scale,
          frame.top + ((a.y + b.y) / 2 - box.y) * box.scale];
}"""

JOIN_REFUSED = (
    "A parallel join cannot be started directly; start on one of its incoming flows: "
    "from a; from b."
)


def test_a_parallel_join_is_refused_before_preview_and_started_on_its_flow(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(forked("forms-fork"))
    handle = engine.start_latest("forms-fork")
    [at_b] = [t for t in handle.tokens() if t.node_id == "b"]
    page = _inspect(login, handle.id)
    card = page.locator("#modify")

    # The join as a target: refused at once in the operator's words, its incoming flows offered.
    page.locator('#tokens-body tr.token-live[data-node="b"] td').first.click()
    expect(page.locator("#modify-token")).to_have_value(str(at_b.token_id))
    page.locator("#modify-target").select_option("join")
    expect(page.locator("#modify-refusal")).to_have_text(JOIN_REFUSED)
    expect(card.get_by_role("button", name="Move token to target")).to_be_disabled()
    expect(card.get_by_role("button", name="Add token before target")).to_be_disabled()
    expect(card.get_by_role("button", name="Add token after target")).to_be_enabled()
    flows = page.locator("#modify-flow option")
    expect(flows).to_have_text(["from a (Flow_a_join)", "from b (Flow_b_join)"])
    expect(page.locator("#modify-instructions li")).to_have_count(0)
    expect(card.get_by_role("button", name="Preview")).to_be_disabled()

    # Sent anyway, the console refuses it before any preview, in the same words.
    refused = page.evaluate(
        """async (id) => {
          const csrf = document.querySelector('meta[name="csrf-token"]').content;
          const body = new URLSearchParams({instructions: '[{"op": "before", "node": "join"}]'});
          const answer = await fetch("/instances/" + id + "/modify/preview", {method: "POST",
            body, headers: {"X-CSRF-Token": csrf, "HX-Request": "true"}});
          return [answer.status, await answer.text()];
        }""",
        str(handle.id),
    )
    assert refused[0] == 400
    assert JOIN_REFUSED in refused[1]

    # Moved onto the flow from b instead, picked on the diagram (where the join is drawn as
    # started through its flows): previewed, applied, and the token list follows.
    page.locator("#modify-pick").check()
    expect(page.locator('.djs-element[data-element-id="join"]')).to_have_class(
        re.compile(r"\bmodify-via-flow\b")
    )
    page.locator("#diagram").scroll_into_view_if_needed()
    x, y = page.evaluate(FLOW_MIDDLE, "Flow_b_join")
    page.mouse.click(x, y)
    expect(page.locator("#modify-flow")).to_have_value("Flow_b_join")
    expect(page.locator("#modify-target")).to_have_value("join")
    card.get_by_role("button", name="Move token onto this flow").click()
    expect(page.locator("#modify-instructions li")).to_have_count(2)
    card.get_by_role("button", name="Preview").click()
    preview = page.locator("#modify-preview-result")
    expect(preview.locator('li[data-node="join"] .preview-count')).to_have_text("1")
    expect(preview.locator('li[data-node="a"] .preview-count')).to_have_text("1")
    expect(preview.locator('li[data-node="b"]')).to_have_count(0)
    card.get_by_role("button", name="Apply").click()
    expect(page.locator("#modify-result .flash.ok")).to_contain_text("join (1)")
    expect(page.locator('#tokens-body tr.token-live[data-node="b"]')).to_have_count(0)
    expect(page.locator(f'#modify-token option[value="{at_b.token_id}"]')).to_have_count(0)
    expect(page.locator("#modify-token option")).to_have_count(3)  # the prompt, a and join
    expect(page.locator("#tokens-body .join-count")).to_have_text("1/2")
    assert sorted(t.node_id for t in handle.tokens()) == ["a", "join"]

    # The join completes when a's task does: the merged token goes on to "after".
    (task,) = handle.user_tasks()
    engine.complete_task(task.id)
    expect(page.locator('#tokens-body tr.token-live[data-node="after"]')).to_have_count(1)


def test_the_modify_card_follows_the_instance_state_live(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    page = _inspect(login, handle.id)
    card = page.locator("#modify")
    expect(card.get_by_role("heading", name="Modify tokens")).to_be_visible()

    # Suspended: nothing can be modified until the instance is resumed.
    handle.suspend()
    expect(page.locator("#instance-state")).to_have_text("Suspended")
    expect(card.get_by_role("button", name="Clear")).to_be_disabled()
    expect(page.locator("#modify-target")).to_be_disabled()
    expect(page.locator("#modify-hint")).to_contain_text("suspended")
    handle.resume()
    expect(page.locator("#instance-state")).to_have_text("Active")
    expect(page.locator("#modify-target")).to_be_enabled()

    # Completed while the page is open: the card and the header's actions go.
    expect(page.get_by_role("button", name="Cancel instance")).to_be_visible()
    for task in engine.user_tasks(handle.id):
        engine.complete_task(task.id)
    (confirm,) = engine.user_tasks(handle.id)
    engine.complete_task(confirm.id)
    expect(page.locator("#instance-state")).to_have_text("Completed")
    expect(card).to_be_hidden()
    expect(page.get_by_role("heading", name="Modify tokens")).to_have_count(0)
    expect(page.get_by_role("button", name="Cancel instance")).to_have_count(0)
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)


def test_a_form_whose_task_went_elsewhere_holds_the_inbox_until_folded(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    mine, task, page, form = _leave_form_open(console, login)
    form.get_by_label("Comment").fill("Still typing")

    # Someone else completes the task: the refresh no longer draws its form, so the inbox keeps
    # what it shows, what was typed included.
    engine.complete_task(task.id, {"approvedDays": 5})
    _heard(page, mine.id)
    settle(page, console)
    expect(form.get_by_label("Comment")).to_have_value("Still typing")

    # Folded, the form holds nothing: the inbox catches up, and the task is gone.
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    expect(page.locator(f'tr[data-task="{task.id}"]')).to_have_count(0)
