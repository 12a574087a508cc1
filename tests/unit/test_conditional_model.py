"""conditionalEventDefinition read from Camunda Modeler files and built in Python: one model
either way; what is wrong with one is refused naming the file, the line and the element."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.language.expressions import compile_expression
from engine.model import (
    BoundaryEvent,
    ConditionalTrigger,
    IntermediateCatchEvent,
    ProcessModel,
    StartEvent,
    triggers,
)
from tests.unit.test_bpmn_parser import definitions, line_of, rejected
from tests.unit.test_event_gateway_model import ENDS, GATEWAY, MESSAGE, SIGNAL, START, flow
from tests.unit.test_event_gateway_model import document as gateway_document

FILE = Path(__file__).parent.parent / "data" / "bpmn" / "order_conditions.bpmn"


def order_watch() -> ProcessModel:
    """The builder twin of tests/data/bpmn/order_conditions.bpmn."""
    return (
        ProcessBuilder("order_conditions", "Order watch")
        .start_event("StartEvent_Order", "Order placed")
        .user_task("Task_Review", "Review order")
        .intermediate_catch_event("Event_InStock", "In stock")
        .conditional("Event_InStock", "${stock >= amount}")
        .end_event("EndEvent_Shipped", "Shipped")
        .boundary_event("Event_Cancelled", "Task_Review", "Cancelled")
        .conditional("Event_Cancelled", "${cancelled == true}", variable_name="cancelled")
        .end_event("EndEvent_Cancelled", "Order cancelled")
        .sub_process("SubProcess_Notes", "Customer notes", triggered_by_event=True)
        .start_event("StartEvent_Note", "Note added", parent="SubProcess_Notes", interrupting=False)
        .conditional(
            "StartEvent_Note",
            "${note != null}",
            variable_name="note",
            variable_events=["create", "update"],
        )
        .user_task("Task_ReadNote", "Read note", parent="SubProcess_Notes")
        .end_event("EndEvent_NoteRead", "Note read", parent="SubProcess_Notes")
        .flow("StartEvent_Order", "Task_Review", id="Flow_ToReview")
        .flow("Task_Review", "Event_InStock", id="Flow_ToStock")
        .flow("Event_InStock", "EndEvent_Shipped", id="Flow_ToShipped")
        .flow("Event_Cancelled", "EndEvent_Cancelled", id="Flow_ToCancelled")
        .flow("StartEvent_Note", "Task_ReadNote", id="Flow_ToReadNote")
        .flow("Task_ReadNote", "EndEvent_NoteRead", id="Flow_ToNoteRead")
        .build()
    )


def test_the_modeler_file_the_builder_and_the_written_file_are_one_model() -> None:
    [parsed] = parse_bpmn(FILE.read_bytes(), FILE.name)
    assert parsed == order_watch()
    [again] = parse_bpmn(write_bpmn([parsed]), "written.bpmn")
    assert again == parsed
    catch = parsed.node("Event_InStock")
    assert isinstance(catch, IntermediateCatchEvent)
    assert catch.conditional == ConditionalTrigger(
        condition=compile_expression("${stock >= amount}")
    )
    assert triggers(catch) == ("conditional",)
    boundary = parsed.node("Event_Cancelled")
    assert isinstance(boundary, BoundaryEvent) and boundary.conditional is not None
    assert boundary.conditional.variable_name == "cancelled"
    start = parsed.node("StartEvent_Note")
    assert isinstance(start, StartEvent) and start.conditional is not None
    assert not start.is_none_start and not start.interrupting
    assert start.conditional.variable_events == ("create", "update")


def test_listens_to_follows_variable_name_and_events() -> None:
    trigger = ConditionalTrigger(
        condition=compile_expression("${x}"), variable_name="x", variable_events=("delete",)
    )
    assert trigger.listens_to("x", "delete")
    assert not trigger.listens_to("x", "update")
    assert not trigger.listens_to("y", "delete")
    anything = ConditionalTrigger(condition=compile_expression("${x}"))
    assert all(anything.listens_to(name, c) for name in "xy" for c in ("create", "delete"))


def catch_with(definition: str) -> str:
    return definitions(
        '  <bpmn:process id="p" isExecutable="true">\n'
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:intermediateCatchEvent id="wait">\n'
        f"      {definition}\n"
        "    </bpmn:intermediateCatchEvent>\n"
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />\n'
        "  </bpmn:process>"
    )


CONDITION = '<bpmn:condition xsi:type="bpmn:tFormalExpression">{}</bpmn:condition>'


@pytest.mark.parametrize(
    ("definition", "snippet", "fragment"),
    [
        (
            "<bpmn:conditionalEventDefinition />",
            "<bpmn:conditionalEventDefinition />",
            "a conditional event needs a condition",
        ),
        (
            "<bpmn:conditionalEventDefinition>"
            + CONDITION.format("${x ==}")
            + "</bpmn:conditionalEventDefinition>",
            "<bpmn:condition ",
            "invalid condition of conditional event 'wait'",
        ),
        (
            "<bpmn:conditionalEventDefinition>"
            + CONDITION.format("x == 1")
            + "</bpmn:conditionalEventDefinition>",
            "<bpmn:condition ",
            "must be a ${} expression",
        ),
        (
            "<bpmn:conditionalEventDefinition>"
            + CONDITION.format(" ")
            + "</bpmn:conditionalEventDefinition>",
            "<bpmn:condition ",
            "the condition of a conditional event is empty",
        ),
        (
            '<bpmn:conditionalEventDefinition camunda:variableEvents="create, change">'
            + CONDITION.format("${x}")
            + "</bpmn:conditionalEventDefinition>",
            "<bpmn:conditionalEventDefinition ",
            "camunda:variableEvents must list create, update or delete, not 'create, change'",
        ),
        (
            '<bpmn:conditionalEventDefinition camunda:variableName="${x}">'
            + CONDITION.format("${x}")
            + "</bpmn:conditionalEventDefinition>",
            "<bpmn:conditionalEventDefinition ",
            "camunda:variableName must name a variable",
        ),
    ],
)
def test_a_bad_conditional_event_is_refused_with_file_line_and_element(
    definition: str, snippet: str, fragment: str
) -> None:
    text = catch_with(definition)
    error = rejected(text, "orders/watch.bpmn")
    assert fragment in str(error)
    assert (error.file, error.line, error.element_id) == (
        "orders/watch.bpmn",
        line_of(text, snippet),
        "wait",
    )


@pytest.mark.parametrize(
    ("kind", "extra"), [("startEvent", ""), ("boundaryEvent", ' attachedToRef="t"')]
)
def test_a_start_or_boundary_event_without_a_condition_is_refused(kind: str, extra: str) -> None:
    snippet = f'<bpmn:{kind} id="n"{extra}><bpmn:conditionalEventDefinition /></bpmn:{kind}>'
    text = definitions(
        '  <bpmn:process id="p" isExecutable="true">\n'
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:endEvent id="end" />\n'
        f"    {snippet}\n"
        '    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end" />\n'
        "  </bpmn:process>"
    )
    error = rejected(text, "orders/bad.bpmn")
    assert "a conditional event needs a condition" in str(error)
    assert (error.file, error.line, error.element_id) == (
        "orders/bad.bpmn",
        line_of(text, snippet),
        "n",
    )


def test_the_builder_refuses_what_the_parser_refuses() -> None:
    builder = ProcessBuilder("p").start_event("s").intermediate_catch_event("c")
    with pytest.raises(ModelError, match="condition"):
        builder.conditional("c", "${x ==}")
    with pytest.raises(ModelError, match="create, update or delete"):
        builder.conditional("c", "${x}", variable_events=["change"])
    with pytest.raises(ModelError, match="only a start, catch or boundary event"):
        ProcessBuilder("p").user_task("t").conditional("t", "${x}")


def test_a_conditional_catch_event_may_follow_an_event_based_gateway() -> None:
    """Once refused as unsupported; now one of the gateway's events, as in Camunda 7."""
    text = gateway_document(
        START
        + GATEWAY
        + MESSAGE
        + SIGNAL
        + '    <bpmn:intermediateCatchEvent id="late"><bpmn:conditionalEventDefinition>'
        '<bpmn:condition xsi:type="bpmn:tFormalExpression">${x}</bpmn:condition>'
        "</bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>\n"
        + flow("gw_pay", "gw", "pay")
        + flow("gw_late", "gw", "late")
        + flow("gw_stop", "gw", "stop")
        + flow("stop_end", "stop", "end")
        + ENDS
    )
    [model] = parse_bpmn(text, "orders/gateway.bpmn")
    late = model.node("late")
    assert isinstance(late, IntermediateCatchEvent) and late.conditional is not None
    assert model.follows_event_gateway("late")
