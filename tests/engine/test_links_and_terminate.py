"""Link events carry a token from a throw event to the catch event of the same name in its scope;
signal throw events let their token go on; a terminate end event inside a subprocess ends only
that subprocess, which then completes, while everything outside it carries on."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.camunda.dto import activity_type
from engine.api import Engine
from engine.bpmn import parse_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.states import InstanceState
from tests.engine.test_escalations import complete, visits, waiting

DATA = Path(__file__).parent.parent / "data" / "bpmn"


@pytest.mark.parametrize(
    ("urgent", "path"),
    [
        (
            True,
            [
                "StartEvent_Claim",
                "Task_Register",
                "Gateway_Kind",
                "Event_AnnounceUrgent",
                "LinkThrow_Urgent",
                "LinkCatch_Assess",
                "Task_Assess",
                "EndEvent_Closed",
            ],
        ),
        (
            False,
            [
                "StartEvent_Claim",
                "Task_Register",
                "Gateway_Kind",
                "LinkThrow_Normal",
                "LinkCatch_Assess",
                "Task_Assess",
                "EndEvent_Closed",
            ],
        ),
    ],
)
def test_both_link_throw_events_lead_to_the_one_catch_event(
    engine: Engine, urgent: bool, path: list[str]
) -> None:
    engine.deploy(DATA / "claim_intake.bpmn")
    instance = engine.start_latest("claim_intake", {"urgent": urgent})
    assert waiting(instance) == ["Task_Assess"]
    complete(engine, instance, "Task_Assess")
    assert instance.state == InstanceState.COMPLETED
    [track] = instance.history()
    assert [step.node_id for step in track.steps] == path
    assert {step.state for step in track.steps} == {"Completed"}


def _types(name: str) -> dict[str, str]:
    path = DATA / f"{name}.bpmn"
    [model] = parse_bpmn(path.read_bytes(), path.name)
    return {node.id: activity_type(node) for node in model.nodes}


def test_the_engine_rest_names_each_throw_and_catch_as_camunda_does() -> None:
    assert _types("claim_intake") == {
        "StartEvent_Claim": "startEvent",
        "Task_Register": "task",
        "Gateway_Kind": "exclusiveGateway",
        "Event_AnnounceUrgent": "intermediateSignalThrow",
        "LinkThrow_Urgent": "intermediateLinkThrowEvent",
        "LinkThrow_Normal": "intermediateLinkThrowEvent",
        "LinkCatch_Assess": "intermediateLinkCatch",
        "Task_Assess": "userTask",
        "EndEvent_Closed": "signalEndEvent",
    }
    escalations = _types("purchase_escalation")
    assert {
        node: escalations[node] for node in escalations if "escalation" in escalations[node].lower()
    } == {
        "Event_AskFinance": "intermediateEscalationThrowEvent",
        "EndEvent_Rejected": "escalationEndEvent",
        "Boundary_FinanceReview": "boundaryEscalation",
        "Boundary_Rejected": "boundaryEscalation",
    }
    start = (
        ProcessBuilder("p")
        .start_event("s")
        .end_event("e")
        .chain("s", "e")
        .sub_process("esp", triggered_by_event=True)
        .start_event("esp_s", parent="esp", escalation=True)
        .end_event("esp_e", parent="esp")
        .chain("esp_s", "esp_e")
        .build()
        .node("esp_s")
    )
    assert activity_type(start) == "escalationStartEvent"


def _terminating() -> ProcessModel:
    """Beside the subprocess a task waits; inside it a review with a non-interrupting reminder
    boundary event, a note taken by a non-interrupting escalation event subprocess, and a
    decision whose path ends in a terminate end event."""
    return (
        ProcessBuilder("terminate_inside")
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("outside")
        .end_event("outside_done")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .parallel_gateway("inner_fork", parent="sub")
        .user_task("review", parent="sub")
        .end_event("reviewed", parent="sub")
        .user_task("decide", parent="sub")
        .end_event("stop", parent="sub", terminate=True)
        .intermediate_throw_event("note", parent="sub", escalation_code="NOTE")
        .end_event("noted", parent="sub")
        .boundary_event("remind", "review", message="Remind", cancel_activity=False)
        .user_task("reminded", parent="sub")
        .end_event("reminded_done", parent="sub")
        .chain("remind", "reminded", "reminded_done")
        .sub_process("on_note", parent="sub", triggered_by_event=True)
        .start_event("on_note_s", parent="on_note", escalation_code="NOTE", interrupting=False)
        .user_task("take_note", parent="on_note")
        .end_event("note_taken", parent="on_note")
        .chain("on_note_s", "take_note", "note_taken")
        .chain("sub_s", "inner_fork", "review", "reviewed")
        .chain("inner_fork", "decide", "stop")
        .chain("inner_fork", "note", "noted")
        .user_task("after_sub")
        .end_event("e")
        .chain("s", "fork", "sub", "after_sub", "e")
        .chain("fork", "outside", "outside_done")
        .build()
    )


def test_a_terminate_end_event_in_a_subprocess_ends_only_that_subprocess(engine: Engine) -> None:
    engine.deploy(_terminating())
    instance = engine.start_latest("terminate_inside", business_key="t-1")
    engine.correlate_message("Remind", business_key="t-1")
    assert waiting(instance) == ["decide", "outside", "reminded", "review", "take_note"]
    complete(engine, instance, "decide")
    # Everything inside the subprocess ended; the subprocess completed and its token went on;
    # the branch outside it was not touched.
    assert waiting(instance) == ["after_sub", "outside"]
    found = visits(instance)
    for node in ("review", "reminded", "take_note", "on_note"):
        assert (node, "Terminated") in found
    assert ("stop", "Completed") in found
    assert ("sub", "Completed") in found
    state = instance.state
    assert state == InstanceState.ACTIVE
    complete(engine, instance, "outside")
    complete(engine, instance, "after_sub")
    assert instance.state == InstanceState.COMPLETED
