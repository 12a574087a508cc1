"""Reading and refusing event-based gateways: a gateway entered by a flow whose flows lead to
message, timer and signal catch events deploys; everything BPMN and Camunda 7 refuse fails with
the file, the line and the element."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.model import EventBasedGateway, IntermediateCatchEvent, TimerDefinition

DATA = Path(__file__).parent.parent / "data" / "bpmn"

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'id="Definitions_1" targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '  <bpmn:message id="Message_Pay" name="payment" />\n'
    '  <bpmn:signal id="Signal_Stop" name="stop" />\n'
)

START = (
    '    <bpmn:startEvent id="start" />\n'
    '    <bpmn:sequenceFlow id="to_gw" sourceRef="start" targetRef="gw" />\n'
)
MESSAGE = (
    '    <bpmn:intermediateCatchEvent id="pay">'
    '<bpmn:messageEventDefinition messageRef="Message_Pay" /></bpmn:intermediateCatchEvent>\n'
)
TIMER = (
    '    <bpmn:intermediateCatchEvent id="late"><bpmn:timerEventDefinition>'
    '<bpmn:timeDuration xsi:type="bpmn:tFormalExpression">PT1H</bpmn:timeDuration>'
    "</bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>\n"
)
SIGNAL = (
    '    <bpmn:intermediateCatchEvent id="stop">'
    '<bpmn:signalEventDefinition signalRef="Signal_Stop" /></bpmn:intermediateCatchEvent>\n'
)
ENDS = (
    '    <bpmn:endEvent id="end" />\n'
    '    <bpmn:sequenceFlow id="pay_end" sourceRef="pay" targetRef="end" />\n'
    '    <bpmn:sequenceFlow id="late_end" sourceRef="late" targetRef="end" />\n'
)


def document(body: str) -> str:
    return f'{HEAD}  <bpmn:process id="p" isExecutable="true">\n{body}  </bpmn:process>\n' + (
        "</bpmn:definitions>\n"
    )


def flow(flow_id: str, source: str, target: str, condition: str | None = None) -> str:
    if condition is None:
        return (
            f'    <bpmn:sequenceFlow id="{flow_id}" sourceRef="{source}" targetRef="{target}" />\n'
        )
    return (
        f'    <bpmn:sequenceFlow id="{flow_id}" sourceRef="{source}" targetRef="{target}">'
        f'<bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">{condition}'
        "</bpmn:conditionExpression></bpmn:sequenceFlow>\n"
    )


GATEWAY = '    <bpmn:eventBasedGateway id="gw" />\n'
VALID = (
    START + GATEWAY + MESSAGE + TIMER + flow("gw_pay", "gw", "pay") + flow("gw_late", "gw", "late")
) + ENDS


def line_of(text: str, needle: str) -> int:
    return text.count("\n", 0, text.index(needle)) + 1


def test_a_valid_gateway_parses_and_writes_back() -> None:
    [model] = parse_bpmn(document(VALID), "ok.bpmn")
    gateway = model.node("gw")
    assert isinstance(gateway, EventBasedGateway)
    assert (gateway.incoming, gateway.outgoing) == (("to_gw",), ("gw_pay", "gw_late"))
    assert model.follows_event_gateway("pay") and model.follows_event_gateway("late")
    assert not model.follows_event_gateway("end")
    [again] = parse_bpmn(write_bpmn([model]), "again.bpmn")
    assert again == model
    assert '<bpmn:eventBasedGateway id="gw">' in write_bpmn([model])


def test_the_builder_makes_the_same_gateway() -> None:
    built = (
        ProcessBuilder("p")
        .start_event("start")
        .event_based_gateway("gw")
        .intermediate_catch_event("pay", message="payment")
        .intermediate_catch_event("late", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("end")
        .flow("start", "gw", id="to_gw")
        .flow("gw", "pay", id="gw_pay")
        .flow("gw", "late", id="gw_late")
        .flow("pay", "end", id="pay_end")
        .flow("late", "end", id="late_end")
        .build()
    )
    [parsed] = parse_bpmn(document(VALID), "ok.bpmn")
    assert built == parsed


REFUSED = [
    pytest.param(
        VALID.replace(GATEWAY, '    <bpmn:eventBasedGateway id="gw" instantiate="true" />\n'),
        '<bpmn:eventBasedGateway id="gw" instantiate',
        "gw",
        'eventBasedGateway with instantiate="true" is not supported',
        id="instantiating",
    ),
    pytest.param(
        VALID.replace(
            GATEWAY, '    <bpmn:eventBasedGateway id="gw" eventGatewayType="Parallel" />\n'
        ),
        '<bpmn:eventBasedGateway id="gw" eventGatewayType',
        "gw",
        'eventGatewayType="Parallel" is not supported',
        id="parallel-type",
    ),
    pytest.param(
        '    <bpmn:startEvent id="start" />\n'
        + flow("start_end", "start", "end")
        + GATEWAY
        + MESSAGE
        + TIMER
        + flow("gw_pay", "gw", "pay")
        + flow("gw_late", "gw", "late")
        + ENDS,
        GATEWAY.strip(),
        "gw",
        "an event-based gateway needs an incoming flow",
        id="no-incoming-flow",
    ),
    pytest.param(
        START + GATEWAY + MESSAGE + TIMER + ENDS,
        GATEWAY.strip(),
        "gw",
        "an event-based gateway needs an outgoing flow to a catch event",
        id="no-outgoing-flow",
    ),
    pytest.param(
        VALID.replace(
            GATEWAY,
            '    <bpmn:eventBasedGateway id="gw" xmlns:camunda="http://camunda.org/schema/1.0/bpmn"'
            ' camunda:asyncAfter="true" />\n',
        ),
        '<bpmn:eventBasedGateway id="gw" xmlns:camunda',
        "gw",
        "camunda:asyncAfter is not supported on an event-based gateway",
        id="async-after",
    ),
    pytest.param(
        START
        + GATEWAY
        + MESSAGE
        + '    <bpmn:userTask id="review" />\n'
        + flow("gw_pay", "gw", "pay")
        + flow("gw_review", "gw", "review")
        + flow("review_end", "review", "end")
        + TIMER
        + ENDS,
        GATEWAY.strip(),
        "gw",
        "can only lead to intermediate catch events of a message, a timer or a signal, not to "
        "userTask 'review'",
        id="task-after-gateway",
    ),
    pytest.param(
        START
        + GATEWAY
        + MESSAGE
        + '    <bpmn:receiveTask id="wait" messageRef="Message_Pay" />\n'
        + flow("gw_pay", "gw", "pay")
        + flow("gw_wait", "gw", "wait")
        + flow("wait_end", "wait", "end")
        + TIMER
        + ENDS,
        GATEWAY.strip(),
        "gw",
        "not to receiveTask 'wait'",
        id="receive-task-after-gateway",
    ),
    pytest.param(
        VALID + flow("start_late", "start", "late"),
        TIMER.strip()[:40],
        "late",
        "an intermediate catch event after event-based gateway 'gw' cannot have other incoming",
        id="catch-event-with-another-incoming-flow",
    ),
    pytest.param(
        START
        + GATEWAY
        + MESSAGE
        + TIMER
        + flow("gw_pay", "gw", "pay", "${ok}")
        + flow("gw_late", "gw", "late")
        + ENDS,
        '<bpmn:sequenceFlow id="gw_pay"',
        "gw_pay",
        "an event-based gateway's outgoing flows cannot have conditions",
        id="conditional-flow",
    ),
]


@pytest.mark.parametrize(("body", "needle", "element_id", "message"), REFUSED)
def test_refused_gateways_name_file_line_and_element(
    body: str, needle: str, element_id: str, message: str
) -> None:
    text = document(body)
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "orders/gateway.bpmn")
    error = str(caught.value)
    assert message in error
    assert "orders/gateway.bpmn" in error
    assert f"line {line_of(text, needle)}" in error
    assert f"element '{element_id}'" in error


def test_a_single_outgoing_flow_is_accepted_as_camunda_7_does() -> None:
    body = START + GATEWAY + MESSAGE + flow("gw_pay", "gw", "pay") + TIMER + ENDS
    body = body.replace(
        '    <bpmn:sequenceFlow id="late_end" sourceRef="late" targetRef="end" />\n', ""
    ).replace(TIMER, "")
    [model] = parse_bpmn(document(body), "single.bpmn")
    assert model.node("gw").outgoing == ("gw_pay",)


def test_the_builder_refuses_what_the_parser_refuses() -> None:
    builder = (
        ProcessBuilder("p")
        .start_event("start")
        .event_based_gateway("gw")
        .intermediate_catch_event("pay", message="payment")
        .user_task("review")
        .end_event("end")
        .chain("start", "gw", "pay", "end")
        .chain("gw", "review", "end")
    )
    with pytest.raises(ModelError, match="not to userTask 'review'") as caught:
        builder.build()
    assert caught.value.element_id == "gw"


def test_catch_events_after_the_modeler_files_gateway() -> None:
    [model] = parse_bpmn((DATA / "payment_wait.bpmn").read_bytes(), "payment_wait.bpmn")
    events = [model.node(model.flow(f).target) for f in model.node("Gateway_Wait").outgoing]
    assert all(isinstance(e, IntermediateCatchEvent) for e in events)
    assert [e.id for e in events] == ["Event_Payment", "Event_Timeout", "Event_Cancel"]
    assert [
        (e.message_name, e.signal_name) for e in events if isinstance(e, IntermediateCatchEvent)
    ] == [
        ("payment", None),
        (None, None),
        (None, "cancel"),
    ]
