"""A Camunda Modeler file whose sequence flows have no ids (so no diagram edges) is drawn from
its own layout, and the live markers and badges land on its nodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

PARCEL = Path(__file__).parent.parent / "data" / "bpmn" / "parcel_dispatch.bpmn"


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_flows_without_ids_draw_and_show_live_state(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(PARCEL)
    handle = engine.start_latest("parcel_dispatch")
    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Task_Pack")
    engine.complete_task(pack.id)
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(diagram).to_have_attribute("data-layout", "model")
    expect(page.locator(overlay("Task_Label", "token-badge"))).to_have_text("1")
    expect(page.locator(overlay("Gateway_Join", "join-badge"))).to_have_text("1/2")
    expect(page.locator('.djs-element[data-element-id="Task_Pack"]')).to_have_class(
        "djs-element djs-shape done"
    )
    expect(page.locator("#diagram-error")).to_be_hidden()
    page.goto("/definitions/parcel_dispatch")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator(overlay("Task_Label", "token-badge"))).to_have_text("1")
