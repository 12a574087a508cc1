"""The inspector follows a running parallel instance live, and a node click filters the panels."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser

UNCOVERED = """() => {
  const mark = document.querySelector('.bjs-powered-by');
  const box = mark.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  return box.width > 0 && mark.contains(hit);
}"""


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_join_fills_live_when_one_branch_completes(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval", business_key="order-1")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(diagram).to_have_attribute("data-layout", "generated")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(page.locator(overlay("Pack", "token-badge"))).to_have_text("1")
    expect(page.locator(overlay("Invoice", "token-badge"))).to_have_text("1")
    expect(page.locator(overlay("Join", "join-badge"))).to_have_count(0)
    page.evaluate("window.__sameDocument = true")

    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Pack")
    engine.complete_task(pack.id)
    expect(page.locator(overlay("Join", "join-badge"))).to_have_text("1/2")
    expect(page.locator(overlay("Join", "token-badge"))).to_have_text("1")
    expect(page.locator(overlay("Pack", "token-badge"))).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True

    expect(page.locator("#tokens-body .join-count")).to_have_text("1/2")
    expect(page.locator('.djs-element[data-element-id="Pack"]')).to_have_class(
        "djs-element djs-shape done"
    )
    expect(page.locator(".bjs-powered-by")).to_be_visible()
    assert page.evaluate(UNCOVERED), "the bpmn.io watermark is covered"

    page.locator('.djs-element[data-element-id="Invoice"]').click()
    expect(page.locator("#node-filter")).to_have_value("Invoice")
    expect(page.locator("#tokens-body tr[data-node]")).to_have_count(1)
    expect(page.locator("#tokens-body tr[data-node]")).to_have_attribute("data-node", "Invoice")
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
    expect(page.locator("#history-body li[data-node]")).to_have_count(1)

    page.select_option("#node-filter", "")
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
    expect(page.locator("#tokens-body tr[data-node]")).to_have_count(3)
