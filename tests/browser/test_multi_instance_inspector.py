"""The inspector's diagram shows a multi-instance body's iterations completed of the total on
its node, and the tokens panel lists the iterations, following the tasks as they complete."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_multi_instance_badge_follows_the_iterations(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(DATA / "contract_review.bpmn")
    handle = engine.start_latest(
        "contract-review", {"reviewers": ["ann", "bob", "cy"], "quorum": 3, "copies": 2}
    )
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    badge = page.locator(overlay("Task_Review", "loop-badge"))
    expect(badge).to_have_text("0/3")
    expect(badge).to_have_attribute("title", "0 of 3 iterations completed, 3 active")
    expect(page.locator("#tokens-body li.iteration")).to_have_count(3)

    tasks = sorted(engine.user_tasks(handle.id), key=lambda t: t.assignee or "")
    engine.complete_task(tasks[0].id)
    expect(badge).to_have_text("1/3")
    expect(badge).to_have_attribute("title", "1 of 3 iterations completed, 2 active")
    expect(page.locator("#tokens-body .loop-count")).to_have_text("1/3")
    expect(page.locator("#tokens-body li.iteration .tstate-completed")).to_have_count(1)
    engine.complete_task(tasks[1].id)
    engine.complete_task(tasks[2].id)
    expect(page.locator(overlay("Task_Review", "loop-badge"))).to_have_count(0)
    sign = page.locator(overlay("Task_Sign", "loop-badge"))
    expect(sign).to_have_text("0/2")
    expect(sign).to_have_attribute("title", "0 of 2 iterations completed, 1 active")
