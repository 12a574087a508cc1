"""The early warning before an incident, live in the browser: a worker's failure with retries
left makes the instance "retrying" on the overview, in the instance list and in the inspector
(last error, retries left, next attempt), and a successful retry clears it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import quick_charge
from tests.waiting import wait_until

pytestmark = pytest.mark.browser


def test_a_failure_with_retries_left_shows_retrying_until_the_retry_succeeds(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(quick_charge())
    handle = engine.start_latest("quick-charge", business_key="order-12")
    [task] = engine.fetch_and_lock("charger", {"charge": 60_000})

    overview = login("viewer")
    overview.goto("/")
    expect(overview.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(overview.locator("#retrying-instances")).to_have_text("0")
    inspector = overview.context.new_page()
    inspector.goto(f"/instances/{handle.id}")
    expect(inspector.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(inspector.locator("#retrying-note")).to_have_count(0)

    engine.fail_external_task(
        task["id"], "charger", "card service unreachable", retries=2, retry_timeout_ms=2_000
    )
    expect(overview.locator("#retrying-instances")).to_have_text("1")
    note = inspector.locator("#retrying-note")
    expect(note).to_contain_text("retrying")
    expect(note.locator(".last-error")).to_have_text("card service unreachable")
    expect(note.locator(".retries-left")).to_have_text("2 retries left")
    expect(note.locator(".next-attempt")).to_contain_text("next attempt")
    [failed] = engine.external_tasks(instance_id=handle.id)
    assert failed.lock_expires_at is not None
    expect(note.locator(".next-attempt time")).to_have_attribute(
        "datetime", failed.lock_expires_at.isoformat()
    )
    line = inspector.locator(f'#external_tasks-body [data-retrying="{task["id"]}"]')
    expect(line.locator(".retries-left")).to_have_text("2 retries left")

    overview.locator("#retrying-instances").click()
    expect(overview).to_have_url(re.compile(r"/instances\?retrying=yes$"))
    row = overview.locator(f'tr[data-instance="{handle.id}"]')
    expect(row.locator(".retrying-mark")).to_have_text("retrying")
    expect(overview.locator("tr[data-instance]")).to_have_count(1)
    expect(overview.locator('select[name="retrying"]')).to_have_value("yes")

    # Fetchable again once the retry timeout has passed; this time the charge goes through.
    again: list[dict[str, Any]] = []

    def fetched_again() -> bool:
        again.extend(engine.fetch_and_lock("charger", {"charge": 60_000}))
        return bool(again)

    wait_until(fetched_again, "the task to be fetchable again")
    assert [t["id"] for t in again] == [task["id"]]
    engine.complete_external_task(task["id"], "charger")
    expect(inspector.locator("#instance-state")).to_have_text("Completed")
    expect(inspector.locator("#retrying-note")).to_have_count(0)
    expect(overview.locator("tr[data-instance]")).to_have_count(0)
    overview.goto("/")
    expect(overview.locator("#retrying-instances")).to_have_text("0")
