"""Generated forms in a real browser: the inbox draws a task's form, an invalid value comes back
with its error next to the field, a valid submission completes the task and the instance holds
the typed variables; the definition page starts an instance through its start form."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Route, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.test_live_refresh import settle
from tests.browser.test_pages import CHECKS

pytestmark = pytest.mark.browser

LEAVE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_request.bpmn"


def test_a_task_form_refuses_in_place_then_completes(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(LEAVE)
    handle = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = handle.user_tasks()
    page = login("operator")
    page.goto("/tasks")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    row = page.locator(f'tr[data-task="{task.id}"]')
    row.locator("summary").click()
    form = page.locator(f"#task-form-{task.id}")
    expect(form.get_by_label("Employee")).to_be_disabled()
    expect(form.get_by_label("Employee")).to_have_value("Ann")
    expect(form.get_by_label("Decision")).to_have_value("approve")
    days = form.get_by_label("Approved days")
    expect(days).to_have_attribute("type", "number")
    expect(days).to_have_value("5")
    expect(form.get_by_label("Notify the team")).to_be_checked()
    expect(form.get_by_label("Back at work")).to_have_attribute("type", "date")
    assert page.evaluate(CHECKS) == []

    days.fill("45")
    form.get_by_label("Comment").fill("Whole month")
    form.get_by_role("button", name="Complete").click()
    error = page.locator(f"#task-form-{task.id}-3-error")
    expect(error).to_have_text("must be at most 30")
    form = page.locator(f"#task-form-{task.id}")
    expect(form.get_by_label("Approved days")).to_have_value("45")
    expect(form.get_by_label("Approved days")).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_label("Comment")).to_have_value("Whole month")
    expect(form.get_by_role("alert")).to_contain_text("Nothing was saved")
    assert [t.id for t in handle.user_tasks()] == [task.id]
    assert "approvedDays" not in handle.variables()

    form.get_by_label("Approved days").fill("3")
    form.get_by_label("Decision").select_option("reject")
    form.get_by_label("Notify the team").uncheck()
    form.get_by_label("Back at work").fill("2027-02-10")
    form.get_by_role("button", name="Complete").click()
    expect(page.locator(".flash.ok")).to_have_text("Task completed.")
    expect(page.locator(f'tr[data-task="{task.id}"]')).to_have_count(0)

    page.goto(f"/instances/{handle.id}")
    variables = page.locator("#variables-body")
    for name, kind, value in [
        ("approvedDays", "long", "3"),
        ("decision", "string", "reject"),
        ("notify", "boolean", "false"),
        ("returnDate", "date", "2027-02-10T00:00:00+00:00"),
        ("comment", "string", "Whole month"),
    ]:
        line = variables.locator(f'tr[data-variable="{name}"]')
        expect(line.locator("td").nth(1)).to_have_text(kind)
        expect(line.locator(".value")).to_have_text(value)


def test_the_definition_page_starts_an_instance_through_its_start_form(
    console: ConsoleServer, login: Login
) -> None:
    console.engine.deploy(LEAVE)
    page = login("operator")
    page.goto("/definitions/leave_request")
    form = page.locator("#start-form-leave_request")
    expect(form.get_by_label("Days")).to_have_value("1")
    assert page.evaluate(CHECKS) == []
    form.get_by_label("Employee").fill("B")
    form.get_by_role("button", name="Start instance").click()
    expect(page.locator("#start-form-leave_request-1-error")).to_have_text(
        "must be at least 2 characters long"
    )
    assert sum(console.engine.instance_counts().values()) == 0
    form = page.locator("#start-form-leave_request")
    form.get_by_label("Employee").fill("Bea")
    form.get_by_label("First day").fill("2027-03-01")
    form.get_by_role("button", name="Start instance").click()
    link = page.get_by_role("status").get_by_role("link")
    expect(link).to_be_visible()
    link.click()
    expect(page.locator('#variables-body tr[data-variable="employee"] .value')).to_have_text("Bea")
    expect(page.locator('#variables-body tr[data-variable="days"] td').nth(1)).to_have_text("long")


def test_a_refused_form_keeps_what_was_typed_through_live_refreshes(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(LEAVE)
    handle = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = handle.user_tasks()
    page = login("operator")
    page.goto("/tasks")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    form = page.locator(f"#task-form-{task.id}")
    form.get_by_label("Approved days").fill("45")
    form.get_by_label("Comment").fill("Whole month")
    form.get_by_role("button", name="Complete").click()
    expect(page.locator(f"#task-form-{task.id}-3-error")).to_have_text("must be at most 30")

    # Another instance's task arrives: the page hears of it, and leaves the refused form be.
    other = engine.start_latest(
        "leave_request", form={"employee": "Bo", "days": "2", "firstDay": "01/03/2027"}
    )
    (other_task,) = other.user_tasks()
    settle(page, console)
    form = page.locator(f"#task-form-{task.id}")
    expect(form.get_by_label("Approved days")).to_have_value("45")
    expect(form.get_by_label("Comment")).to_have_value("Whole month")
    expect(page.locator(f"#task-form-{task.id}-3-error")).to_have_text("must be at most 30")

    # Folded, the form no longer holds the list: it catches up with the other task.
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    expect(page.locator(f'tr[data-task="{other_task.id}"]')).to_have_count(1)


def test_a_refresh_answered_after_typing_began_leaves_the_form_be(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(LEAVE)
    handle = engine.start_latest(
        "leave_request", form={"employee": "Ann", "days": "5", "firstDay": "01/02/2027"}
    )
    (task,) = handle.user_tasks()
    page = login("operator")
    page.goto("/tasks")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    settle(page, console)

    # The list's refresh is asked for while every form is folded, and held on its way.
    held: list[Route] = []

    def hold_first(route: Route) -> None:
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(lambda url: "fragment=rows" in url, hold_first)
    with page.expect_request(lambda request: "fragment=rows" in request.url):
        other = engine.start_latest(
            "leave_request", form={"employee": "Bo", "days": "2", "firstDay": "01/03/2027"}
        )
    (other_task,) = other.user_tasks()

    # Meanwhile the user unfolds the form and types; then the answer comes.
    page.locator(f'tr[data-task="{task.id}"] summary').click()
    form = page.locator(f"#task-form-{task.id}")
    form.get_by_label("Comment").fill("Typed while the list was asked for")
    assert len(held) == 1  # the refresh asked for before the form was opened, still held
    with page.expect_response(lambda response: "fragment=rows" in response.url):
        held[0].continue_()

    # The answer came after the form was opened: the list shows the other task, and the form
    # stays open with what was typed.
    page.wait_for_function("() => !window.Interlock.live.busy")
    expect(page.locator(f'tr[data-task="{other_task.id}"]')).to_have_count(1)
    expect(form.get_by_label("Comment")).to_have_value("Typed while the list was asked for")
    expect(form.get_by_label("Comment")).to_be_visible()
