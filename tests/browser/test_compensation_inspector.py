"""The inspector draws a token running a compensation handler in the compensation colour, on the
diagram and in the tokens panel, and marks the handler's visit in the history; once the handler
is done the throw event goes on and the colour is gone."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

DATA = Path(__file__).parent.parent / "data" / "bpmn"
# --compensation and --accent in static/console.css.
COMPENSATION = "rgb(188, 76, 0)"
FORWARD = "rgb(9, 105, 218)"


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_compensation_tokens_have_their_own_colour(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(DATA / "refund_compensation.bpmn")
    handle = engine.start_latest("refund_compensation")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")

    refund = page.locator('.djs-element[data-element-id="Task_Refund"]')
    expect(refund).to_have_class("djs-element djs-shape has-compensation")
    undo = page.locator('.djs-element[data-element-id="Event_Undo"]')
    expect(undo).to_have_class("djs-element djs-shape has-token")
    handler_badge = page.locator(overlay("Task_Refund", "token-badge"))
    expect(handler_badge).to_have_class("badge token-badge compensation-badge")
    expect(handler_badge).to_have_attribute("title", "1 token: 1 Waiting, 1 compensating")
    expect(handler_badge).to_have_css("background-color", COMPENSATION)
    expect(page.locator(overlay("Event_Undo", "token-badge"))).to_have_css(
        "background-color", FORWARD
    )

    row = page.locator('#tokens-body tr[data-node="Task_Refund"]')
    expect(row).to_have_attribute("data-mode", "Compensation")
    expect(row).to_have_class("token-live token-compensation")
    expect(row.locator(".mode-compensation")).to_have_text("compensation")
    expect(row.locator(".mode-compensation")).to_have_css("background-color", COMPENSATION)
    throw_row = page.locator('#tokens-body tr[data-node="Event_Undo"]')
    expect(throw_row).to_have_attribute("data-mode", "Forward")
    expect(throw_row.locator(".mode-compensation")).to_have_count(0)

    visit = page.locator('#history-body li[data-node="Task_Refund"]')
    expect(visit).to_have_class("visit visit-active visit-compensation")
    expect(visit.locator(".mode-compensation")).to_have_text("compensation")

    [task] = engine.user_tasks(handle.id)
    engine.complete_task(task.id)
    expect(refund).to_have_class("djs-element djs-shape done")
    expect(page.locator(overlay("Task_Refund", "token-badge"))).to_have_count(0)
    expect(visit).to_have_class("visit visit-completed visit-compensation")
    paid = page.locator('#history-body li[data-node="Task_Pay"]')
    expect(paid).to_have_attribute("data-mode", "Forward")
    expect(paid.locator(".mode-compensation")).to_have_count(0)
