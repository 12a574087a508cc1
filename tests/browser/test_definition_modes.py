"""The definition page's one mode control: Now, Heatmap and History side by side beside the
diagram's heading; the period shows only for the history, from and to only for a custom period;
Now and Heatmap switch in place, the history loads its period, and the URL keeps the mode."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser


def badge(page: Page, node: str, kind: str) -> str:
    return f'.djs-overlays[data-container-id="{node}"] .{kind}'


def test_one_mode_control_shows_the_period_only_for_the_history(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    done = engine.start_latest("parallel-approval")
    for task in engine.user_tasks(done.id):
        engine.complete_task(task.id)
    engine.start_latest("parallel-approval")

    page = login("viewer")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/definitions/parallel-approval")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    modes = page.locator("#diagram-modes")
    form = page.locator("#history-switch")
    period = form.locator("select[name=period]")
    start, end = form.locator("input[name=from]"), form.locator("input[name=to]")

    # Now: one control, on the heading's row; no period, no dates.
    expect(modes.get_by_label("Now")).to_be_checked()
    expect(modes.locator("input[name=view]")).to_have_count(3)
    heading = page.locator("#h-diagram").bounding_box()
    control = modes.bounding_box()
    assert heading is not None and control is not None
    assert (
        control["y"] < heading["y"] + heading["height"]
        and heading["y"] < control["y"] + control["height"]
    )
    for field in (period, start, end):
        expect(field).to_be_hidden()
    expect(page.locator(badge(page, "Pack", "token-badge"))).to_have_text("1")

    # Heatmap switches in place (no reload) and the URL says so.
    page.evaluate("window.notReloaded = true")
    modes.get_by_label("Heatmap").check()
    expect(page.locator(badge(page, "Split", "heat-badge"))).to_have_text(re.compile(r"^2 · "))
    expect(page.locator(badge(page, "Pack", "token-badge"))).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/definitions/parallel-approval\?version=1&view=heatmap$"))
    assert page.evaluate("window.notReloaded") is True
    for field in (period, start, end):
        expect(field).to_be_hidden()
    # ... and a link keeps it.
    page.reload()
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(modes.get_by_label("Heatmap")).to_be_checked()
    expect(page.locator(badge(page, "Split", "heat-badge"))).to_have_text(re.compile(r"^2 · "))

    # History loads the last day at once; its period shows, the dates only for a custom one.
    modes.get_by_label("History").check()
    expect(page).to_have_url(re.compile(r"view=history&period=day$"))
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(page.locator(badge(page, "Pack", "history-badge"))).to_contain_text("2")
    expect(period).to_be_visible()
    expect(start).to_be_hidden()
    expect(end).to_be_hidden()
    period.select_option("7d")
    expect(page).to_have_url(re.compile(r"view=history&period=7d$"))
    expect(modes.get_by_label("History")).to_be_checked()
    period.select_option("custom")
    expect(start).to_be_visible()
    expect(end).to_be_visible()
    start.fill("2020-01-01T00:00:00")
    end.fill("2099-01-01T00:00:00")
    form.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"view=history&period=custom&from=2020-01-01T00"))
    expect(page.locator(badge(page, "Pack", "history-badge"))).to_contain_text("2")
    expect(start).to_be_visible()

    # Back to Now: the tokens again, and the period goes away.
    modes.get_by_label("Now").check()
    expect(page).to_have_url(re.compile(r"/definitions/parallel-approval\?version=1$"))
    expect(page.locator(badge(page, "Pack", "token-badge"))).to_have_text("1")
    for field in (period, start, end):
        expect(field).to_be_hidden()
