"""A model without diagram layout, built in Python or written by hand, is drawn from the layout
generated at deployment: left to right, the branches of a split side by side, readable at the
default zoom."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer

pytestmark = pytest.mark.browser

HANDWRITTEN = Path(__file__).parent.parent / "data" / "bpmn" / "handwritten_dispatch.bpmn"

# Each shape's box on screen, by element id (labels and flows left out).
SHAPES = """() => Object.fromEntries(
  [...document.querySelectorAll('#diagram .djs-element.djs-shape')].map((node) => {
    const box = node.getBoundingClientRect();
    return [node.dataset.elementId, [box.left, box.top, box.width, box.height]];
  }))"""


def three_way_review() -> ProcessModel:
    return (
        ProcessBuilder("three-way-review", name="Three-way review")
        .start_event("Start", "Submitted")
        .parallel_gateway("Split", "Split")
        .user_task("Legal", "Legal review")
        .user_task("Finance", "Finance review")
        .user_task("Security", "Security review")
        .parallel_gateway("Join", "Join")
        .user_task("Decide", "Decide")
        .end_event("End", "Decided")
        .chain("Start", "Split")
        .chain("Split", "Legal", "Join")
        .chain("Split", "Finance", "Join")
        .chain("Split", "Security", "Join")
        .chain("Join", "Decide", "End")
        .build()
    )


def check_geometry(page: Page, branches: tuple[str, str, str]) -> None:
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(diagram).to_have_attribute("data-layout", "generated")
    shapes: dict[str, list[float]] = page.evaluate(SHAPES)
    tasks = [shapes[key] for key in branches]
    lefts = [left for left, _, _, _ in tasks]
    rights = [left + width for left, _, width, _ in tasks]
    assert max(lefts) - min(lefts) < 1 and max(rights) - min(rights) < 1, tasks
    ordered = sorted(tasks, key=lambda box: box[1])
    for above, below in zip(ordered, ordered[1:], strict=False):
        assert above[1] + above[3] < below[1], "the branches overlap in y"
    for _, _, width, _ in tasks:
        assert width >= 80, f"a task is {width:.0f} px wide at the default zoom"
    top = min(box[1] for box in shapes.values())
    bottom = max(box[1] + box[3] for box in shapes.values())
    left = min(box[0] for box in shapes.values())
    right = max(box[0] + box[2] for box in shapes.values())
    assert right - left > bottom - top, "the diagram is taller than wide"
    expect(page.locator(".bjs-powered-by")).to_be_visible()
    expect(page.locator("#diagram-error")).to_be_hidden()


def test_a_python_built_model_is_drawn_left_to_right(console: ConsoleServer, login: Login) -> None:
    console.engine.deploy(three_way_review())
    handle = console.engine.start_latest("three-way-review")
    page = login("viewer")
    page.goto(f"/instances/{handle.id}")
    check_geometry(page, ("Legal", "Finance", "Security"))
    expect(page.locator('.djs-overlays[data-container-id="Finance"] .token-badge')).to_have_text(
        "1"
    )
    page.goto("/definitions/three-way-review")
    check_geometry(page, ("Legal", "Finance", "Security"))


def test_a_hand_written_file_is_drawn_left_to_right(console: ConsoleServer, login: Login) -> None:
    console.engine.deploy(HANDWRITTEN)
    handle = console.engine.start_latest("handwritten_dispatch")
    page = login("viewer")
    page.goto(f"/instances/{handle.id}")
    check_geometry(page, ("Pick", "PrintLabel", "Notify"))
    expect(page.locator('.djs-overlays[data-container-id="Pick"] .token-badge')).to_have_text("1")
    # The expanded subprocess holds its task, and the boundary timer sits on its bottom edge.
    shapes: dict[str, list[float]] = page.evaluate(SHAPES)
    ship, hand_over, late = shapes["Ship"], shapes["HandOver"], shapes["Late"]
    assert ship[0] < hand_over[0] and hand_over[0] + hand_over[2] < ship[0] + ship[2]
    assert ship[1] < hand_over[1] and hand_over[1] + hand_over[3] < ship[1] + ship[3]
    assert abs(late[1] + late[3] / 2 - (ship[1] + ship[3])) < 1
