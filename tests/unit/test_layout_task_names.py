"""The generated layout sizes each task for its name: widened to wrap a long name in two lines,
heightened so that the name's first line starts below the task-type icon (the browser test
tests/browser/test_diagram_badges.py measures the drawn text and icon)."""

from __future__ import annotations

from engine.bpmn import write_bpmn
from engine.bpmn.diagram import generated_diagram
from engine.bpmn.layout import TASK, TASK_ICON_CLEAR, TASK_LINE, task_size, wrapped_lines
from engine.builder import ProcessBuilder
from tests.unit.test_layout import Diagram

# The lowest point of bpmn-js's task-type icons (the user icon's), in diagram units.
ICON_BOTTOM = 24.0


def first_line_top(height: float, lines: int) -> float:
    return height / 2 - lines * TASK_LINE / 2


def test_a_short_name_keeps_camunda_modelers_size() -> None:
    assert task_size("Ship order") == TASK
    assert task_size(None) == TASK
    assert task_size("  ") == TASK


def test_a_long_name_widens_the_task_to_two_lines_below_the_icon() -> None:
    width, height = task_size("Approve the order for shipping")
    assert width > TASK[0]
    assert wrapped_lines("Approve the order for shipping", width - 10) <= 2
    assert first_line_top(height, 2) >= ICON_BOTTOM


def test_a_very_long_name_makes_the_widest_task_taller() -> None:
    name = "Write the invoice and send it to the customer by mail before the end of the day"
    width, height = task_size(name)
    lines = wrapped_lines(name, width - 10)
    assert width == 160 and lines > 2
    assert first_line_top(height, lines) >= TASK_ICON_CLEAR - 0.5 > ICON_BOTTOM


def test_wrapping_counts_every_line_a_long_word_takes() -> None:
    assert wrapped_lines("a", 90) == 1
    assert wrapped_lines("Check order", 90) == 1
    assert wrapped_lines("W" * 20, 90) == 3
    assert wrapped_lines("Approve the order for shipping", 90) == 3


def test_the_generated_diagram_draws_tasks_at_their_size() -> None:
    model = (
        ProcessBuilder("sized")
        .start_event("Start")
        .user_task("Short", "Pack")
        .user_task("Long", "Approve the order for shipping")
        .end_event("End")
        .chain("Start", "Short", "Long", "End")
        .build()
    )
    xml = generated_diagram(write_bpmn([model]))
    assert xml is not None
    shapes = Diagram(xml).shapes
    assert (shapes["Short"].w, shapes["Short"].h) == TASK
    assert (shapes["Long"].w, shapes["Long"].h) == task_size("Approve the order for shipping")
    # Centres on one line: the taller task does not bend the flow.
    assert shapes["Short"].cy == shapes["Long"].cy
