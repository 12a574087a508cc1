"""The inspector's diagram and tokens panel show a waiting inclusive join as the tokens arrived
and the live upstream tokens it waits for, and clear it when it fires."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from engine.builder import ProcessBuilder
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser


def overlay(node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_inclusive_join_badge_follows_the_branches(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    builder = (
        ProcessBuilder("inclusive-review")
        .start_event("Start")
        .inclusive_gateway("Split")
        .inclusive_gateway("Join")
        .user_task("After", "After")
        .end_event("End")
        .chain("Start", "Split")
        .chain("Join", "After", "End")
    )
    for name in ("Legal", "Finance", "Tax"):
        builder.user_task(name, name).chain("Split", name, "Join")
    engine.deploy(builder.build())
    handle = engine.start_latest("inclusive-review")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(page.locator(overlay("Join", "join-badge"))).to_have_count(0)

    def complete(node_id: str) -> None:
        [task] = [t for t in engine.user_tasks(handle.id) if t.node_id == node_id]
        engine.complete_task(task.id)

    complete("Legal")
    badge = page.locator(overlay("Join", "join-badge"))
    expect(badge).to_have_text("1/?")
    expect(badge).to_have_attribute("title", "1 arrived, waiting for 2 live upstream tokens")
    expect(page.locator("#tokens-body .join-upstream")).to_have_text("2")
    complete("Tax")
    expect(badge).to_have_text("2/?")
    expect(page.locator("#tokens-body .join-upstream")).to_have_text("1")
    complete("Finance")
    expect(page.locator(overlay("Join", "join-badge"))).to_have_count(0)
    expect(page.locator(overlay("After", "token-badge"))).to_have_text("1")
