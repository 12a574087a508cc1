"""Subprocesses, boundary events, catch events, receive tasks, signals, errors, retry cycles."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn
from engine.bpmn.reading import IGNORED_EXTENSIONS, REJECTED_EXTENSIONS
from engine.errors import ModelError
from engine.language.forms import FormField
from engine.model import (
    ACTIVITY_TYPES,
    BoundaryEvent,
    EndEvent,
    ExclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ProcessModel,
    ReceiveTask,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    SubProcess,
    TimerDefinition,
    UserTask,
    triggers,
)
from engine.model.validation import validate
from tests.unit.test_bpmn_parser import HEAD, line_of

DATA = Path(__file__).parent.parent / "data" / "bpmn"

REFS = (
    '  <bpmn:message id="m" name="Go" />\n'
    '  <bpmn:message id="nameless" />\n'
    '  <bpmn:signal id="sig" name="Alarm" />\n'
    '  <bpmn:signal id="mute" />\n'
    '  <bpmn:error id="err" name="Failed" errorCode="E42" />\n'
    '  <bpmn:error id="nocode" name="No code" />\n'
)


def document(body: str) -> str:
    """`body` as the content of process "p", with messages, signals and errors to refer to."""
    process = f'  <bpmn:process id="p" isExecutable="true">\n{body}\n  </bpmn:process>\n'
    return f"{HEAD}{REFS}{process}</bpmn:definitions>\n"


def around(node: str) -> str:
    """`node` (id "n") between a start and an end event."""
    return document(
        '    <bpmn:startEvent id="start" />\n'
        f"    {node}\n"
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />'
    )


def on_task(boundary: str, extra: str = "") -> str:
    """Task "t" between start and end; `boundary` (id "b") leads to end event "e2" by flow "fb"."""
    return document(
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:task id="t" />\n'
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:endEvent id="e2" />\n'
        f"    {boundary}\n"
        f"{extra}"
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="t" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="end" />\n'
        '    <bpmn:sequenceFlow id="fb" sourceRef="b" targetRef="e2" />'
    )


def in_subprocess(content: str, outside: str = "") -> str:
    """Subprocess "sub" between start and end, holding `content`."""
    return document(
        '    <bpmn:startEvent id="start" />\n'
        f'    <bpmn:subProcess id="sub">\n{content}\n    </bpmn:subProcess>\n'
        '    <bpmn:endEvent id="end" />\n'
        f"{outside}"
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="sub" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="end" />'
    )


SIMPLE_CONTENT = (
    '      <bpmn:startEvent id="s_in" />\n'
    '      <bpmn:endEvent id="e_in" />\n'
    '      <bpmn:sequenceFlow id="g1" sourceRef="s_in" targetRef="e_in" />'
)


def event_subprocess(start: str, attributes: str = "") -> str:
    """An event subprocess "esp" at process level whose start event is `start` (id "es")."""
    return document(
        '    <bpmn:startEvent id="start" />\n'
        '    <bpmn:endEvent id="end" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />\n'
        f'    <bpmn:subProcess id="esp" triggeredByEvent="true"{attributes}>\n'
        f"      {start}\n"
        '      <bpmn:endEvent id="ee" />\n'
        '      <bpmn:sequenceFlow id="g1" sourceRef="es" targetRef="ee" />\n'
        "    </bpmn:subProcess>"
    )


def parse_one(text: str) -> ProcessModel:
    models = parse_bpmn(text, "test.bpmn")
    assert len(models) == 1
    return models[0]


def rejected(text: str) -> ModelError:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "bad.bpmn")
    assert caught.value.file == "bad.bpmn"
    return caught.value


# --- the fixtures ------------------------------------------------------------------------------


def test_subprocess_with_error_boundary_and_event_subprocesses() -> None:
    text = (DATA / "claim_handling.bpmn").read_text()
    model = parse_one(text)
    assert (model.key, model.version_tag) == ("claim_handling", "3")
    assess = model.node("Activity_Assess")
    assert assess == SubProcess(
        id="Activity_Assess",
        name="Assess claim",
        incoming=("Flow_ToAssess",),
        outgoing=("Flow_ToPay",),
        async_before=True,
    )
    assert assess.line == line_of(text, 'id="Activity_Assess"')
    assert {n.id for n in model.children("Activity_Assess")} == {
        "StartEvent_Assess",
        "Task_Score",
        "Gateway_Fraud",
        "EndEvent_Assessed",
        "EndEvent_Fraud",
        "Activity_Reminder",
    }
    assert model.none_start_of("Activity_Assess").id == "StartEvent_Assess"
    assert model.none_start.id == "StartEvent_Claim"
    assert model.node("EndEvent_Fraud") == EndEvent(
        id="EndEvent_Fraud",
        name="Fraud suspected",
        incoming=("Flow_Fraud",),
        parent="Activity_Assess",
        is_error=True,
        error_code="FRAUD",
    )
    assert model.boundary_events("Activity_Assess") == (
        BoundaryEvent(
            id="Event_FraudFound",
            name="Fraud",
            outgoing=("Flow_ToInvestigate",),
            attached_to="Activity_Assess",
            is_error=True,
            error_code="FRAUD",
        ),
    )
    # The nested event subprocess: a non-interrupting timer cycle, two levels down.
    assert [sp.id for sp in model.event_subprocesses("Activity_Assess")] == ["Activity_Reminder"]
    assert model.node("Activity_Reminder").parent == "Activity_Assess"
    assert model.node("StartEvent_Reminder") == StartEvent(
        id="StartEvent_Reminder",
        name="Every 4 hours",
        outgoing=("Flow_ToRemind",),
        parent="Activity_Reminder",
        timer=TimerDefinition(kind="cycle", text="R/PT4H"),
        interrupting=False,
    )
    assert model.node("Task_Remind").parent == "Activity_Reminder"
    assert model.flow("Flow_ToRemind").source == "StartEvent_Reminder"
    # Process-level event subprocesses: a non-interrupting message and a catch-all error.
    assert [sp.id for sp in model.event_subprocesses(None)] == [
        "Activity_AddressChanged",
        "Activity_Failure",
    ]
    address = model.node("StartEvent_AddressChanged")
    assert isinstance(address, StartEvent)
    assert (address.message_name, address.interrupting, address.is_none_start) == (
        "AddressChanged",
        False,
        False,
    )
    assert model.node("StartEvent_AnyError") == StartEvent(
        id="StartEvent_AnyError",
        name="Any error",
        outgoing=("Flow_ToAlert",),
        parent="Activity_Failure",
        is_error=True,
    )
    failed = model.node("EndEvent_Failed")
    assert isinstance(failed, EndEvent) and failed.terminate and failed.parent == "Activity_Failure"
    condition = model.flow("Flow_Fraud").condition
    assert condition is not None and condition.evaluate({"score": 95}) is True
    assert model.node("Task_Investigate").parent is None


def test_user_task_with_timer_boundaries() -> None:
    model = parse_one((DATA / "document_review.bpmn").read_text())
    assert model.node("Event_CoolOff") == IntermediateCatchEvent(
        id="Event_CoolOff",
        name="Cooling-off period",
        incoming=("Flow_ToCoolOff",),
        outgoing=("Flow_ToReview",),
        timer=TimerDefinition(kind="duration", text="${coolOff}"),
    )
    deadline, reminder = model.boundary_events("Task_Review")
    assert deadline == BoundaryEvent(
        id="Event_Deadline",
        name="2 days",
        outgoing=("Flow_ToEscalate",),
        attached_to="Task_Review",
        timer=TimerDefinition(kind="duration", text="P2D"),
    )
    assert reminder == BoundaryEvent(
        id="Event_Reminder",
        name="Every 4 hours, 3 times",
        outgoing=("Flow_ToSendReminder",),
        attached_to="Task_Review",
        cancel_activity=False,
        timer=TimerDefinition(kind="cycle", text="R3/PT4H"),
    )
    review = model.node("Task_Review")
    assert isinstance(review, UserTask) and review.due_date == "P2D"


def test_messages_and_signals() -> None:
    model = parse_one((DATA / "shipment_tracking.bpmn").read_text())
    recall = model.node("StartEvent_Recall")
    assert isinstance(recall, StartEvent)
    assert (recall.signal_name, recall.is_none_start) == ("ProductRecall", False)
    assert model.none_start.id == "StartEvent_Order"
    assert model.node("Task_AwaitPayment") == ReceiveTask(
        id="Task_AwaitPayment",
        name="Await payment",
        incoming=("Flow_ToPayment",),
        outgoing=("Flow_ToDispatched",),
        message_name="PaymentReceived",
    )
    dispatched = model.node("Event_Dispatched")
    assert isinstance(dispatched, IntermediateCatchEvent)
    assert triggers(dispatched) == ("message",) and dispatched.message_name == "ShipmentDispatched"
    customs = model.node("Event_Customs")
    assert isinstance(customs, IntermediateCatchEvent) and customs.signal_name == "CustomsCleared"
    assert model.node("Event_Delivered") == IntermediateThrowEvent(
        id="Event_Delivered",
        name="Parcel delivered",
        incoming=("Flow_ToDelivered",),
        outgoing=("Flow_ToDone",),
        signal_name="ParcelDelivered",
    )
    cancelled, storm = model.boundary_events("Task_Track")
    assert (cancelled.message_name, cancelled.cancel_activity) == ("OrderCancelled", True)
    assert (storm.signal_name, storm.cancel_activity) == ("StormWarning", False)


def test_retry_cycles_and_ignored_extensions() -> None:
    model = parse_one((DATA / "payment_retry.bpmn").read_text())
    charge = model.node("Task_Charge")
    assert isinstance(charge, ServiceTask)
    assert (charge.retry_cycle, charge.async_before, charge.topic) == (
        "R5/PT10M",
        True,
        "charge-card",
    )
    assert model.node("Event_Settle").retry_cycle == "R2/PT30S"  # stripped
    assert model.node("Task_Receipt").retry_cycle == "R3/2026-01-01T00:00:00Z/PT1M"
    assert model.node("Task_Confirm").retry_cycle is None
    assert model.node("StartEvent_Payment") == StartEvent(
        id="StartEvent_Payment",
        name="Payment due",
        outgoing=("Flow_ToCharge",),
        form_fields=(FormField(id="amount", label="Amount", type="long"),),
    )


def test_extension_lists_do_not_overlap() -> None:
    assert not IGNORED_EXTENSIONS & REJECTED_EXTENSIONS
    assert {"properties", "formData"} <= IGNORED_EXTENSIONS
    assert {"field", "connector"} <= REJECTED_EXTENSIONS
    # Listeners and input/output parameters run: neither ignored nor refused as a whole.
    listed = IGNORED_EXTENSIONS | REJECTED_EXTENSIONS
    assert not {"executionListener", "taskListener", "inputOutput"} & listed


# --- elements one by one -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (
            '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition><bpmn:timeDate>'
            "2026-01-01T00:00:00Z</bpmn:timeDate></bpmn:timerEventDefinition>"
            "</bpmn:intermediateCatchEvent>",
            IntermediateCatchEvent(
                id="n", timer=TimerDefinition(kind="date", text="2026-01-01T00:00:00Z")
            ),
        ),
        (
            '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition><bpmn:timeCycle>'
            "${every}</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>",
            IntermediateCatchEvent(id="n", timer=TimerDefinition(kind="cycle", text="${every}")),
        ),
        (
            '<bpmn:intermediateCatchEvent id="n" name="Wait">'
            '<bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>',
            IntermediateCatchEvent(id="n", name="Wait", message_name="Go"),
        ),
        (
            '<bpmn:intermediateCatchEvent id="n"><bpmn:signalEventDefinition signalRef="sig" />'
            "</bpmn:intermediateCatchEvent>",
            IntermediateCatchEvent(id="n", signal_name="Alarm"),
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition signalRef="sig" '
            'camunda:async="true" /></bpmn:intermediateThrowEvent>',
            IntermediateThrowEvent(id="n", signal_name="Alarm"),
        ),
        (
            '<bpmn:receiveTask id="n" messageRef="m" camunda:asyncBefore="true" />',
            ReceiveTask(id="n", message_name="Go", async_before=True),
        ),
        (
            '<bpmn:receiveTask id="n" messageRef="m" instantiate="false" />',
            ReceiveTask(id="n", message_name="Go"),
        ),
        (
            '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle>'
            "R3/PT5M</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>",
            NoneTask(id="n", retry_cycle="R3/PT5M"),
        ),
        (
            '<bpmn:exclusiveGateway id="n" camunda:asyncBefore="true"><bpmn:extensionElements>'
            "<camunda:failedJobRetryTimeCycle>R/PT1M</camunda:failedJobRetryTimeCycle>"
            "</bpmn:extensionElements></bpmn:exclusiveGateway>",
            ExclusiveGateway(id="n", async_before=True, retry_cycle="R/PT1M"),
        ),
        (
            '<bpmn:userTask id="n"><bpmn:extensionElements><camunda:properties>'
            '<camunda:property name="a" value="b" /></camunda:properties><camunda:formData>'
            '<camunda:formField id="x" type="string" /></camunda:formData>'
            "<camunda:formProperty id='y' />"
            '<other:meta xmlns:other="urn:other-tool"><other:inputOutput /></other:meta>'
            "</bpmn:extensionElements></bpmn:userTask>",
            UserTask(id="n", form_fields=(FormField(id="x"),)),
        ),
    ],
)
def test_each_new_element(node: str, expected: Node) -> None:
    model = parse_one(around(node))
    assert model.node("n") == replace(expected, incoming=("f1",), outgoing=("f2",))


@pytest.mark.parametrize(
    ("boundary", "expected"),
    [
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:timerEventDefinition>'
            "<bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>"
            "</bpmn:boundaryEvent>",
            BoundaryEvent(
                id="b", attached_to="t", timer=TimerDefinition(kind="duration", text="PT1H")
            ),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t" cancelActivity="false">'
            "<bpmn:timerEventDefinition><bpmn:timeCycle>R/PT1H</bpmn:timeCycle>"
            "</bpmn:timerEventDefinition></bpmn:boundaryEvent>",
            BoundaryEvent(
                id="b",
                attached_to="t",
                cancel_activity=False,
                timer=TimerDefinition(kind="cycle", text="R/PT1H"),
            ),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t" cancelActivity="true">'
            '<bpmn:messageEventDefinition messageRef="m" /></bpmn:boundaryEvent>',
            BoundaryEvent(id="b", attached_to="t", message_name="Go"),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t" cancelActivity="false">'
            '<bpmn:signalEventDefinition signalRef="sig" /></bpmn:boundaryEvent>',
            BoundaryEvent(id="b", attached_to="t", cancel_activity=False, signal_name="Alarm"),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t">'
            '<bpmn:errorEventDefinition errorRef="err" /></bpmn:boundaryEvent>',
            BoundaryEvent(id="b", attached_to="t", is_error=True, error_code="E42"),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t">'
            '<bpmn:errorEventDefinition errorRef="nocode" /></bpmn:boundaryEvent>',
            BoundaryEvent(id="b", attached_to="t", is_error=True),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition />'
            "</bpmn:boundaryEvent>",
            BoundaryEvent(id="b", attached_to="t", is_error=True),
        ),
        (
            '<bpmn:boundaryEvent id="b" attachedToRef="t" camunda:asyncAfter="true">'
            "<bpmn:extensionElements><camunda:failedJobRetryTimeCycle>R2/PT1M"
            "</camunda:failedJobRetryTimeCycle></bpmn:extensionElements>"
            '<bpmn:outgoing>fb</bpmn:outgoing><bpmn:errorEventDefinition id="x" />'
            "</bpmn:boundaryEvent>",
            BoundaryEvent(
                id="b", attached_to="t", is_error=True, async_after=True, retry_cycle="R2/PT1M"
            ),
        ),
    ],
)
def test_boundary_events(boundary: str, expected: BoundaryEvent) -> None:
    model = parse_one(on_task(boundary))
    assert model.node("b") == replace(expected, outgoing=("fb",))
    assert model.boundary_events("t") == (model.node("b"),)
    assert model.node("t").outgoing == ("f2",)


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (
            '<bpmn:endEvent id="n"><bpmn:errorEventDefinition errorRef="err" /></bpmn:endEvent>',
            EndEvent(id="n", is_error=True, error_code="E42"),
        ),
        (
            '<bpmn:endEvent id="n"><bpmn:errorEventDefinition /></bpmn:endEvent>',
            EndEvent(id="n", is_error=True),
        ),
        (
            '<bpmn:endEvent id="n"><bpmn:errorEventDefinition errorRef="nocode" /></bpmn:endEvent>',
            EndEvent(id="n", is_error=True),
        ),
    ],
)
def test_error_end_events(end: str, expected: EndEvent) -> None:
    text = document(
        f'<bpmn:startEvent id="s" />{end}<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="n" />'
    )
    assert parse_one(text).node("n") == replace(expected, incoming=("f",))


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (
            '<bpmn:startEvent id="es"><bpmn:errorEventDefinition errorRef="err" />'
            "</bpmn:startEvent>",
            StartEvent(id="es", is_error=True, error_code="E42"),
        ),
        (
            '<bpmn:startEvent id="es" isInterrupting="true"><bpmn:errorEventDefinition />'
            "</bpmn:startEvent>",
            StartEvent(id="es", is_error=True),
        ),
        (
            '<bpmn:startEvent id="es" isInterrupting="false">'
            '<bpmn:messageEventDefinition messageRef="m" /></bpmn:startEvent>',
            StartEvent(id="es", message_name="Go", interrupting=False),
        ),
        (
            '<bpmn:startEvent id="es"><bpmn:messageEventDefinition messageRef="m" />'
            "</bpmn:startEvent>",
            StartEvent(id="es", message_name="Go"),
        ),
        (
            '<bpmn:startEvent id="es" isInterrupting="false"><bpmn:timerEventDefinition>'
            "<bpmn:timeDuration>PT5M</bpmn:timeDuration></bpmn:timerEventDefinition>"
            "</bpmn:startEvent>",
            StartEvent(
                id="es", timer=TimerDefinition(kind="duration", text="PT5M"), interrupting=False
            ),
        ),
        (
            '<bpmn:startEvent id="es"><bpmn:signalEventDefinition signalRef="sig" />'
            "</bpmn:startEvent>",
            StartEvent(id="es", signal_name="Alarm"),
        ),
    ],
)
def test_event_subprocess_starts(start: str, expected: StartEvent) -> None:
    model = parse_one(event_subprocess(start))
    assert model.node("es") == replace(expected, parent="esp", outgoing=("g1",))
    assert model.node("esp") == SubProcess(id="esp", triggered_by_event=True)
    assert model.event_subprocesses(None) == (model.node("esp"),)
    assert model.none_start.id == "start"


def test_signal_start_at_process_level_and_deep_nesting() -> None:
    text = document(
        '<bpmn:startEvent id="s"><bpmn:signalEventDefinition signalRef="sig" /></bpmn:startEvent>'
        '<bpmn:subProcess id="a"><bpmn:startEvent id="a_s" />'
        '<bpmn:subProcess id="b"><bpmn:startEvent id="b_s" />'
        '<bpmn:subProcess id="c"><bpmn:startEvent id="c_s" /><bpmn:userTask id="deep" />'
        '<bpmn:sequenceFlow id="c1" sourceRef="c_s" targetRef="deep" /></bpmn:subProcess>'
        '<bpmn:sequenceFlow id="b1" sourceRef="b_s" targetRef="c" /></bpmn:subProcess>'
        '<bpmn:sequenceFlow id="a1" sourceRef="a_s" targetRef="b" /></bpmn:subProcess>'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="a" />'
    )
    model = parse_one(text)
    assert [model.node(i).parent for i in ("s", "a", "a_s", "b", "b_s", "c", "c_s", "deep")] == [
        None,
        None,
        "a",
        "a",
        "b",
        "b",
        "c",
        "c",
    ]
    assert model.node("c").incoming == ("b1",)
    with pytest.raises(ModelError, match="no none start event"):
        _ = model.none_start
    assert model.none_start_of("c").id == "c_s"


def test_subprocess_incoming_outgoing_children_are_checked() -> None:
    text = in_subprocess(
        "      <bpmn:incoming>f1</bpmn:incoming><bpmn:outgoing>nope</bpmn:outgoing>\n"
        + SIMPLE_CONTENT
    )
    error = rejected(text)
    assert "<outgoing> elements (nope) disagree with the sequence flows (f2)" in str(error)
    assert error.element_id == "sub"


def test_all_activity_kinds_take_boundary_events() -> None:
    kinds = {kind.__name__ for kind in ACTIVITY_TYPES}
    assert kinds == {
        "NoneTask",
        "ServiceTask",
        "ScriptTask",
        "BusinessRuleTask",
        "UserTask",
        "ReceiveTask",
        "SubProcess",
        "CallActivity",
    }
    for activity in (
        '<bpmn:serviceTask id="t" camunda:class="A" />',
        '<bpmn:businessRuleTask id="t" camunda:decisionRef="d" />',
        '<bpmn:scriptTask id="t" scriptFormat="javascript"><bpmn:script>1</bpmn:script>'
        "</bpmn:scriptTask>",
        '<bpmn:userTask id="t" />',
        '<bpmn:manualTask id="t" />',
        '<bpmn:receiveTask id="t" messageRef="m" />',
        f'<bpmn:subProcess id="t">{SIMPLE_CONTENT}</bpmn:subProcess>',
    ):
        text = on_task(
            '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition />'
            "</bpmn:boundaryEvent>"
        ).replace('<bpmn:task id="t" />', activity)
        assert parse_one(text).node("b").parent is None


# --- rejected by the parser --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "snippet", "fragment", "element_id"),
    [
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:inputOutput>'
                '<camunda:inputParameter name="x">${a + }</camunda:inputParameter>'
                "</camunda:inputOutput></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:inputParameter",
            "camunda:inputParameter 'x': ",
            "n",
        ),
        (
            around(
                '<bpmn:serviceTask id="n" camunda:type="external" camunda:topic="t">'
                '<bpmn:extensionElements><camunda:errorEventDefinition expression="${true}" />'
                "</bpmn:extensionElements></bpmn:serviceTask>"
            ),
            "<camunda:errorEventDefinition",
            "camunda:errorEventDefinition is not supported",
            "n",
        ),
        (
            document(
                '<bpmn:extensionElements><camunda:executionListener event="start" />'
                "</bpmn:extensionElements>"
                '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
                '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
            ),
            "<camunda:executionListener",
            "camunda:executionListener needs exactly one of class, expression",
            "p",
        ),
        (
            document(
                '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
                '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"><bpmn:extensionElements>'
                '<camunda:executionListener event="take" /></bpmn:extensionElements>'
                "</bpmn:sequenceFlow>"
            ),
            "<camunda:executionListener",
            "camunda:executionListener needs exactly one of class, expression",
            "f",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:signalEventDefinition '
                'signalRef="sig"><bpmn:extensionElements><camunda:in variables="all" />'
                "</bpmn:extensionElements></bpmn:signalEventDefinition></bpmn:boundaryEvent>"
            ),
            "<camunda:in ",
            "camunda:in is not supported",
            "b",
        ),
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle>'
                "PT5M</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "camunda:failedJobRetryTimeCycle: 'PT5M' is a duration, not a cycle",
            "n",
        ),
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle>'
                "PT1M,PT5M</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "camunda:failedJobRetryTimeCycle: 'PT1M,PT5M'",
            "n",
        ),
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle>'
                "${retries}</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "expressions in camunda:failedJobRetryTimeCycle are not supported",
            "n",
        ),
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle> '
                "</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "camunda:failedJobRetryTimeCycle is empty",
            "n",
        ),
        (
            around(
                '<bpmn:task id="n"><bpmn:extensionElements><camunda:failedJobRetryTimeCycle>'
                "R3/PT5M</camunda:failedJobRetryTimeCycle><camunda:failedJobRetryTimeCycle>"
                "R3/PT5M</camunda:failedJobRetryTimeCycle></bpmn:extensionElements></bpmn:task>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "more than one camunda:failedJobRetryTimeCycle",
            "n",
        ),
        (
            document(
                '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />'
                '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"><bpmn:extensionElements>'
                "<camunda:failedJobRetryTimeCycle>R3/PT5M</camunda:failedJobRetryTimeCycle>"
                "</bpmn:extensionElements></bpmn:sequenceFlow>"
            ),
            "<camunda:failedJobRetryTimeCycle>",
            "camunda:failedJobRetryTimeCycle belongs on a task, a subprocess or an event",
            "f",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:timerEventDefinition>'
                "<bpmn:timeDuration>PT</bpmn:timeDuration></bpmn:timerEventDefinition>"
                "</bpmn:boundaryEvent>"
            ),
            "<bpmn:timeDuration>",
            "timeDuration: 'PT' is not an ISO 8601 duration",
            "b",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition>'
                "<bpmn:timeDate>next tuesday</bpmn:timeDate></bpmn:timerEventDefinition>"
                "</bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:timeDate>",
            "timeDate: 'next tuesday' is not an ISO 8601 date-time",
            "n",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es"><bpmn:timerEventDefinition><bpmn:timeCycle>'
                "0 0 9 * * MON</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>"
            ),
            "<bpmn:timeCycle>",
            "timeCycle: '0 0 9 * * MON' is not a valid cron expression: day-of-month and "
            "day-of-week cannot both be specified: one of them must be '?'",
            "es",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition>'
                "<bpmn:timeCycle>R3/${interval</bpmn:timeCycle></bpmn:timerEventDefinition>"
                "</bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:timeCycle>",
            "timeCycle: missing closing '}'",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition>'
                "<bpmn:timeDuration>${x.__class__}</bpmn:timeDuration></bpmn:timerEventDefinition>"
                "</bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:timeDuration>",
            "timeDuration: names starting with '_' are not allowed",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:timerEventDefinition>'
                "<bpmn:timeDuration>PT1M</bpmn:timeDuration><bpmn:timeDate>2026-01-01"
                "</bpmn:timeDate></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:timerEventDefinition>",
            "a timer needs exactly one of timeDate, timeDuration or timeCycle",
            "n",
        ),
        (
            around('<bpmn:intermediateCatchEvent id="n" />'),
            "<bpmn:intermediateCatchEvent",
            "an intermediate catch event needs a timer, a message or a signal definition",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:messageEventDefinition />'
                "</bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:messageEventDefinition",
            "message catch event has no messageRef",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:messageEventDefinition '
                'messageRef="nameless" /></bpmn:intermediateCatchEvent>'
            ),
            "<bpmn:messageEventDefinition",
            "message 'nameless' has no name",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateCatchEvent id="n"><bpmn:signalEventDefinition signalRef="x" />'
                "</bpmn:intermediateCatchEvent>"
            ),
            "<bpmn:signalEventDefinition",
            "signalRef 'x' names no bpmn:signal",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition />'
                "</bpmn:intermediateThrowEvent>"
            ),
            "<bpmn:signalEventDefinition",
            "signal throw event has no signalRef",
            "n",
        ),
        (
            around(
                '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition '
                'signalRef="mute" /></bpmn:intermediateThrowEvent>'
            ),
            "<bpmn:signalEventDefinition",
            "signal 'mute' has no name",
            "n",
        ),
        (
            # With no messageRef it waits to be signalled; one that names nothing is refused.
            around('<bpmn:receiveTask id="n" messageRef="Nowhere" />'),
            "<bpmn:receiveTask",
            "messageRef 'Nowhere' names no bpmn:message",
            "n",
        ),
        (
            around('<bpmn:receiveTask id="n" messageRef="gone" />'),
            "<bpmn:receiveTask",
            "messageRef 'gone' names no bpmn:message",
            "n",
        ),
        (
            around('<bpmn:receiveTask id="n" messageRef="m" instantiate="true" />'),
            "<bpmn:receiveTask",
            'a receive task with instantiate="true" is not supported',
            "n",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b"><bpmn:errorEventDefinition /></bpmn:boundaryEvent>'
            ),
            "<bpmn:boundaryEvent",
            "boundaryEvent has no attachedToRef",
            "b",
        ),
        (
            on_task('<bpmn:boundaryEvent id="b" attachedToRef="t" />'),
            "<bpmn:boundaryEvent",
            "a boundary event needs a timer, a message, a signal or an error definition",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition '
                'errorRef="missing" /></bpmn:boundaryEvent>'
            ),
            "<bpmn:errorEventDefinition",
            "errorRef 'missing' names no bpmn:error",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition '
                'camunda:errorCodeVariable="${code}" /></bpmn:boundaryEvent>'
            ),
            "<bpmn:errorEventDefinition",
            "camunda:errorCodeVariable must name a variable",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t" cancelActivity="maybe">'
                "<bpmn:errorEventDefinition /></bpmn:boundaryEvent>"
            ),
            "<bpmn:boundaryEvent",
            "cancelActivity must be true or false, not 'maybe'",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:messageEventDefinition '
                'messageRef="m" /><bpmn:signalEventDefinition signalRef="sig" />'
                "</bpmn:boundaryEvent>"
            ),
            "<bpmn:boundaryEvent",
            "an event with several event definitions is not supported",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:messageEventDefinition '
                'messageRef="m"><bpmn:other /></bpmn:messageEventDefinition></bpmn:boundaryEvent>'
            ),
            "<bpmn:other",
            "other is not supported",
            "b",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es" isInterrupting="sometimes"><bpmn:errorEventDefinition />'
                "</bpmn:startEvent>"
            ),
            '<bpmn:startEvent id="es"',
            "isInterrupting must be true or false",
            "es",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es"><bpmn:errorEventDefinition /></bpmn:startEvent>',
                ' triggeredByEvent="yes"',
            ).replace(' triggeredByEvent="true"', "", 1),
            "<bpmn:subProcess",
            "triggeredByEvent must be true or false",
            "esp",
        ),
        (
            in_subprocess(SIMPLE_CONTENT + '\n      <bpmn:scriptTask id="inner" />'),
            "<bpmn:scriptTask",
            "a script needs a scriptFormat (javascript)",
            "inner",
        ),
        (
            in_subprocess(SIMPLE_CONTENT + '\n      <other:x xmlns:other="urn:o" />'),
            "<other:x",
            "other:x is not supported",
            "sub",
        ),
        (
            in_subprocess(SIMPLE_CONTENT + '\n      <bpmn:startEvent id="s_in" />'),
            '<bpmn:startEvent id="s_in" />\n    </',
            "duplicate element id",
            "s_in",
        ),
    ],
)
def test_rejections_name_file_line_and_element(
    text: str, snippet: str, fragment: str, element_id: str
) -> None:
    error = rejected(text)
    assert fragment in str(error)
    assert error.element_id == element_id
    assert error.line == line_of(text, snippet)


# --- rejected by validate ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment", "element_id"),
    [
        (
            in_subprocess(
                SIMPLE_CONTENT,
                '    <bpmn:sequenceFlow id="x" sourceRef="start" targetRef="e_in" />\n',
            ),
            "a sequence flow cannot cross a subprocess boundary ('start' is in the process, "
            "'e_in' in subprocess 'sub')",
            "x",
        ),
        (
            in_subprocess(
                SIMPLE_CONTENT + '\n      <bpmn:sequenceFlow id="x" sourceRef="e_in" '
                'targetRef="end" />'
            ),
            "a sequence flow cannot cross a subprocess boundary",
            "x",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="end"><bpmn:errorEventDefinition />'
                "</bpmn:boundaryEvent>"
            ),
            "attachedToRef 'end' names no task or subprocess",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="ghost"><bpmn:errorEventDefinition />'
                "</bpmn:boundaryEvent>"
            ),
            "attachedToRef 'ghost' names no task or subprocess",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t" cancelActivity="false">'
                "<bpmn:errorEventDefinition /></bpmn:boundaryEvent>"
            ),
            "an error boundary event is always interrupting",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition />'
                "</bpmn:boundaryEvent>",
                '    <bpmn:sequenceFlow id="in" sourceRef="start" targetRef="b" />\n',
            ),
            "a boundary event cannot have incoming flows",
            "b",
        ),
        (
            on_task(
                '<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition />'
                "</bpmn:boundaryEvent>"
            ).replace('<bpmn:sequenceFlow id="fb" sourceRef="b" targetRef="e2" />', ""),
            "a boundary event needs an outgoing flow",
            "b",
        ),
        (
            in_subprocess(
                SIMPLE_CONTENT + '\n      <bpmn:boundaryEvent id="b" attachedToRef="t">'
                "<bpmn:errorEventDefinition /></bpmn:boundaryEvent>"
                '<bpmn:endEvent id="e3" /><bpmn:sequenceFlow id="fb" sourceRef="b" '
                'targetRef="e3" />',
                '    <bpmn:task id="t" />\n',
            ),
            "a boundary event must be in the same scope as its activity (the process)",
            "b",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es"><bpmn:errorEventDefinition /></bpmn:startEvent>'
            ).replace(
                "  </bpmn:process>",
                '<bpmn:boundaryEvent id="b" attachedToRef="esp"><bpmn:errorEventDefinition />'
                '</bpmn:boundaryEvent><bpmn:sequenceFlow id="fb" sourceRef="b" targetRef="end" />'
                "  </bpmn:process>",
            ),
            "attachedToRef 'esp' names no task or subprocess",
            "b",
        ),
        (
            in_subprocess(""),
            "a subprocess needs exactly one none start event",
            "sub",
        ),
        (
            in_subprocess(SIMPLE_CONTENT + '\n      <bpmn:startEvent id="s_two" />'),
            "a subprocess needs exactly one none start event",
            "s_two",
        ),
        (
            in_subprocess(
                SIMPLE_CONTENT + '\n      <bpmn:startEvent id="s_msg"><bpmn:messageEventDefinition '
                'messageRef="m" /></bpmn:startEvent>'
            ),
            "a subprocess can only start with a none start event",
            "s_msg",
        ),
        (
            event_subprocess('<bpmn:startEvent id="es" />'),
            "the start event of an event subprocess needs a trigger",
            "es",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es" isInterrupting="false"><bpmn:errorEventDefinition />'
                "</bpmn:startEvent>"
            ),
            "an error start event is always interrupting",
            "es",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es"><bpmn:errorEventDefinition /></bpmn:startEvent>'
                '<bpmn:startEvent id="es2"><bpmn:errorEventDefinition /></bpmn:startEvent>'
            ),
            "an event subprocess needs exactly one start event",
            "es2",
        ),
        (
            event_subprocess('<bpmn:task id="es" />'),
            "an event subprocess needs exactly one start event",
            "esp",
        ),
        (
            event_subprocess(
                '<bpmn:startEvent id="es"><bpmn:errorEventDefinition /></bpmn:startEvent>'
            ).replace(
                '<bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />',
                '<bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="esp" />'
                '<bpmn:sequenceFlow id="f0" sourceRef="esp" targetRef="end" />',
            ),
            "an event subprocess cannot have incoming or outgoing sequence flows",
            "esp",
        ),
        (
            document(
                '<bpmn:startEvent id="s"><bpmn:errorEventDefinition /></bpmn:startEvent>'
                '<bpmn:endEvent id="e" /><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
            ),
            "an error start event belongs in an event subprocess",
            "s",
        ),
        (
            document(
                '<bpmn:startEvent id="s" isInterrupting="false" /><bpmn:endEvent id="e" />'
                '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />'
            ),
            "only the start event of an event subprocess can be non-interrupting",
            "s",
        ),
        (
            in_subprocess(SIMPLE_CONTENT.replace('id="s_in"', 'id="s_in" isInterrupting="false"')),
            "only the start event of an event subprocess can be non-interrupting",
            "s_in",
        ),
        (
            document(
                '<bpmn:task id="t" /><bpmn:subProcess id="esp" triggeredByEvent="true">'
                '<bpmn:startEvent id="es"><bpmn:messageEventDefinition messageRef="m" />'
                "</bpmn:startEvent></bpmn:subProcess>"
            ),
            "process has no start event",
            "p",
        ),
    ],
)
def test_structural_rules(text: str, fragment: str, element_id: str) -> None:
    error = rejected(text)
    assert fragment in str(error)
    assert error.element_id == element_id


# --- validate on models the parser would never produce -----------------------------------------


def _model(*nodes: Node, flows: tuple[SequenceFlow, ...] = ()) -> ProcessModel:
    start = StartEvent(id="start")
    return ProcessModel(key="k", nodes=(start, *nodes), flows=flows)


@pytest.mark.parametrize(
    ("model", "fragment", "element_id"),
    [
        (_model(NoneTask(id="t", parent="nowhere")), "parent 'nowhere' names no subprocess", "t"),
        (_model(NoneTask(id="t", parent="start")), "parent 'start' names no subprocess", "t"),
        (
            _model(SubProcess(id="a", parent="b"), SubProcess(id="b", parent="a")),
            "subprocesses cannot contain each other",
            "a",
        ),
        (
            _model(SubProcess(id="a", parent="a")),
            "subprocesses cannot contain each other",
            "a",
        ),
        (
            _model(IntermediateCatchEvent(id="c", message_name="m", signal_name="s")),
            "an intermediate catch event needs exactly one trigger",
            "c",
        ),
        (
            _model(IntermediateCatchEvent(id="c")),
            "an intermediate catch event needs exactly one trigger",
            "c",
        ),
        (_model(ReceiveTask(id="r", message_name="")), "a receive task's message has no name", "r"),
        (
            _model(EndEvent(id="e", error_code="X")),
            "an error code needs an error event",
            "e",
        ),
        (
            _model(EndEvent(id="e", is_error=True, terminate=True)),
            "an end event cannot both terminate and throw an error",
            "e",
        ),
        (
            _model(StartEvent(id="s2", message_name="m", signal_name="s")),
            "a start event has at most one trigger",
            "s2",
        ),
        (
            _model(
                NoneTask(id="t", outgoing=("fb",)),
                BoundaryEvent(id="b", attached_to="t", outgoing=("fb",)),
                EndEvent(id="e", incoming=("fb",)),
                flows=(SequenceFlow(id="fb", source="b", target="e"),),
            ),
            "a boundary event needs exactly one trigger",
            "b",
        ),
    ],
)
def test_validate_rejects_hand_built_models(
    model: ProcessModel, fragment: str, element_id: str
) -> None:
    with pytest.raises(ModelError) as caught:
        validate(model, "built.py")
    assert fragment in str(caught.value)
    assert caught.value.element_id == element_id
    assert caught.value.file == "built.py"


def test_triggers() -> None:
    assert triggers(NoneTask(id="t")) == ()
    assert triggers(StartEvent(id="s")) == ()
    assert triggers(StartEvent(id="s", is_error=True)) == ("error",)
    assert triggers(
        BoundaryEvent(id="b", attached_to="t", timer=TimerDefinition(kind="date", text="x"))
    ) == ("timer",)
    assert triggers(IntermediateCatchEvent(id="c", signal_name="s")) == ("signal",)
