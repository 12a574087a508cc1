"""Escalation, link and signal throw events in the model: the parser reads them as Camunda Modeler
writes them, the builder makes the same models, the writer writes them back, and whatever Camunda 7
refuses (or this engine does not run) fails the deployment naming file, line and element."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.language.expressions import compile_expression
from engine.model import (
    BoundaryEvent,
    CallMapping,
    EndEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    ProcessModel,
    StartEvent,
)
from tests.unit.test_bpmn_parser import definitions, line_of, rejected

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def parsed(name: str) -> ProcessModel:
    path = DATA / f"{name}.bpmn"
    [model] = parse_bpmn(path.read_bytes(), path.name)
    return model


def purchase_escalation() -> ProcessModel:
    """The builder twin of tests/data/bpmn/purchase_escalation.bpmn."""
    return (
        ProcessBuilder("purchase_escalation", "Purchase request")
        .start_event("StartEvent_Request", "Request received")
        .sub_process("SubProcess_Approval", "Approve purchase")
        .start_event("StartEvent_Approval", parent="SubProcess_Approval")
        .exclusive_gateway(
            "Gateway_Amount", "Amount?", parent="SubProcess_Approval", default="Flow_Small"
        )
        .intermediate_throw_event(
            "Event_AskFinance",
            "Ask finance",
            parent="SubProcess_Approval",
            escalation_code="FINANCE_REVIEW",
        )
        .exclusive_gateway("Gateway_Merge", parent="SubProcess_Approval")
        .user_task("Task_Approve", "Approve", parent="SubProcess_Approval")
        .exclusive_gateway(
            "Gateway_Decision", "Approved?", parent="SubProcess_Approval", default="Flow_Rejected"
        )
        .end_event("EndEvent_Approved", "Approved", parent="SubProcess_Approval")
        .end_event(
            "EndEvent_Rejected",
            "Rejected",
            parent="SubProcess_Approval",
            escalation_code="REJECTED",
        )
        .end_event("EndEvent_Ordered", "Ordered")
        .boundary_event(
            "Boundary_FinanceReview",
            "SubProcess_Approval",
            "Finance review asked",
            cancel_activity=False,
            escalation_code="FINANCE_REVIEW",
            escalation_code_variable="escalated",
        )
        .user_task("Task_FinanceReview", "Review budget")
        .end_event("EndEvent_Reviewed", "Reviewed")
        .boundary_event(
            "Boundary_Rejected",
            "SubProcess_Approval",
            "Purchase rejected",
            escalation_code="REJECTED",
        )
        .user_task("Task_Inform", "Inform requester")
        .end_event("EndEvent_Informed", "Requester informed")
        .flow("StartEvent_Approval", "Gateway_Amount", id="Flow_ToAmount")
        .flow(
            "Gateway_Amount",
            "Event_AskFinance",
            id="Flow_Large",
            name="over 1000",
            condition="${amount > 1000}",
        )
        .flow("Event_AskFinance", "Gateway_Merge", id="Flow_FromFinance")
        .flow("Gateway_Amount", "Gateway_Merge", id="Flow_Small")
        .flow("Gateway_Merge", "Task_Approve", id="Flow_ToApprove")
        .flow("Task_Approve", "Gateway_Decision", id="Flow_ToDecision")
        .flow(
            "Gateway_Decision",
            "EndEvent_Approved",
            id="Flow_Approved",
            name="yes",
            condition="${approved}",
        )
        .flow("Gateway_Decision", "EndEvent_Rejected", id="Flow_Rejected", name="no")
        .flow("StartEvent_Request", "SubProcess_Approval", id="Flow_ToApproval")
        .flow("SubProcess_Approval", "EndEvent_Ordered", id="Flow_ToOrdered")
        .flow("Boundary_FinanceReview", "Task_FinanceReview", id="Flow_ToReview")
        .flow("Task_FinanceReview", "EndEvent_Reviewed", id="Flow_ToReviewed")
        .flow("Boundary_Rejected", "Task_Inform", id="Flow_ToInform")
        .flow("Task_Inform", "EndEvent_Informed", id="Flow_ToInformed")
        .build()
    )


def claim_intake() -> ProcessModel:
    """The builder twin of tests/data/bpmn/claim_intake.bpmn."""
    return (
        ProcessBuilder("claim_intake", "Claim intake")
        .start_event("StartEvent_Claim", "Claim filed")
        .task("Task_Register", "Register claim")
        .exclusive_gateway("Gateway_Kind", "Urgent?", default="Flow_Normal")
        .intermediate_throw_event(
            "Event_AnnounceUrgent",
            "Announce urgent claim",
            signal="UrgentClaim",
            signal_inputs=[
                CallMapping(source="claimant", target="claimant"),
                CallMapping(
                    source_expression=compile_expression("${urgent}"), target="urgentClaim"
                ),
            ],
        )
        .intermediate_throw_event("LinkThrow_Urgent", "Assess", link="Assess")
        .intermediate_throw_event("LinkThrow_Normal", "Assess", link="Assess")
        .intermediate_catch_event("LinkCatch_Assess", "Assess", link="Assess")
        .user_task("Task_Assess", "Assess claim")
        .end_event("EndEvent_Closed", "Claim closed", signal="ClaimClosed")
        .flow("StartEvent_Claim", "Task_Register", id="Flow_ToRegister")
        .flow("Task_Register", "Gateway_Kind", id="Flow_ToKind")
        .flow(
            "Gateway_Kind",
            "Event_AnnounceUrgent",
            id="Flow_Urgent",
            name="yes",
            condition="${urgent}",
        )
        .flow("Event_AnnounceUrgent", "LinkThrow_Urgent", id="Flow_ToUrgentLink")
        .flow("Gateway_Kind", "LinkThrow_Normal", id="Flow_Normal", name="no")
        .flow("LinkCatch_Assess", "Task_Assess", id="Flow_ToAssess")
        .flow("Task_Assess", "EndEvent_Closed", id="Flow_ToClosed")
        .build()
    )


@pytest.mark.parametrize(
    ("name", "build"),
    [("purchase_escalation", purchase_escalation), ("claim_intake", claim_intake)],
)
def test_the_file_the_builder_and_the_written_file_are_one_model(name: str, build: object) -> None:
    model = parsed(name)
    assert callable(build)
    assert model == build()
    [again] = parse_bpmn(write_bpmn([model]), "written.bpmn")
    assert again == model


def test_escalation_events_carry_their_codes_and_variables() -> None:
    model = parsed("purchase_escalation")
    ask = model.node("Event_AskFinance")
    assert isinstance(ask, IntermediateThrowEvent)
    assert (ask.is_escalation, ask.escalation_code, ask.throws) == (
        True,
        "FINANCE_REVIEW",
        ("escalation",),
    )
    rejected_end = model.node("EndEvent_Rejected")
    assert isinstance(rejected_end, EndEvent)
    assert (rejected_end.escalation_code, rejected_end.throws) == ("REJECTED", ("escalation",))
    review = model.node("Boundary_FinanceReview")
    assert isinstance(review, BoundaryEvent)
    assert (review.cancel_activity, review.escalation_code, review.escalation_code_variable) == (
        False,
        "FINANCE_REVIEW",
        "escalated",
    )
    boundary = model.node("Boundary_Rejected")
    assert isinstance(boundary, BoundaryEvent)
    assert (boundary.cancel_activity, boundary.escalation_code) == (True, "REJECTED")


def test_link_and_signal_throw_events_carry_their_names() -> None:
    model = parsed("claim_intake")
    announce = model.node("Event_AnnounceUrgent")
    assert isinstance(announce, IntermediateThrowEvent)
    assert (announce.signal_name, announce.throws) == ("UrgentClaim", ("signal",))
    closed = model.node("EndEvent_Closed")
    assert isinstance(closed, EndEvent)
    assert (closed.signal_name, closed.throws) == ("ClaimClosed", ("signal",))
    for throw_id in ("LinkThrow_Urgent", "LinkThrow_Normal"):
        throw = model.node(throw_id)
        assert isinstance(throw, IntermediateThrowEvent)
        assert throw.throws == ("link",)
        assert model.link_target(throw) == "LinkCatch_Assess"
    catch = model.node("LinkCatch_Assess")
    assert isinstance(catch, IntermediateCatchEvent)
    assert catch.link_name == "Assess"


def test_an_escalation_start_event_catches_one_code_or_every_one() -> None:
    model = (
        ProcessBuilder("p")
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .sub_process("late", triggered_by_event=True)
        .start_event(
            "late_start",
            parent="late",
            escalation=True,
            interrupting=False,
            escalation_code_variable="code",
        )
        .end_event("late_end", parent="late")
        .chain("late_start", "late_end")
        .build()
    )
    [again] = parse_bpmn(write_bpmn([model]), "written.bpmn")
    assert again == model
    start = again.node("late_start")
    assert isinstance(start, StartEvent)
    assert (start.is_escalation, start.escalation_code, start.interrupting) == (True, None, False)
    assert (start.escalation_code_variable, start.is_none_start) == ("code", False)


# --- refused ------------------------------------------------------------------------------------

ESCALATION = '  <bpmn:escalation id="Esc" name="Late" escalationCode="LATE" />\n'
NO_CODE = '  <bpmn:escalation id="Bare" name="Bare" />\n'


def _process(body: str, extra: str = "") -> str:
    return definitions(
        f'{ESCALATION}{NO_CODE}{extra}  <bpmn:process id="p" isExecutable="true">\n{body}\n'
        "  </bpmn:process>"
    )


START = '    <bpmn:startEvent id="start" />\n'
END = '    <bpmn:endEvent id="end" />\n'


def _between(node: str) -> str:
    """`node` (id "n") between a start and an end event."""
    return _process(
        f"{START}    {node}\n{END}"
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />'
    )


def _sub_with(inner: str, outer: str = "") -> str:
    """A subprocess "sub" holding `inner` after its start, between a start and an end event."""
    return _process(
        f"{START}"
        '    <bpmn:subProcess id="sub">\n'
        '      <bpmn:startEvent id="sub_start" />\n'
        f"      {inner}\n"
        "    </bpmn:subProcess>\n"
        f"{END}{outer}"
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="sub" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="sub" targetRef="end" />'
    )


REFUSED = [
    (
        "a throw without escalationRef",
        _between(
            '<bpmn:intermediateThrowEvent id="n"><bpmn:escalationEventDefinition />'
            "</bpmn:intermediateThrowEvent>"
        ),
        "<bpmn:escalationEventDefinition />",
        "an escalation throw event needs an escalationRef",
        "n",
    ),
    (
        "an end event without escalationRef",
        _process(
            f"{START}"
            '    <bpmn:endEvent id="n"><bpmn:escalationEventDefinition /></bpmn:endEvent>\n'
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />'
        ),
        "<bpmn:escalationEventDefinition />",
        "an escalation end event needs an escalationRef",
        "n",
    ),
    (
        "a throw of an escalation without a code",
        _between(
            '<bpmn:intermediateThrowEvent id="n">'
            '<bpmn:escalationEventDefinition escalationRef="Bare" /></bpmn:intermediateThrowEvent>'
        ),
        'escalationRef="Bare"',
        "escalation 'Bare' has no escalationCode, which a throwing event needs",
        "n",
    ),
    (
        "an escalationRef naming nothing",
        _between(
            '<bpmn:intermediateThrowEvent id="n">'
            '<bpmn:escalationEventDefinition escalationRef="Nope" /></bpmn:intermediateThrowEvent>'
        ),
        'escalationRef="Nope"',
        "escalationRef 'Nope' names no bpmn:escalation",
        "n",
    ),
    (
        "a code variable on a throw event",
        _between(
            '<bpmn:intermediateThrowEvent id="n"><bpmn:escalationEventDefinition '
            'escalationRef="Esc" camunda:escalationCodeVariable="v" />'
            "</bpmn:intermediateThrowEvent>"
        ),
        "camunda:escalationCodeVariable=",
        "camunda:escalationCodeVariable belongs on an escalation event that catches, not on "
        "intermediateThrowEvent",
        "n",
    ),
    (
        "an escalation start event of a process",
        _process(
            '    <bpmn:startEvent id="n"><bpmn:escalationEventDefinition /></bpmn:startEvent>\n'
            f"{START}{END}"
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />'
        ),
        '<bpmn:startEvent id="n">',
        "an escalation start event belongs in an event subprocess",
        "n",
    ),
    (
        "an escalation boundary event on a task",
        _process(
            f"{START}"
            '    <bpmn:task id="t" />\n'
            '    <bpmn:boundaryEvent id="n" attachedToRef="t">'
            "<bpmn:escalationEventDefinition /></bpmn:boundaryEvent>\n"
            f"{END}"
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="t" />\n'
            '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f3" sourceRef="n" targetRef="end" />'
        ),
        '<bpmn:boundaryEvent id="n"',
        "an escalation boundary event can only be attached to a subprocess, a call activity "
        "or a user task",
        "n",
    ),
    (
        "two boundary events catching one code",
        _sub_with(
            '<bpmn:endEvent id="sub_end" />\n'
            '      <bpmn:sequenceFlow id="s1" sourceRef="sub_start" targetRef="sub_end" />',
            '    <bpmn:boundaryEvent id="b1" attachedToRef="sub">'
            '<bpmn:escalationEventDefinition escalationRef="Esc" /></bpmn:boundaryEvent>\n'
            '    <bpmn:boundaryEvent id="b2" attachedToRef="sub" cancelActivity="false">'
            '<bpmn:escalationEventDefinition escalationRef="Esc" /></bpmn:boundaryEvent>\n'
            '    <bpmn:sequenceFlow id="f3" sourceRef="b1" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f4" sourceRef="b2" targetRef="end" />\n',
        ),
        '<bpmn:boundaryEvent id="b2"',
        "another escalation event of activity 'sub' also catches escalation 'LATE'",
        "b2",
    ),
    (
        "a catch-all beside another boundary event",
        _sub_with(
            '<bpmn:endEvent id="sub_end" />\n'
            '      <bpmn:sequenceFlow id="s1" sourceRef="sub_start" targetRef="sub_end" />',
            '    <bpmn:boundaryEvent id="b1" attachedToRef="sub">'
            '<bpmn:escalationEventDefinition escalationRef="Esc" /></bpmn:boundaryEvent>\n'
            '    <bpmn:boundaryEvent id="b2" attachedToRef="sub" cancelActivity="false">'
            "<bpmn:escalationEventDefinition /></bpmn:boundaryEvent>\n"
            '    <bpmn:sequenceFlow id="f3" sourceRef="b1" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f4" sourceRef="b2" targetRef="end" />\n',
        ),
        '<bpmn:boundaryEvent id="b2"',
        "another escalation event of activity 'sub' also catches every escalation",
        "b2",
    ),
    (
        "a link without a name",
        _between(
            '<bpmn:intermediateCatchEvent id="n"><bpmn:linkEventDefinition />'
            "</bpmn:intermediateCatchEvent>"
        ),
        "<bpmn:linkEventDefinition />",
        "a linkEventDefinition needs a name",
        "n",
    ),
    (
        "a link catch event with an incoming flow",
        _between(
            '<bpmn:intermediateCatchEvent id="n"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateCatchEvent>"
        ),
        '<bpmn:intermediateCatchEvent id="n">',
        "a link catch event cannot have incoming flows",
        "n",
    ),
    (
        "a link throw event with an outgoing flow",
        _process(
            f"{START}"
            '    <bpmn:intermediateThrowEvent id="n"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateThrowEvent>\n"
            '    <bpmn:intermediateCatchEvent id="c"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateCatchEvent>\n"
            f"{END}"
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
            '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f3" sourceRef="c" targetRef="end" />'
        ),
        '<bpmn:intermediateThrowEvent id="n">',
        "a link throw event cannot have outgoing flows",
        "n",
    ),
    (
        "a link throw event with no catch event in its scope",
        _sub_with(
            '<bpmn:intermediateThrowEvent id="n"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateThrowEvent>\n"
            '      <bpmn:sequenceFlow id="s1" sourceRef="sub_start" targetRef="n" />',
            '    <bpmn:intermediateCatchEvent id="c"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateCatchEvent>\n"
            '    <bpmn:sequenceFlow id="f3" sourceRef="c" targetRef="end" />\n',
        ),
        '<bpmn:intermediateThrowEvent id="n">',
        "no link catch event named 'L' in subprocess 'sub' for this link throw event",
        "n",
    ),
    (
        "two link catch events of one name in one scope",
        _process(
            f"{START}"
            '    <bpmn:intermediateCatchEvent id="c1"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateCatchEvent>\n"
            '    <bpmn:intermediateCatchEvent id="c2"><bpmn:linkEventDefinition name="L" />'
            "</bpmn:intermediateCatchEvent>\n"
            f"{END}"
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f2" sourceRef="c1" targetRef="end" />\n'
            '    <bpmn:sequenceFlow id="f3" sourceRef="c2" targetRef="end" />'
        ),
        '<bpmn:intermediateCatchEvent id="c2">',
        "link catch events 'c1' and 'c2' in the process have the same name 'L'",
        "c2",
    ),
    (
        "a signal end event without signalRef",
        _process(
            f"{START}"
            '    <bpmn:endEvent id="n"><bpmn:signalEventDefinition /></bpmn:endEvent>\n'
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />'
        ),
        "<bpmn:signalEventDefinition />",
        "signal end event has no signalRef",
        "n",
    ),
    (
        "a cancel end event outside a transaction",
        _process(
            f"{START}"
            '    <bpmn:endEvent id="n"><bpmn:cancelEventDefinition /></bpmn:endEvent>\n'
            '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />'
        ),
        "<bpmn:cancelEventDefinition />",
        "end event with cancelEventDefinition only supported inside transaction subprocess: "
        "cancel end event 'n' is in the process",
        "n",
    ),
]


@pytest.mark.parametrize(
    ("text", "at", "message", "element_id"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_what_is_refused_names_file_line_and_element(
    text: str, at: str, message: str, element_id: str
) -> None:
    error = rejected(text, "orders/escalations.bpmn")
    assert message in error.message
    assert (error.file, error.element_id) == ("orders/escalations.bpmn", element_id)
    assert error.line == line_of(text, at)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda b: b.intermediate_throw_event("n", escalation_code="A", signal="S"),
            "a throw event throws at most one thing, not ('escalation', 'signal')",
        ),
        (
            lambda b: b.end_event("n", escalation_code="A", terminate=True),
            "an end event throws at most one thing, not ('terminate', 'escalation')",
        ),
        (
            lambda b: b.intermediate_throw_event("n", link=""),
            "a link needs a non-empty name",
        ),
        (
            lambda b: b.intermediate_throw_event("n", escalation_code=""),
            "an escalation code cannot be empty (None catches every escalation)",
        ),
    ],
)
def test_the_builder_refuses_what_the_parser_refuses(build: object, message: str) -> None:
    builder = ProcessBuilder("p").start_event("s")
    with pytest.raises(ModelError) as caught:
        assert callable(build)
        build(builder).flow("s", "n").build()
    assert message in caught.value.message
    assert caught.value.element_id == "n"


def test_a_converging_inclusive_gateway_waits_for_tokens_that_can_still_come_by_a_link() -> None:
    model = (
        ProcessBuilder("p")
        .start_event("s")
        .inclusive_gateway("split")
        .task("before_link")
        .intermediate_throw_event("go", link="L")
        .intermediate_catch_event("arrive", link="L")
        .task("direct")
        .inclusive_gateway("join")
        .end_event("e")
        .chain("s", "split", "before_link", "go")
        .chain("split", "direct", "join")
        .chain("arrive", "join", "e")
        .build()
    )
    assert model.upstream_of("join") == {"s", "split", "before_link", "go", "arrive", "direct"}


def test_a_signal_throw_passes_the_variables_of_its_camunda_in_mappings() -> None:
    model = parsed("claim_intake")
    announce = model.node("Event_AnnounceUrgent")
    assert isinstance(announce, IntermediateThrowEvent)
    assert [(m.source, m.target, m.all, m.local) for m in announce.signal_inputs] == [
        ("claimant", "claimant", False, False),
        (None, "urgentClaim", False, False),
    ]
    written = (
        ProcessBuilder("p")
        .start_event("s")
        .end_event(
            "e",
            signal="Bye",
            signal_inputs=[CallMapping(all=True), CallMapping(source="x", target="y", local=True)],
        )
        .chain("s", "e")
        .build()
    )
    [again] = parse_bpmn(write_bpmn([written]), "written.bpmn")
    assert again == written


SIGNAL = '  <bpmn:signal id="Sig" name="S" />\n'


@pytest.mark.parametrize(
    ("node", "at", "message"),
    [
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition signalRef="Sig">'
            '<bpmn:extensionElements><camunda:in businessKey="${key}" /></bpmn:extensionElements>'
            "</bpmn:signalEventDefinition></bpmn:intermediateThrowEvent>",
            "<camunda:in businessKey",
            "camunda:in businessKey on a signal is not supported by this engine",
        ),
        (
            '<bpmn:intermediateCatchEvent id="n"><bpmn:signalEventDefinition signalRef="Sig">'
            '<bpmn:extensionElements><camunda:in variables="all" /></bpmn:extensionElements>'
            "</bpmn:signalEventDefinition></bpmn:intermediateCatchEvent>",
            "<camunda:in variables",
            "camunda:in is not supported by this engine",
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition signalRef="Sig">'
            '<bpmn:extensionElements><camunda:out variables="all" /></bpmn:extensionElements>'
            "</bpmn:signalEventDefinition></bpmn:intermediateThrowEvent>",
            "<camunda:out",
            "camunda:out is not supported by this engine",
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:signalEventDefinition signalRef="Sig">'
            '<bpmn:extensionElements><camunda:in source="a" /></bpmn:extensionElements>'
            "</bpmn:signalEventDefinition></bpmn:intermediateThrowEvent>",
            '<camunda:in source="a"',
            "camunda:in with a source needs a target",
        ),
    ],
)
def test_signal_mappings_camunda_does_not_run_are_refused(node: str, at: str, message: str) -> None:
    text = _process(
        f"{START}    {node}\n{END}"
        '    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="n" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="n" targetRef="end" />',
        SIGNAL,
    )
    error = rejected(text, "orders/signals.bpmn")
    assert message in error.message
    assert (error.file, error.line, error.element_id) == (
        "orders/signals.bpmn",
        line_of(text, at),
        "n",
    )
