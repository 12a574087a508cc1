"""An ended instance's inspector marks every sequence flow taken on the diagram, with a count on
those taken more than once; the definition page switches its heatmap to a period's history."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from engine.builder import ProcessBuilder
from engine.states import InstanceState
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser


def connection(flow_id: str) -> str:
    return f'g.djs-connection[data-element-id="{flow_id}"]'


def test_the_executed_path_and_the_history_heatmap(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    model = (
        ProcessBuilder("browser-path")
        .start_event("start")
        .service_task("count", expression="${n + 1}", result_variable="n")
        .exclusive_gateway("again", default="done")
        .end_event("end")
        .chain("start", "count", "again")
        .flow("again", "count", id="back", condition="${n < 3}")
        .flow("again", "end", id="done")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("browser-path", {"n": 0})
    assert instance.state is InstanceState.COMPLETED

    page = login("viewer")
    page.goto(f"/instances/{instance.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    for flow_id in ("Flow_start_count", "Flow_count_again", "back", "done"):
        expect(page.locator(connection(flow_id))).to_have_class(re.compile(r"\btaken\b"))
    back = page.locator('.djs-overlays[data-container-id="back"] .flow-count-badge')
    expect(back).to_have_text("\u00d72")
    expect(back).to_have_attribute("title", "taken 2 times")
    # The label sits on its flow: its centre inside the flow's bounding box (give or take).
    label, line = back.bounding_box(), page.locator(connection("back")).bounding_box()
    assert label is not None and line is not None
    x, y = label["x"] + label["width"] / 2, label["y"] + label["height"] / 2
    assert line["x"] - 20 <= x <= line["x"] + line["width"] + 20, (label, line)
    assert line["y"] - 20 <= y <= line["y"] + line["height"] + 20, (label, line)
    looped = page.locator('.djs-overlays[data-container-id="Flow_count_again"] .flow-count-badge')
    expect(looped).to_have_text("\u00d73")
    expect(page.locator('.djs-overlays[data-container-id="done"] .flow-count-badge')).to_have_count(
        0
    )

    page.goto("/definitions/browser-path")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    page.locator("#diagram-modes").get_by_label("History").check()
    expect(page).to_have_url(re.compile(r"view=history&period=day"))
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    heat = page.locator('.djs-overlays[data-container-id="count"] .history-badge')
    expect(heat).to_have_text(re.compile(r"^3 · .* · p95 "))
    expect(page.locator('.node-history tr[data-node="count"] [data-col="visits"]')).to_have_text(
        "3"
    )
