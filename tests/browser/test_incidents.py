"""Incidents appear live where operators look, and a retry after the fix completes the path."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import pytest
from playwright.sync_api import expect

from engine.api import Engine, InstanceHandle
from engine.commands.incidents import ResolveIncident
from engine.loops.worker import Task, Worker
from engine.queries import lists
from engine.states import InstanceState
from tests.app.list_data import fill
from tests.browser.conftest import TIMEOUT_MS, Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import flaky_charge, quick_charge
from tests.waiting import wait_until

pytestmark = pytest.mark.browser


@contextmanager
def charging_worker(engine: Engine, message: str, *, retries: int) -> Iterator[threading.Event]:
    """A worker on topic "charge" whose handler raises while the yielded event is set (the
    cause an operator fixes). A failure leaves `retries` tries, then one fewer each time."""
    broken = threading.Event()
    broken.set()
    worker = Worker(
        engine,
        "charging-worker",
        long_poll_seconds=0.5,
        default_retries=retries,
        retry_timeout_ms=100,
    )

    @worker.topic("charge")
    def charge(task: Task) -> dict[str, Any]:
        if broken.is_set():
            raise RuntimeError(message)
        return {"charged": True}

    worker.start()
    try:
        yield broken
    finally:
        worker.stop()


def test_incident_appears_live_and_retry_completes(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(flaky_charge())
    handle = engine.start_latest("flaky-charge", business_key="order-7")
    with charging_worker(engine, "card service unreachable", retries=2) as broken:
        check_incident_and_retry(console, login, handle, broken)
    assert handle.state is InstanceState.COMPLETED


def check_incident_and_retry(
    console: ConsoleServer, login: Login, handle: InstanceHandle, broken: threading.Event
) -> None:
    engine = console.engine

    inspector = login("operator")
    inspector.goto(f"/instances/{handle.id}")
    expect(inspector.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(inspector.locator("#live-status")).to_have_attribute("data-state", "live")
    incidents = inspector.context.new_page()
    incidents.goto("/incidents")
    expect(incidents.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(incidents.locator("#incident-count")).to_have_text("No open incidents.")

    [prepare] = engine.user_tasks(handle.id)
    engine.complete_task(prepare.id)

    badge = inspector.locator('.djs-overlays[data-container-id="Charge"] .incident-badge')
    expect(badge).to_have_text("1 incident")
    expect(inspector.locator("#incidents-body .incident-message")).to_contain_text(
        "card service unreachable"
    )
    expect(inspector.locator("#header-incidents")).to_have_text("1")
    expect(incidents.locator("tr[data-incident]")).to_have_count(1)
    expect(incidents.locator("tr[data-incident] .message")).to_contain_text(
        "card service unreachable"
    )

    broken.clear()
    retry = inspector.locator("#incidents-body").get_by_role("button", name="Retry")
    retry.focus()
    inspector.keyboard.press("Enter")
    expect(inspector.locator("#flash-incidents")).to_contain_text("Retried")
    expect(inspector.locator("#incidents-body .incident")).to_have_count(0)
    expect(badge).to_have_count(0)
    expect(inspector.locator("#instance-state")).to_have_text("Completed")
    expect(inspector.locator('.djs-element[data-element-id="End"]')).to_have_class(
        "djs-element djs-shape done"
    )
    expect(incidents.locator("tr[data-incident]")).to_have_count(0)


def test_bulk_retry_of_fifty_incidents_shows_progress(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(quick_charge())
    handles = [engine.start_latest("quick-charge", business_key=f"bulk-{n}") for n in range(50)]
    with charging_worker(engine, "payment gateway down", retries=0) as broken:
        wait_until(lambda: len(engine.incidents()) == 50, "50 incidents")
        bulk_retry(console, login, broken)
        wait_until(lambda: all(h.state is InstanceState.COMPLETED for h in handles), "completion")


def bulk_retry(console: ConsoleServer, login: Login, broken: threading.Event) -> None:
    engine = console.engine

    page = login("operator")
    page.goto("/incidents")
    expect(page.locator("tr[data-incident]")).to_have_count(50)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.evaluate(
        """() => {
          window.__progress = [];
          const text = document.querySelector('#bulk-progress [data-progress-text]');
          new MutationObserver(() => window.__progress.push(text.textContent))
            .observe(text, {childList: true, characterData: true, subtree: true});
        }"""
    )
    broken.clear()
    page.get_by_label("Select all").check()
    page.get_by_role("button", name="Retry selected").click()
    progress_text = page.locator("#bulk-progress [data-progress-text]")
    expect(progress_text).to_have_text("Done: 50 of 50 retried.", timeout=2 * TIMEOUT_MS)
    bar = page.locator("#bulk-progress progress")
    assert bar.evaluate("p => [p.value, p.max]") == [50, 50]
    seen = page.evaluate("window.__progress")
    steps = {text for text in seen if text.endswith(" of 50 retried")}
    assert len(steps) >= 10, seen
    expect(page.locator("tr[data-incident]")).to_have_count(0)
    expect(page.locator("#incident-count")).to_have_text("No open incidents.")
    assert engine.incidents() == []


def test_next_page_shows_the_next_incidents_and_live_refresh_keeps_the_page(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    fill(engine, 12_500)  # 250 open incidents, oldest first in the list
    listed = [str(i.id) for batch in lists.incidents(engine, lists.IncidentFilter()) for i in batch]
    assert len(listed) == 250

    page = login("operator")
    page.goto("/incidents")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    rows = page.locator("#incident-rows tr[data-incident]")
    expect(rows).to_have_count(100)
    expect(rows.first).to_have_attribute("data-incident", listed[0])
    expect(rows.last).to_have_attribute("data-incident", listed[99])

    page.get_by_role("link", name="Next page").click()
    expect(page).to_have_url(re.compile(r"/incidents\?after="))
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(rows).to_have_count(100)
    expect(rows.first).to_have_attribute("data-incident", listed[100])
    expect(rows.last).to_have_attribute("data-incident", listed[199])

    # An incident of this page resolves: the refresh asks for this page again, which now ends
    # with the first incident of the next one.
    with page.expect_request(lambda r: "fragment=rows" in r.url) as refresh:
        engine.run(ResolveIncident(UUID(listed[101])))
    assert "after=" in refresh.value.url
    expect(page.locator(f'tr[data-incident="{listed[101]}"]')).to_have_count(0)
    expect(rows).to_have_count(100)
    expect(rows.first).to_have_attribute("data-incident", listed[100])
    expect(rows.last).to_have_attribute("data-incident", listed[200])
