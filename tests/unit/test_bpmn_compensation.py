"""Compensation in BPMN files and built models: compensation boundary events with their handlers
(by association), throw and end events with and without activityRef and waitForCompletion,
compensation event subprocesses, and the deployment errors (file, line, element) of models that
get them wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.model import (
    BoundaryEvent,
    CompensateThrow,
    EndEvent,
    IntermediateThrowEvent,
    ServiceTask,
    StartEvent,
    triggers,
)

EXAMPLES = Path(__file__).parent.parent.parent / "examples"

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '  <bpmn:process id="p" isExecutable="true">\n'
)
TAIL = "\n  </bpmn:process>\n</bpmn:definitions>\n"

# book -> throw -> end; book's compensation boundary leads to the handler `undo`.
BOOKED = (
    '    <bpmn:startEvent id="start" />\n'
    '    <bpmn:serviceTask id="book" camunda:class="Book" />\n'
    '    <bpmn:boundaryEvent id="booked" attachedToRef="book">'
    "<bpmn:compensateEventDefinition /></bpmn:boundaryEvent>\n"
    '    <bpmn:serviceTask id="undo" isForCompensation="true" camunda:class="Undo" />\n'
    '    <bpmn:association id="a1" sourceRef="booked" targetRef="undo" />\n'
    '    <bpmn:intermediateThrowEvent id="throw">{definition}</bpmn:intermediateThrowEvent>\n'
    '    <bpmn:endEvent id="end" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="book" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="book" targetRef="throw" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="throw" targetRef="end" />'
)


def parsed(body: str) -> dict[str, object]:
    [model] = parse_bpmn(f"{HEAD}{body}{TAIL}", "trip.bpmn")
    return {node.id: node for node in model.nodes}


def refused(body: str, needle: str) -> ModelError:
    """The deployment error of `body`, which must name the line where `needle` is."""
    text = f"{HEAD}{body}{TAIL}"
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "trip.bpmn")
    error = caught.value
    assert error.file == "trip.bpmn"
    assert error.line == text.count("\n", 0, text.index(needle)) + 1
    return error


def test_a_boundary_event_leads_to_its_handler_by_association() -> None:
    nodes = parsed(BOOKED.format(definition="<bpmn:compensateEventDefinition />"))
    boundary, handler, throw = nodes["booked"], nodes["undo"], nodes["throw"]
    assert isinstance(boundary, BoundaryEvent)
    assert (boundary.is_compensation, boundary.compensate_handler) == (True, "undo")
    assert triggers(boundary) == ("compensation",)
    assert isinstance(handler, ServiceTask) and handler.is_for_compensation
    assert isinstance(throw, IntermediateThrowEvent)
    assert throw.compensation == CompensateThrow(activity_ref=None, wait_for_completion=True)


def test_a_throw_reads_activity_ref_and_wait_for_completion() -> None:
    definition = '<bpmn:compensateEventDefinition activityRef="book" waitForCompletion="false" />'
    throw = parsed(BOOKED.format(definition=definition))["throw"]
    assert isinstance(throw, IntermediateThrowEvent)
    assert throw.compensation == CompensateThrow(activity_ref="book", wait_for_completion=False)


def test_a_compensation_end_event_throws_compensation() -> None:
    body = BOOKED.format(definition="").replace(
        '<bpmn:endEvent id="end" />',
        '<bpmn:endEvent id="end"><bpmn:compensateEventDefinition activityRef="book" />'
        "</bpmn:endEvent>",
    )
    end = parsed(body)["end"]
    assert isinstance(end, EndEvent)
    assert end.compensation == CompensateThrow(activity_ref="book")


def test_the_saga_example_reads_as_drawn_in_the_modeler() -> None:
    [model] = parse_bpmn((EXAMPLES / "saga.bpmn").read_bytes(), "saga.bpmn")
    handlers = {
        node.attached_to: node.compensate_handler
        for node in model.nodes
        if isinstance(node, BoundaryEvent) and node.is_compensation
    }
    assert handlers == {
        "Task_BookHotel": "Task_CancelHotel",
        "Task_BookFlight": "Task_CancelFlight",
    }
    undo = model.node("Event_UndoBookings")
    assert isinstance(undo, IntermediateThrowEvent) and undo.compensation == CompensateThrow()


def test_a_built_model_is_written_and_read_back_the_same() -> None:
    b = ProcessBuilder("trip")
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    b.service_task("hotel", handler="book", parent="trip")
    b.service_task("cancel_hotel", handler="cancel", parent="trip")
    b.compensation_boundary("hotel_done", "hotel", "cancel_hotel")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "trip_end")
    b.sub_process("undo_trip", parent="trip", triggered_by_event=True)
    b.compensation_start("undo_start", parent="undo_trip")
    b.compensation_throw("undo_inner", parent="undo_trip", end=True)
    b.chain("undo_start", "undo_inner")
    b.compensation_throw("undo", activity="trip", wait_for_completion=False, end=True)
    b.chain("start", "trip", "undo")
    model = b.build()
    [again] = parse_bpmn(write_bpmn([model]), "written.bpmn")
    assert again == model
    start = again.node("undo_start")
    assert isinstance(start, StartEvent) and start.is_compensation and not start.is_none_start


def handler_wired(body: str) -> str:
    return body.replace(
        '<bpmn:serviceTask id="undo" isForCompensation="true" camunda:class="Undo" />',
        '<bpmn:serviceTask id="undo" isForCompensation="true" camunda:class="Undo">'
        "<bpmn:outgoing>f4</bpmn:outgoing></bpmn:serviceTask>\n"
        '    <bpmn:sequenceFlow id="f4" sourceRef="undo" targetRef="end" />',
    )


REFUSED = [
    (
        "a handler with sequence flows",
        handler_wired(BOOKED.format(definition="")),
        '<bpmn:serviceTask id="undo"',
        "undo",
        "a compensation handler (isForCompensation) cannot have sequence flows",
    ),
    (
        "a boundary event without an association",
        BOOKED.format(definition="").replace(
            '    <bpmn:association id="a1" sourceRef="booked" targetRef="undo" />\n', ""
        ),
        '<bpmn:boundaryEvent id="booked"',
        "booked",
        "a compensation boundary event needs an association to its compensation handler",
    ),
    (
        "an association to an activity that is not for compensation",
        BOOKED.format(definition="").replace(' isForCompensation="true"', ""),
        '<bpmn:boundaryEvent id="booked"',
        "booked",
        "the compensation handler 'undo' must be an activity with isForCompensation",
    ),
    (
        "an association to nothing",
        BOOKED.format(definition="").replace('targetRef="undo" />', 'targetRef="nowhere" />'),
        '<bpmn:association id="a1"',
        "booked",
        "association targetRef 'nowhere' names no activity of this process",
    ),
    (
        "an activityRef naming no activity of the scope",
        BOOKED.format(definition='<bpmn:compensateEventDefinition activityRef="ghost" />'),
        '<bpmn:intermediateThrowEvent id="throw"',
        "throw",
        "activityRef 'ghost' names no activity in the process",
    ),
    (
        "an activityRef naming an activity of another scope",
        BOOKED.format(definition='<bpmn:compensateEventDefinition activityRef="inner" />')
        + '\n    <bpmn:subProcess id="sub" isForCompensation="true">'
        '<bpmn:startEvent id="s" /><bpmn:task id="inner" /><bpmn:endEvent id="e" />'
        '<bpmn:sequenceFlow id="g1" sourceRef="s" targetRef="inner" />'
        '<bpmn:sequenceFlow id="g2" sourceRef="inner" targetRef="e" /></bpmn:subProcess>',
        '<bpmn:intermediateThrowEvent id="throw"',
        "throw",
        "activityRef 'inner' names no activity in the process",
    ),
    (
        "a compensation start event at process level",
        '    <bpmn:startEvent id="n"><bpmn:compensateEventDefinition /></bpmn:startEvent>\n'
        '    <bpmn:startEvent id="start" /><bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />',
        '<bpmn:startEvent id="n"',
        "n",
        "a compensation start event belongs in an event subprocess",
    ),
    (
        "a compensation event subprocess at process level",
        '    <bpmn:startEvent id="start" /><bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />\n'
        '    <bpmn:subProcess id="esp" triggeredByEvent="true">'
        '<bpmn:startEvent id="c"><bpmn:compensateEventDefinition /></bpmn:startEvent>'
        '<bpmn:endEvent id="ce" /><bpmn:sequenceFlow id="g" sourceRef="c" targetRef="ce" />'
        "</bpmn:subProcess>",
        '<bpmn:subProcess id="esp"',
        "esp",
        "a compensation event subprocess belongs in an embedded subprocess",
    ),
    (
        "a compensation boundary event on a missing activity",
        '    <bpmn:startEvent id="start" /><bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />\n'
        '    <bpmn:boundaryEvent id="n" attachedToRef="t">'
        "<bpmn:compensateEventDefinition /></bpmn:boundaryEvent>",
        '<bpmn:boundaryEvent id="n"',
        "n",
        "attachedToRef 't' names no task or subprocess",
    ),
    (
        "two compensation boundary events on one activity",
        BOOKED.format(definition="").replace(
            '    <bpmn:association id="a1"',
            '    <bpmn:boundaryEvent id="booked2" attachedToRef="book">'
            "<bpmn:compensateEventDefinition /></bpmn:boundaryEvent>\n"
            '    <bpmn:association id="a1"',
        ),
        '<bpmn:boundaryEvent id="booked2"',
        "booked2",
        "an activity can have at most one compensation boundary event",
    ),
]


@pytest.mark.parametrize(
    ("body", "needle", "element_id", "message"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_invalid_compensation_is_refused_naming_file_line_and_element(
    body: str, needle: str, element_id: str, message: str
) -> None:
    error = refused(body, needle)
    assert error.element_id == element_id
    assert message in str(error)
    assert f"trip.bpmn, line {error.line}, element '{element_id}'" in str(error)


def test_a_subprocess_cannot_have_both_a_compensation_event_subprocess_and_boundary() -> None:
    b = ProcessBuilder("both")
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "trip_end")
    b.sub_process("undo_trip", parent="trip", triggered_by_event=True)
    b.compensation_start("undo_start", parent="undo_trip")
    b.end_event("undo_end", parent="undo_trip")
    b.chain("undo_start", "undo_end")
    b.task("cancel")
    b.compensation_boundary("trip_done", "trip", "cancel")
    b.end_event("end")
    b.chain("start", "trip", "end")
    with pytest.raises(ModelError, match="both a compensation event subprocess") as caught:
        b.build()
    assert caught.value.element_id == "undo_trip"
