"""Impact before action, in Chromium at 1440x900: every batch the instance and incident lists
offer opens a dialog that counts what the filter matches now (an empty filter says "all N"),
lists a sample with links and confirms with that number; nothing runs before the confirm button
is pressed, and no native confirm() is left. Setting variables on many instances is refused in
the dialog naming the variable, then runs to its end."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Dialog, Page, expect

from engine.builder import ProcessBuilder
from engine.states import InstanceState
from tests.browser.conftest import TIMEOUT_MS, Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser


def batch_action(page: Page, name: str) -> None:
    """Open the list's Batch menu (unless open) and choose `name` in it."""
    menu = page.locator("details.batch-menu")
    if not menu.evaluate("d => d.open"):
        menu.locator("> summary").click()
    page.get_by_role("button", name=name).click()


def _deploy(console: ConsoleServer) -> None:
    engine = console.engine
    for key in ("impact-a", "impact-b"):
        engine.deploy(
            ProcessBuilder(key)
            .start_event("start")
            .user_task("review")
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
    engine.deploy(
        ProcessBuilder("impact-charge")
        .start_event("start")
        .service_task("charge", topic="impact-charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )


def _no_native_dialogs(page: Page) -> list[str]:
    seen: list[str] = []

    def refuse(dialog: Dialog) -> None:
        seen.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", refuse)
    return seen


def _finished(page: Page) -> str:
    expect(page).to_have_url(re.compile(r"/batches/[0-9a-f-]{36}$"))
    expect(page.locator("#batch-body")).to_have_attribute(
        "data-state", "Completed", timeout=2 * TIMEOUT_MS
    )
    return page.url.rsplit("/", 1)[1]


def test_every_batch_confirmation_states_how_many_it_will_touch(
    console: ConsoleServer, login: Login
) -> None:
    _deploy(console)
    engine = console.engine
    a = [
        engine.start_latest("impact-a", {"tier": "gold"}, business_key=f"a-{n}") for n in range(25)
    ]
    b = [engine.start_latest("impact-b") for _ in range(5)]
    page = login("operator")
    native = _no_native_dialogs(page)

    # No filter: all of them, with a sample of ten linked to their inspectors.
    page.goto("/instances")
    batch_action(page, "Cancel all matching…")
    dialog = page.locator("dialog#batch-impact")
    expect(dialog).to_be_visible()
    expect(dialog.locator(".batch-impact-count")).to_have_attribute("data-count", "30")
    expect(dialog.locator(".batch-impact-count")).to_contain_text(
        "No filter is set: this is all 30 running root instances."
    )
    sample = dialog.locator(".batch-impact-sample tbody tr")
    expect(sample).to_have_count(10)
    expect(sample.first.get_by_role("link")).to_have_attribute("href", f"/instances/{b[-1].id}")
    expect(dialog.get_by_role("button", name="Cancel 30 instances")).to_be_visible()
    dialog.get_by_role("button", name="Back").click()
    expect(dialog).to_be_hidden()
    assert all(h.state is InstanceState.ACTIVE for h in (*a, *b))

    # A filter: its number, and the batch runs over exactly what it matched.
    page.goto("/instances?definition=impact-b")
    batch_action(page, "Cancel all matching…")
    expect(dialog.locator(".batch-impact-count")).to_contain_text(
        "The filter matches 5 running root instances now."
    )
    expect(dialog.locator(".batch-impact-sample tbody tr")).to_have_count(5)
    dialog.get_by_role("button", name="Cancel 5 instances").click()
    _finished(page)
    expect(page.locator("#batch-body [data-progress-text]")).to_have_text("5 done of 5")
    assert {engine.instance(h.id).state for h in b} == {InstanceState.TERMINATED}
    assert engine.instance(a[0].id).state is InstanceState.ACTIVE

    # Set variables: refused in the dialog naming the variable, then set on all 25.
    page.goto("/instances?definition=impact-a")
    batch_action(page, "Set variables…")
    expect(dialog.locator(".batch-impact-count")).to_contain_text(
        "The filter matches 25 running instances now."
    )
    dialog.locator('input[name="set_name_0"]').fill("limit")
    dialog.locator('select[name="set_type_0"]').select_option("integer")
    dialog.locator('input[name="set_value_0"]').fill("plenty")
    dialog.get_by_role("button", name="Set variables on 25 instances").click()
    expect(dialog.locator("#batch-impact-flash")).to_contain_text("variable 'limit'")
    expect(dialog).to_be_visible()
    dialog.locator('input[name="set_value_0"]').fill("4000")
    dialog.locator('input[name="remove"]').fill("tier")
    dialog.get_by_role("button", name="Set variables on 25 instances").click()
    _finished(page)
    assert all(engine.instance(h.id).variables() == {"limit": 4000} for h in a)

    # Suspending and resuming count only the instances in the state they change.
    page.goto("/instances?definition=impact-a")
    batch_action(page, "Suspend all matching…")
    expect(dialog.locator(".batch-impact-count")).to_contain_text(
        "The filter matches 25 active instances now."
    )
    expect(dialog.get_by_role("button", name="Suspend 25 instances")).to_be_visible()
    dialog.get_by_role("button", name="Back").click()
    expect(dialog).to_be_hidden()
    batch_action(page, "Resume all matching…")
    expect(dialog.locator(".batch-impact-count")).to_have_attribute("data-count", "0")
    expect(dialog).to_contain_text("Nothing matches: there is nothing to do.")
    dialog.get_by_role("button", name="Back").click()

    # Retrying every incident the filter matches asks first, with the number.
    for _ in range(3):
        engine.start_latest("impact-charge")
    for task in engine.fetch_and_lock("w", {"impact-charge": 60_000}, max_tasks=3):
        engine.fail_external_task(task["id"], "w", "card declined", retries=0)
    page.goto("/incidents?definition=impact-charge")
    batch_action(page, "Retry all matching…")
    expect(dialog.locator(".batch-impact-count")).to_contain_text(
        "The filter matches 3 open incidents now."
    )
    expect(dialog.locator(".batch-impact-sample tbody tr")).to_have_count(3)
    expect(dialog.locator(".batch-impact-sample")).to_contain_text("card declined")
    assert len(engine.incidents(definition_key="impact-charge")) == 3
    dialog.get_by_role("button", name="Retry 3 incidents").click()
    _finished(page)
    assert native == []
