"""The inspector's diagram and tokens panel show a token waiting at an event-based gateway with
the events it waits for, and clear both when the first event wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.console.common import when
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "payment_wait.bpmn"


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_event_gateway_wait_shows_and_clears(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(MODEL)
    handle = engine.start_latest("payment-wait", {"timeout": "PT2H"}, business_key="C-1")
    [job] = engine.jobs(handle.id)
    events = f"message 'payment', timer due {when(job.due_at)}, signal 'cancel'"
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    badge = page.locator(overlay("Gateway_Wait", "wait-badge"))
    expect(badge).to_have_text("3 events")
    expect(badge).to_have_attribute("title", f"waiting for: {events}")
    expect(page.locator(overlay("Gateway_Wait", "token-badge"))).to_have_text("1")
    expect(page.locator("#tokens-body .gateway-events")).to_have_text(events)

    engine.correlate_message("payment", business_key="C-1")
    expect(page.locator(overlay("Gateway_Wait", "wait-badge"))).to_have_count(0)
    expect(page.locator("#tokens-body .gateway-events")).to_have_count(0)
    expect(page.locator(overlay("Gateway_Wait", "token-badge"))).to_have_count(0)
