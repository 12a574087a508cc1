"""A broken stream heals: after the server restarts, the page has every event exactly once, in
outbox order, and shows the instance as it is."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser

RECEIVED = "() => window.Interlock.received.filter(([seq, type]) => type !== 'ready')"


def outbox(console: ConsoleServer, instance_id: object, after: int) -> list[list[object]]:
    with console.engine.connection() as conn:
        rows = conn.execute(
            "SELECT seq, event FROM outbox_event WHERE instance_id = %s AND seq > %s ORDER BY seq",
            (instance_id, after),
        ).fetchall()
    return [[seq, event] for seq, event in rows]


def wait_until_caught_up(page: Page, console: ConsoleServer, instance_id: object) -> None:
    cursor = page.evaluate("window.Interlock.cursor")
    expected = outbox(console, instance_id, cursor)
    page.wait_for_function(
        "n => window.Interlock.lastSeq >= n", arg=expected[-1][0] if expected else 0
    )


def test_reconnect_loses_and_repeats_nothing(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval", business_key="stream-1")
    page = login("viewer")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    first = page.evaluate("window.Interlock.cursor")
    assert isinstance(first, int)

    for n in range(5):
        handle.set_variables({"step": f"before-{n}"})
    wait_until_caught_up(page, console, handle.id)

    console.stop()
    expect(page.locator("#live-status")).to_have_attribute("data-state", "down")
    for n in range(5):
        handle.set_variables({"step": f"during-{n}"})
    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Pack")
    engine.complete_task(pack.id)
    console.start()

    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    for n in range(5):
        handle.set_variables({"step": f"after-{n}"})
    wait_until_caught_up(page, console, handle.id)

    expected = outbox(console, handle.id, first)
    assert len(expected) >= 17
    assert page.evaluate(RECEIVED) == expected
    assert page.evaluate("window.Interlock.opens") >= 2
    expect(page.locator('#variables-body tr[data-variable="step"] .value')).to_have_text("after-4")
    expect(page.locator('.djs-overlays[data-container-id="Join"] .join-badge')).to_have_text("1/2")
    expect(page.locator('.djs-overlays[data-container-id="Pack"] .token-badge')).to_have_count(0)
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
