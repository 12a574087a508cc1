"""Send tasks and message throw events run as service tasks do in Camunda 7: a registered
handler, or an external task on a topic; a message throw event with neither passes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.camunda.dto import activity_type
from engine.api import Engine
from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import ModelError
from engine.model import ProcessModel
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"
FILE = DATA / "order_confirmation.bpmn"


def order_confirmation() -> ProcessModel:
    """The builder twin of tests/data/bpmn/order_confirmation.bpmn."""
    return (
        ProcessBuilder("order_confirmation", "Order confirmation")
        .start_event("StartEvent_Order", "Order paid")
        .service_task(
            "Task_SendConfirmation", "Send confirmation", handler="sendConfirmation", send=True
        )
        .intermediate_throw_event(
            "Event_OrderPick", "Order picking", message="OrderPick", topic="warehouse-pick"
        )
        .intermediate_throw_event("Event_Announce", "Announce shipment", message_event=True)
        .service_task("Task_SendInvoice", "Mail invoice", topic="invoice-mail", send=True)
        .end_event(
            "EndEvent_Shipped", "Customer notified", handler="com.acme.orders.NotifyCustomer"
        )
        .flow("StartEvent_Order", "Task_SendConfirmation", id="Flow_ToConfirm")
        .flow("Task_SendConfirmation", "Event_OrderPick", id="Flow_ToPick")
        .flow("Event_OrderPick", "Event_Announce", id="Flow_ToLog")
        .flow("Event_Announce", "Task_SendInvoice", id="Flow_ToInvoice")
        .flow("Task_SendInvoice", "EndEvent_Shipped", id="Flow_ToShipped")
        .build()
    )


def test_the_file_the_builder_and_the_written_file_are_one_model() -> None:
    [parsed] = parse_bpmn(FILE.read_bytes(), FILE.name)
    built = order_confirmation()
    # The file gives the pick event a priority the builder leaves at 0.
    assert parsed.node("Event_OrderPick").task_priority == 40  # type: ignore[attr-defined]
    assert [n for n in parsed.nodes if n.id != "Event_OrderPick"] == [
        n for n in built.nodes if n.id != "Event_OrderPick"
    ]
    [again] = parse_bpmn(write_bpmn([parsed]), "written.bpmn")
    assert again == parsed


def test_engine_rest_activity_types_are_camundas() -> None:
    [model] = parse_bpmn(FILE.read_bytes(), FILE.name)
    assert {node.id: activity_type(node) for node in model.nodes} == {
        "StartEvent_Order": "startEvent",
        "Task_SendConfirmation": "sendTask",
        "Event_OrderPick": "intermediateMessageThrowEvent",
        "Event_Announce": "intermediateMessageThrowEvent",
        "Task_SendInvoice": "sendTask",
        "EndEvent_Shipped": "messageEndEvent",
    }


def test_handlers_and_external_tasks_carry_the_messages(engine: Engine) -> None:
    sent: list[tuple[str, str]] = []

    def record(ctx: TaskContext) -> dict[str, Any]:
        sent.append((ctx.node_id, ctx.get("order")))
        return {f"{ctx.node_id}_done": True}

    engine.register_handler("sendConfirmation", record)
    engine.register_handler("com.acme.orders.NotifyCustomer", record)
    engine.deploy(FILE)
    instance = engine.start_latest("order_confirmation", {"order": "A-17"})
    assert sent == [("Task_SendConfirmation", "A-17")]

    [pick] = engine.fetch_and_lock("picker", {"warehouse-pick": 60_000})
    assert (pick["node_id"], pick["topic"], pick["priority"]) == (
        "Event_OrderPick",
        "warehouse-pick",
        40,
    )
    engine.complete_external_task(pick["id"], "picker", {"picked": True})
    # The announcement has no implementation: the token passed it on to the invoice mail.
    [mail] = engine.fetch_and_lock("mailer", {"invoice-mail": 60_000})
    assert mail["node_id"] == "Task_SendInvoice"
    assert instance.info().state == InstanceState.ACTIVE
    engine.complete_external_task(mail["id"], "mailer")

    assert sent == [("Task_SendConfirmation", "A-17"), ("EndEvent_Shipped", "A-17")]
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {
        "order": "A-17",
        "Task_SendConfirmation_done": True,
        "picked": True,
        "EndEvent_Shipped_done": True,
    }
    [track] = instance.history()
    assert [(step.node_id, step.node_type) for step in track.steps] == [
        ("StartEvent_Order", "startEvent"),
        ("Task_SendConfirmation", "sendTask"),
        ("Event_OrderPick", "intermediateThrowEvent"),
        ("Event_Announce", "intermediateThrowEvent"),
        ("Task_SendInvoice", "sendTask"),
        ("EndEvent_Shipped", "endEvent"),
    ]


def wrap(body: str) -> str:
    return (
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">'
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />'
        f'{body}<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="n" />'
        "</bpmn:process></bpmn:definitions>"
    )


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ('<bpmn:sendTask id="n" />', "a send task needs exactly one implementation"),
        (
            '<bpmn:sendTask id="n" camunda:class="a.B" camunda:type="external" '
            'camunda:topic="t" />',
            "a send task needs exactly one implementation",
        ),
        (
            '<bpmn:endEvent id="n"><bpmn:messageEventDefinition camunda:class="a.B" '
            'camunda:delegateExpression="${c}" /></bpmn:endEvent>',
            "a message throw event needs exactly one implementation",
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:messageEventDefinition '
            'camunda:type="soap" /></bpmn:intermediateThrowEvent>',
            'camunda:type="soap" is not supported',
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:messageEventDefinition '
            'messageRef="nowhere" /></bpmn:intermediateThrowEvent>',
            "messageRef 'nowhere' names no bpmn:message",
        ),
        (
            '<bpmn:intermediateThrowEvent id="n"><bpmn:messageEventDefinition '
            'camunda:expression="${a + 1}" /></bpmn:intermediateThrowEvent>',
            "camunda:expression must name a handler",
        ),
    ],
)
def test_malformed_implementations_are_refused(body: str, problem: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_bpmn(wrap(body), "bad.bpmn")
    assert problem in str(caught.value)
    assert caught.value.element_id == "n"


@pytest.mark.parametrize(
    "body",
    [
        '<bpmn:endEvent id="n"><bpmn:messageEventDefinition /></bpmn:endEvent>',
        '<bpmn:intermediateThrowEvent id="n"><bpmn:messageEventDefinition />'
        "</bpmn:intermediateThrowEvent>",
        '<bpmn:sendTask id="n" camunda:class="com.acme.Send" />',
    ],
)
def test_elements_once_refused_are_accepted(body: str) -> None:
    """A message end or throw event without an implementation is a pass-through in Camunda 7;
    a send task with an implementation is a service task."""
    [model] = parse_bpmn(wrap(body), "accepted.bpmn")
    assert model.node("n").kind.value in ("endEvent", "intermediateThrowEvent", "sendTask")
