"""The living demo: its order process runs in the inspector (the README's screenshot comes from
here), and its trickle, worker and approvals run until stopped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app.demo import ORDER_KEY, Demo, install_demo
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

# Set to a file name (e.g. docs/inspector.png) to keep the inspector's screenshot there.
SCREENSHOT = os.environ.get("INTERLOCK_SCREENSHOT")


def test_demo_order_in_the_inspector(console: ConsoleServer, login: Login, tmp_path: Path) -> None:
    engine = console.engine
    demo = install_demo(engine, start=False, failure_rate=0.0, seed=7)
    demo.worker.start()
    try:
        handle = engine.start_latest(
            ORDER_KEY,
            {"customer": "Ada Lovelace", "product": "monitor", "quantity": 2, "amount": 349.0},
            business_key="order-10042",
        )
        page = login("operator")
        page.goto(f"/instances/{handle.id}")
        expect(page.locator("#diagram")).to_have_attribute("data-layout", "model")
        join = page.locator('.djs-overlays[data-container-id="Join"] .join-badge')
        expect(join).to_have_text("1/2")
        approve = page.locator('.djs-overlays[data-container-id="ApproveOrder"] .token-badge')
        expect(approve).to_have_text("1")
        expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
        page.mouse.move(0, 0)
        page.screenshot(path=str(tmp_path / "inspector.png"), full_page=True)
        if SCREENSHOT:
            page.screenshot(path=SCREENSHOT, full_page=False)
    finally:
        demo.stop()


def test_demo_trickle_flows_and_stops(console: ConsoleServer) -> None:
    engine = console.engine
    install_demo(engine, start=False)
    demo = Demo(engine, interval=0.1, approve_after=0.3, failure_rate=0.5, seed=3).start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            counts = engine.instance_counts()
            approved = [t for t in engine.user_tasks(state="Completed")]
            if sum(counts.values()) >= 6 and engine.incidents() and approved:
                break
            time.sleep(0.1)
        assert sum(engine.instance_counts().values()) >= 6
        assert engine.incidents(), "the demo worker never failed"
        assert engine.user_tasks(state="Completed"), "no order was approved"
    finally:
        started = time.monotonic()
        demo.stop()
        assert time.monotonic() - started < 5
    counted = sum(engine.instance_counts().values())
    time.sleep(0.5)
    assert sum(engine.instance_counts().values()) == counted
