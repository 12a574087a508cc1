"""Files as Camunda 7 accepts them: elements without ids, prefixed references, the legacy
activiti namespace and descriptive camunda: extensions."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.errors import ModelError
from engine.model import (
    BoundaryEvent,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    NoneTask,
    ProcessModel,
    ReceiveTask,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    UserTask,
)

DATA = Path(__file__).parent.parent / "data" / "bpmn"
CAMUNDA = 'xmlns:camunda="http://camunda.org/schema/1.0/bpmn"'

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    f"{CAMUNDA} "
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
)


def process(body: str) -> str:
    return (
        f'{HEAD}  <bpmn:process id="p" isExecutable="true">\n{body}\n'
        "  </bpmn:process>\n</bpmn:definitions>\n"
    )


def parse_one(text: str | bytes, file: str = "test.bpmn") -> ProcessModel:
    [model] = parse_bpmn(text, file)
    return model


def rejected(text: str, file: str = "bad.bpmn") -> ModelError:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, file)
    return caught.value


def line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


# --- generated ids -----------------------------------------------------------------------------


PARCEL_FLOWS = [
    ("sequenceFlow__Gateway_Join__Task_Handover", "Gateway_Join", "Task_Handover"),
    ("sequenceFlow__Gateway_Split__Task_Label", "Gateway_Split", "Task_Label"),
    ("sequenceFlow__Gateway_Split__Task_Pack", "Gateway_Split", "Task_Pack"),
    ("sequenceFlow__Start_Order__Gateway_Split", "Start_Order", "Gateway_Split"),
    ("sequenceFlow__Task_Handover__End_Shipped", "Task_Handover", "End_Shipped"),
    ("sequenceFlow__Task_Label__Gateway_Join", "Task_Label", "Gateway_Join"),
    ("sequenceFlow__Task_Pack__Gateway_Join", "Task_Pack", "Gateway_Join"),
]


def test_flows_without_ids_get_ids_from_their_source_and_target() -> None:
    data = (DATA / "parcel_dispatch.bpmn").read_bytes()
    model = parse_one(data)
    assert [(f.id, f.source, f.target) for f in model.flows] == PARCEL_FLOWS
    assert model.flow("sequenceFlow__Gateway_Split__Task_Label").name == "label"
    assert model.node("Gateway_Join").incoming == (
        "sequenceFlow__Task_Pack__Gateway_Join",
        "sequenceFlow__Task_Label__Gateway_Join",
    )
    again = parse_one(data)
    assert again == model
    assert [f.id for f in again.flows] == [f.id for f in model.flows]


def test_a_written_model_keeps_the_generated_ids() -> None:
    model = parse_one((DATA / "parcel_dispatch.bpmn").read_bytes())
    assert parse_one(write_bpmn([model])) == model


def test_generated_ids_never_take_a_real_id() -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:task id="task__1" />\n'
        '    <bpmn:task name="Loose" />\n'
        '    <bpmn:task name="Also loose" id="" />\n'
        '    <bpmn:sequenceFlow id="sequenceFlow__s__e" sourceRef="s" targetRef="e" />\n'
        '    <bpmn:sequenceFlow sourceRef="s" targetRef="e" />\n'
        '    <bpmn:sequenceFlow sourceRef="s" targetRef="e" />'
    )
    model = parse_one(text)
    assert [f.id for f in model.flows] == [
        "sequenceFlow__s__e",
        "sequenceFlow__s__e__2",
        "sequenceFlow__s__e__3",
    ]
    assert model.node("task__1__2") == NoneTask(id="task__1__2", name="Loose")
    assert model.node("task__2") == NoneTask(id="task__2", name="Also loose")
    assert model.node("task__2").line == line_of(text, "Also loose")
    assert model.node("s").outgoing == tuple(f.id for f in model.flows)


def test_generated_ids_inside_a_subprocess() -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:subProcess id="sub">\n'
        '      <bpmn:startEvent id="inner_s" />\n'
        '      <bpmn:endEvent id="inner_e" />\n'
        '      <bpmn:sequenceFlow sourceRef="inner_s" targetRef="inner_e" />\n'
        "    </bpmn:subProcess>\n"
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow sourceRef="s" targetRef="sub" />\n'
        '    <bpmn:sequenceFlow sourceRef="sub" targetRef="e" />'
    )
    model = parse_one(text)
    assert model.flow("sequenceFlow__inner_s__inner_e") == SequenceFlow(
        id="sequenceFlow__inner_s__inner_e", source="inner_s", target="inner_e"
    )
    assert model.node("sub").outgoing == ("sequenceFlow__sub__e",)


def test_a_flow_without_id_is_still_checked_and_named_in_errors() -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow sourceRef="s" targetRef="nowhere" />'
    )
    error = rejected(text)
    assert "targetRef 'nowhere' names no flow node" in str(error)
    assert (error.file, error.line, error.element_id) == (
        "bad.bpmn",
        line_of(text, 'targetRef="nowhere"'),
        "sequenceFlow__s__nowhere",
    )


# --- prefixed references -----------------------------------------------------------------------


def test_prefixed_references_resolve_within_the_definitions() -> None:
    model = parse_one((DATA / "invoice_inbox.bpmn").read_bytes())
    assert model.node("Event_Rejected") == BoundaryEvent(
        id="Event_Rejected",
        name="Rejected",
        attached_to="Task_Check",
        is_error=True,
        error_code="INVOICE_REJECTED",
        outgoing=("Flow_ToRejected",),
    )
    assert model.node("Event_Recalled") == BoundaryEvent(
        id="Event_Recalled",
        name="Recalled",
        attached_to="Task_Approval",
        signal_name="invoiceRecalled",
        outgoing=("Flow_ToRecalled",),
    )
    assert model.node("Task_Approval") == ReceiveTask(
        id="Task_Approval",
        name="Await approval",
        message_name="invoiceApproved",
        incoming=("Flow_ToApproval",),
        outgoing=("Flow_ToDecide",),
    )
    assert model.node("Event_Paid") == IntermediateCatchEvent(
        id="Event_Paid",
        name="Payment confirmed",
        message_name="invoicePaid",
        incoming=("Flow_Pay",),
        outgoing=("Flow_ToEndPaid",),
    )
    assert model.node("Gateway_Amount") == ExclusiveGateway(
        id="Gateway_Amount",
        name="Amount?",
        default_flow="Flow_Pay",
        incoming=("Flow_ToDecide",),
        outgoing=("Flow_Pay", "Flow_Audit"),
    )
    assert model.flow("Flow_ToCheck") == SequenceFlow(
        id="Flow_ToCheck", source="Start_Received", target="Task_Check"
    )


@pytest.mark.parametrize("gateway", ["exclusiveGateway", "inclusiveGateway"])
def test_a_prefixed_default_flow_resolves_on_either_gateway(gateway: str) -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        f'    <bpmn:{gateway} id="g" default="tns:other" '
        'xmlns:tns="http://bpmn.io/schema/bpmn" />\n'
        '    <bpmn:endEvent id="a" />\n'
        '    <bpmn:endEvent id="b" />\n'
        '    <bpmn:sequenceFlow id="in" sourceRef="s" targetRef="g" />\n'
        '    <bpmn:sequenceFlow id="chosen" sourceRef="g" targetRef="a">\n'
        "      <bpmn:conditionExpression>${yes}</bpmn:conditionExpression>\n"
        "    </bpmn:sequenceFlow>\n"
        '    <bpmn:sequenceFlow id="other" sourceRef="g" targetRef="b" />'
    )
    node = parse_one(text).node("g")
    assert isinstance(node, ExclusiveGateway | InclusiveGateway)
    assert type(node).__name__ == gateway[0].upper() + gateway[1:]
    assert node.default_flow == "other"


def test_a_prefix_of_any_declared_namespace_is_dropped() -> None:
    text = process(
        '    <bpmn:startEvent id="s" xmlns:here="urn:declared-on-the-element">\n'
        "      <bpmn:outgoing>here:f</bpmn:outgoing>\n"
        "    </bpmn:startEvent>\n"
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="bpmn:s" targetRef="camunda:e" />'
    )
    assert parse_one(text).flow("f") == SequenceFlow(id="f", source="s", target="e")


def test_an_id_with_a_colon_is_taken_as_written() -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:endEvent id="odd:end" />\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="s" targetRef="odd:end" />'
    )
    assert parse_one(text).flow("f").target == "odd:end"


@pytest.mark.parametrize(
    ("body", "needle", "fragment", "element_id"),
    [
        (
            '<bpmn:startEvent id="s" /><bpmn:endEvent id="e" />\n'
            '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nope:e" />',
            'targetRef="nope:e"',
            "targetRef 'nope:e': the prefix 'nope' is not a declared namespace prefix",
            "f",
        ),
        (
            '<bpmn:startEvent id="s">\n'
            '<bpmn:messageEventDefinition id="d" messageRef="nope:Message_1" />'
            '</bpmn:startEvent><bpmn:endEvent id="e" />'
            '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />',
            "nope:Message_1",
            "messageRef 'nope:Message_1': the prefix 'nope' is not a declared namespace prefix",
            "s",
        ),
        (
            '<bpmn:startEvent id="s" /><bpmn:task id="t" /><bpmn:endEvent id="e" />'
            '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t" />'
            '<bpmn:sequenceFlow id="g" sourceRef="t" targetRef="e" />\n'
            '<bpmn:boundaryEvent id="b" attachedToRef="x:t"><bpmn:errorEventDefinition />'
            "</bpmn:boundaryEvent>",
            'attachedToRef="x:t"',
            "attachedToRef 'x:t': the prefix 'x' is not a declared namespace prefix",
            "b",
        ),
        (
            '<bpmn:startEvent id="s">\n<bpmn:outgoing>tns:f</bpmn:outgoing></bpmn:startEvent>'
            '<bpmn:endEvent id="e" /><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />',
            "tns:f",
            "outgoing 'tns:f': the prefix 'tns' is not a declared namespace prefix",
            "s",
        ),
        (
            '<bpmn:startEvent id="s">\n<bpmn:errorEventDefinition errorRef="e:Error_1" />'
            "</bpmn:startEvent>",
            "e:Error_1",
            "errorRef 'e:Error_1': the prefix 'e' is not a declared namespace prefix",
            "s",
        ),
        (
            '<bpmn:startEvent id="s">\n<bpmn:messageEventDefinition messageRef="bpmn:Nothing" />'
            "</bpmn:startEvent>",
            "bpmn:Nothing",
            "messageRef 'bpmn:Nothing' names no bpmn:message",
            "s",
        ),
    ],
)
def test_an_unknown_prefix_names_file_line_and_element(
    body: str, needle: str, fragment: str, element_id: str
) -> None:
    text = process(body).replace(
        "<bpmn:process", '<bpmn:message id="Message_1" name="m" />\n  <bpmn:process'
    )
    error = rejected(text)
    assert fragment in str(error)
    assert (error.file, error.line, error.element_id) == (
        "bad.bpmn",
        line_of(text, needle),
        element_id,
    )


# --- the legacy activiti namespace -------------------------------------------------------------


def test_the_legacy_namespace_reads_as_the_camunda_namespace() -> None:
    model = parse_one((DATA / "expense_claim_legacy.bpmn").read_bytes())
    assert model.version_tag == "2018-03"
    assert model.node("ServiceTask_Check") == ServiceTask(
        id="ServiceTask_Check",
        name="Check receipts",
        topic="expense-check",
        task_priority=5,
        incoming=("SequenceFlow_0v0fk6j",),
        outgoing=("SequenceFlow_1m3o5b2",),
    )
    assert model.node("ServiceTask_Book") == ServiceTask(
        id="ServiceTask_Book",
        name="Book expense",
        handler="bookExpense",
        result_variable="booking",
        async_before=True,
        retry_cycle="R2/PT1M",
        incoming=("SequenceFlow_1m3o5b2",),
        outgoing=("SequenceFlow_18v4x0e",),
    )
    confirm = model.node("UserTask_Confirm")
    assert isinstance(confirm, UserTask)
    assert (confirm.assignee, confirm.form_key) == ("${claimant}", "embedded:app:forms/payout.html")


LEGACY_HEAD = HEAD.replace(
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn"',
    'xmlns:activiti="http://activiti.org/bpmn"',
)


def test_the_legacy_namespace_under_its_own_prefix() -> None:
    text = process(
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:serviceTask id="t" activiti:class="com.acme.Book" activiti:asyncBefore="true" '
        'camunda:asyncBefore="false" />\n'
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />'
    ).replace(HEAD, LEGACY_HEAD.replace("<bpmn:definitions ", f"<bpmn:definitions {CAMUNDA} "))
    assert parse_one(text).node("t") == ServiceTask(
        id="t", handler="com.acme.Book", incoming=("f1",), outgoing=("f2",)
    )


def test_what_the_legacy_namespace_cannot_run_is_refused_as_camunda() -> None:
    text = process(
        '    <bpmn:startEvent id="s">\n'
        "      <bpmn:extensionElements>\n"
        '        <activiti:executionListener event="start" class="com.acme.Audit">'
        '<activiti:field name="x" stringValue="1" /></activiti:executionListener>\n'
        "      </bpmn:extensionElements>\n"
        "    </bpmn:startEvent>"
    ).replace(HEAD, LEGACY_HEAD)
    error = rejected(text)
    assert "camunda:field on a camunda:executionListener is not supported by this engine" in str(
        error
    )
    assert (error.file, error.line, error.element_id) == (
        "bad.bpmn",
        line_of(text, "<activiti:executionListener"),
        "s",
    )
    # Without the field, the legacy listener is read as camunda's.
    accepted = text.replace('<activiti:field name="x" stringValue="1" />', "")
    [listener] = parse_one(accepted).node("s").listeners
    assert (listener.event, listener.handler) == ("start", "com.acme.Audit")


# --- descriptive extensions --------------------------------------------------------------------


def test_properties_documentation_and_form_keys_are_kept() -> None:
    model = parse_one((DATA / "supplier_onboarding.bpmn").read_bytes())
    assert model.properties == (("department", "purchasing"), ("sla", "P5D"))
    assert model.documentation == (
        "New suppliers are reviewed by purchasing before the first order."
    )
    review = model.node("Task_Review")
    assert review == UserTask(
        id="Task_Review",
        name="Review supplier",
        form_key="embedded:app:forms/review.html",
        candidate_users="anna,ben",
        candidate_groups="purchasing",
        due_date="${reviewDue}",
        follow_up_date="P2D",
        priority="60",
        incoming=("Flow_ToReview",),
        outgoing=("Flow_ToDone",),
    )
    assert review.properties == (("checklist", "register"), ("checklist", "bank"), ("icon", ""))
    assert review.documentation == (
        "Check the register entry and the bank details.\n\n"
        "Ask the proposer when anything is missing."
    )
    start = model.node("StartEvent_Request")
    assert isinstance(start, StartEvent)
    assert (start.form_key, start.properties, start.documentation) == (
        "embedded:app:forms/supplier.html",
        (),
        None,
    )
    flow = model.flow("Flow_ToReview")
    assert (flow.properties, flow.documentation) == ((("path", "standard"),), "Straight to review.")


def test_written_models_keep_what_describes_them() -> None:
    model = parse_one((DATA / "supplier_onboarding.bpmn").read_bytes())
    again = parse_one(write_bpmn([model]))
    assert again == model
    assert (again.properties, again.documentation) == (model.properties, model.documentation)
    for node, node_again in zip(model.nodes, again.nodes, strict=True):
        assert (node_again.properties, node_again.documentation) == (
            node.properties,
            node.documentation,
        )
    flow, flow_again = model.flow("Flow_ToReview"), again.flow("Flow_ToReview")
    assert (flow_again.properties, flow_again.documentation) == (
        flow.properties,
        flow.documentation,
    )


@pytest.mark.parametrize(
    ("replaced", "by", "needle", "fragment", "element_id"),
    [
        (
            "<bpmn:incoming>Flow_ToReview</bpmn:incoming>",
            "<bpmn:incoming>Flow_ToReview</bpmn:incoming>\n"
            '      <bpmn:multiInstanceLoopCharacteristics camunda:collection="${suppliers}" '
            'camunda:asyncAfter="true" />',
            "<bpmn:multiInstanceLoopCharacteristics",
            "multiInstanceLoopCharacteristics is not supported",
            "Task_Review",
        ),
        (
            '<camunda:properties>\n          <camunda:property name="checklist"',
            "<camunda:inputOutput>\n"
            '          <camunda:inputParameter name="x">'
            '<camunda:script scriptFormat="groovy">1</camunda:script></camunda:inputParameter>\n'
            "        </camunda:inputOutput>\n"
            '        <camunda:properties>\n          <camunda:property name="checklist"',
            "<camunda:script",
            "a camunda:script in groovy cannot run in an input/output mapping; port it",
            "Task_Review",
        ),
        (
            '<camunda:properties>\n          <camunda:property name="checklist"',
            '<camunda:taskListener event="timeout" class="com.acme.Notify" />\n'
            '        <camunda:properties>\n          <camunda:property name="checklist"',
            "<camunda:taskListener",
            "task listeners on timeout are not supported by this engine",
            "Task_Review",
        ),
        (
            '<bpmn:endEvent id="EndEvent_Onboarded" name="Supplier onboarded">',
            '<bpmn:scriptTask id="Task_Script" scriptFormat="groovy">\n'
            "      <bpmn:script>println 1</bpmn:script>\n"
            "    </bpmn:scriptTask>\n"
            '    <bpmn:endEvent id="EndEvent_Onboarded" name="Supplier onboarded">',
            "<bpmn:scriptTask",
            "script language 'groovy' is not supported by this engine; port it to JavaScript",
            "Task_Script",
        ),
    ],
)
def test_what_changes_execution_is_still_refused(
    replaced: str, by: str, needle: str, fragment: str, element_id: str
) -> None:
    original = (DATA / "supplier_onboarding.bpmn").read_text()
    assert original.count(replaced) == 1
    text = original.replace(replaced, by)
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "supplier_onboarding.bpmn")
    error = caught.value
    assert fragment in str(error)
    assert (error.file, error.line, error.element_id) == (
        "supplier_onboarding.bpmn",
        line_of(text, needle),
        element_id,
    )


def test_declared_flows_need_not_name_the_flows_without_ids() -> None:
    text = process(
        '    <bpmn:startEvent id="s"><bpmn:outgoing>f</bpmn:outgoing></bpmn:startEvent>\n'
        '    <bpmn:endEvent id="e"><bpmn:incoming>f</bpmn:incoming></bpmn:endEvent>\n'
        '    <bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e" />\n'
        '    <bpmn:sequenceFlow sourceRef="s" targetRef="e" />'
    )
    assert parse_one(text).node("e").incoming == ("f", "sequenceFlow__s__e")
    error = rejected(text.replace("<bpmn:incoming>f<", "<bpmn:incoming>x<"))
    assert "<incoming> elements (x) disagree with the sequence flows (f, sequenceFlow__s__e)" in (
        str(error)
    )
