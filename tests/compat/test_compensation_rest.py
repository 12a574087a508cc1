"""Compensation through /engine-rest as Camunda shows it: the compensation throw and end events
by Camunda's activity types, the handler as an activity instance of its own type while the throw
event waits for it, and the whole run in the history."""

from __future__ import annotations

import httpx

from app.camunda.dto import activity_type
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.compat.conftest import deploy, start
from tests.server import LiveServer


def refund_model() -> ProcessModel:
    """pay -> throw (waits for the user task `refund`, pay's handler) -> compensation end event
    that finds nothing left to compensate."""
    b = ProcessBuilder("refund-flow")
    b.start_event("start")
    b.task("pay", "Pay")
    b.user_task("refund", "Refund")
    b.compensation_boundary("paid", "pay", "refund")
    b.compensation_throw("undo", "Undo payment")
    b.compensation_throw("done", "Nothing left", end=True)
    b.chain("start", "pay", "undo", "done")
    return b.build()


def test_compensation_events_carry_camunda_activity_types() -> None:
    model = refund_model()
    names = {node.id: activity_type(node) for node in model.nodes}
    assert names == {
        "start": "startEvent",
        "pay": "task",
        "refund": "userTask",
        "paid": "compensationBoundaryCatch",
        "undo": "intermediateCompensationThrowEvent",
        "done": "compensationEndEvent",
    }


def test_a_waiting_throw_and_its_handler_in_the_tree_and_the_history(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("refund.bpmn", write_bpmn([refund_model()])))
    instance = start(operator, "refund-flow")
    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    shown = sorted((a["activityId"], a["activityType"]) for a in tree["childActivityInstances"])
    assert shown == [("refund", "userTask"), ("undo", "intermediateCompensationThrowEvent")]
    waiting = rest.get(
        "/history/activity-instance",
        params={
            "processInstanceId": instance["id"],
            "activityType": "intermediateCompensationThrowEvent",
        },
    ).json()
    assert [(a["activityId"], a["endTime"]) for a in waiting] == [("undo", None)]

    [task] = operator.get("/task", params={"processInstanceId": instance["id"]}).json()
    assert task["taskDefinitionKey"] == "refund"
    done = operator.post(f"/task/{task['id']}/complete", json={})
    assert done.status_code == 204, done.text
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"
    activities = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "sortBy": "startTime", "sortOrder": "asc"},
    ).json()
    assert sorted((a["activityId"], a["activityType"]) for a in activities) == [
        ("done", "compensationEndEvent"),
        ("pay", "task"),
        ("refund", "userTask"),
        ("start", "startEvent"),
        ("undo", "intermediateCompensationThrowEvent"),
    ]
    assert all(a["endTime"] is not None and not a["canceled"] for a in activities)
