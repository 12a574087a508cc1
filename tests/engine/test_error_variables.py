"""camunda:errorCodeVariable / camunda:errorMessageVariable: the event that catches a BPMN error
puts its code and message into the variables it names, whether a handler raised the error or an
external task's worker reported it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine
from engine.bpmn import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import BpmnError, ModelError
from engine.model import BoundaryEvent, StartEvent

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def check_claim(ctx: TaskContext) -> dict[str, Any]:
    if ctx.get("amount", 0) > 1000:
        raise BpmnError("CLAIM_REJECTED", "amount above the policy's limit")
    return {"checked": True}


@pytest.fixture
def deployed(engine: Engine) -> Engine:
    engine.register_handler("checkClaim", check_claim)
    engine.deploy(DATA / "claim_payout.bpmn")
    return engine


def test_a_boundary_event_sets_the_code_and_message_a_handler_threw(deployed: Engine) -> None:
    instance = deployed.start_latest("claim_payout", {"amount": 5000})
    [task] = instance.user_tasks()
    assert task.node_id == "Task_Explain"
    assert instance.variables() == {
        "amount": 5000,
        "rejectionCode": "CLAIM_REJECTED",
        "rejectionReason": "amount above the policy's limit",
    }


def test_an_error_start_event_sets_the_code_and_message_a_worker_reported(
    deployed: Engine,
) -> None:
    instance = deployed.start_latest("claim_payout", {"amount": 10})
    [external] = deployed.fetch_and_lock("bank-1", {"bank-transfer": 60_000})
    deployed.external_task_bpmn_error(external["id"], "bank-1", "BANK_DOWN", "core banking is down")
    [task] = instance.user_tasks()
    assert task.node_id == "Task_Investigate"
    assert instance.variables() == {
        "amount": 10,
        "checked": True,
        "failureCode": "BANK_DOWN",
        "failureMessage": "core banking is down",
    }


def test_an_error_without_a_message_sets_the_message_variable_to_null(deployed: Engine) -> None:
    instance = deployed.start_latest("claim_payout", {"amount": 10})
    [external] = deployed.fetch_and_lock("bank-1", {"bank-transfer": 60_000})
    deployed.external_task_bpmn_error(external["id"], "bank-1", "BANK_DOWN")
    variables = instance.variables()
    assert (variables["failureCode"], variables["failureMessage"]) == ("BANK_DOWN", None)


def test_the_attributes_are_read_built_and_written_back() -> None:
    [model] = parse_bpmn((DATA / "claim_payout.bpmn").read_bytes(), "claim_payout.bpmn")
    boundary = model.node("Event_Rejected")
    start = model.node("StartEvent_Failure")
    assert isinstance(boundary, BoundaryEvent) and isinstance(start, StartEvent)
    assert (boundary.error_code_variable, boundary.error_message_variable) == (
        "rejectionCode",
        "rejectionReason",
    )
    assert (start.error_code_variable, start.error_message_variable) == (
        "failureCode",
        "failureMessage",
    )
    [again] = parse_bpmn(write_bpmn([model]), "written.bpmn")
    assert again == model

    built = (
        ProcessBuilder("built")
        .start_event("start")
        .service_task("work", handler="work")
        .boundary_event("caught", "work", error=True, error_code_variable="code")
        .end_event("end")
        .end_event("failed")
        .chain("start", "work", "end")
        .flow("caught", "failed")
        .build()
    )
    caught = built.node("caught")
    assert isinstance(caught, BoundaryEvent)
    assert (caught.error_code_variable, caught.error_message_variable) == ("code", None)


@pytest.mark.parametrize(
    ("event", "problem"),
    [
        (
            '<bpmn:endEvent id="e"><bpmn:errorEventDefinition '
            'camunda:errorCodeVariable="code" /></bpmn:endEvent>',
            "camunda:errorCodeVariable belongs on an error event that catches, not on endEvent",
        ),
        (
            '<bpmn:boundaryEvent id="e" attachedToRef="t"><bpmn:outgoing>f2</bpmn:outgoing>'
            '<bpmn:errorEventDefinition camunda:errorMessageVariable="${x}" />'
            "</bpmn:boundaryEvent>",
            "camunda:errorMessageVariable must name a variable",
        ),
    ],
)
def test_misplaced_or_malformed_variables_are_refused(event: str, problem: str) -> None:
    document = (
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">'
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />'
        '<bpmn:task id="t" /><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" />'
        f'{event}<bpmn:endEvent id="x" /><bpmn:sequenceFlow id="f2" sourceRef="e" targetRef="x" />'
        "</bpmn:process></bpmn:definitions>"
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(document, "bad.bpmn")
    assert problem in str(caught.value)
    assert caught.value.element_id == "e"
