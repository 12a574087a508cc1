"""A compensation event subprocess through /engine-rest as Camunda shows it: deployed as a BPMN
file, started by key; once a compensation end event compensates the completed subprocess, GET
/process-instance/{id}/activity-instances holds the waiting `compensationEndEvent` and the
subprocess as a scope again, with the event subprocess inside it and its user task inside that;
the task sees the subprocess's local variable as it was when the subprocess completed; GET
/history/activity-instance then shows the subprocess twice (its run and its compensation), the
`compensationStartEvent`, and no run of the subprocess's own compensation handler."""

from __future__ import annotations

from typing import Any

import httpx

from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

TRIP = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:process id="trip_esp" name="Trip" isExecutable="true">
    <bpmn:startEvent id="Start"/>
    <bpmn:subProcess id="Sub_Trip" name="Book the trip">
      <bpmn:extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="reservation">R-${tripNo}</camunda:inputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
      <bpmn:startEvent id="Trip_Start"/>
      <bpmn:task id="Task_Hotel" name="Book hotel"/>
      <bpmn:boundaryEvent id="Hotel_Booked" attachedToRef="Task_Hotel">
        <bpmn:compensateEventDefinition/>
      </bpmn:boundaryEvent>
      <bpmn:userTask id="Task_CancelHotel" name="Cancel hotel" isForCompensation="true"/>
      <bpmn:endEvent id="Trip_End"/>
      <bpmn:sequenceFlow id="t1" sourceRef="Trip_Start" targetRef="Task_Hotel"/>
      <bpmn:sequenceFlow id="t2" sourceRef="Task_Hotel" targetRef="Trip_End"/>
      <bpmn:association id="a1" sourceRef="Hotel_Booked" targetRef="Task_CancelHotel"/>
      <bpmn:subProcess id="Esp_Undo" name="Undo the trip" triggeredByEvent="true"
          isForCompensation="true">
        <bpmn:startEvent id="Undo_Start" name="Trip undone">
          <bpmn:compensateEventDefinition/>
        </bpmn:startEvent>
        <bpmn:userTask id="Task_Tell" name="Tell the customer"/>
        <bpmn:endEvent id="Undo_End"/>
        <bpmn:sequenceFlow id="u1" sourceRef="Undo_Start" targetRef="Task_Tell"/>
        <bpmn:sequenceFlow id="u2" sourceRef="Task_Tell" targetRef="Undo_End"/>
      </bpmn:subProcess>
    </bpmn:subProcess>
    <bpmn:userTask id="Task_Review" name="Review"/>
    <bpmn:endEvent id="End_Undo" name="Undo everything">
      <bpmn:compensateEventDefinition/>
    </bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Sub_Trip"/>
    <bpmn:sequenceFlow id="f2" sourceRef="Sub_Trip" targetRef="Task_Review"/>
    <bpmn:sequenceFlow id="f3" sourceRef="Task_Review" targetRef="End_Undo"/>
  </bpmn:process>
</bpmn:definitions>
"""


def history(rest: httpx.Client, instance_id: str, **params: str) -> list[dict[str, Any]]:
    response = rest.get(
        "/history/activity-instance",
        params={
            "processInstanceId": instance_id,
            "sortBy": "startTime",
            "sortOrder": "asc",
            **params,
        },
    )
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def one_task(client: httpx.Client, instance_id: str) -> dict[str, Any]:
    [task] = client.get("/task", params={"processInstanceId": instance_id}).json()
    assert isinstance(task, dict)
    return task


def test_compensating_a_subprocess_runs_its_event_subprocess_in_the_tree_and_history(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("trip_esp.bpmn", TRIP))
    instance = start(operator, "trip_esp", {"tripNo": {"value": 7, "type": "Integer"}})
    review = one_task(operator, instance["id"])
    assert review["taskDefinitionKey"] == "Task_Review"
    # The completed subprocess's snapshot is a variable of its own scope, not the process's.
    listed = rest.get("/variable-instance", params={"processInstanceIdIn": instance["id"]})
    assert listed.status_code == 200, listed.text
    kept = {v["name"]: v for v in listed.json()}
    assert kept["reservation"]["value"] == "R-7"
    assert kept["reservation"]["activityInstanceId"] not in (None, "None", instance["id"])
    assert kept["tripNo"]["activityInstanceId"] == instance["id"]
    done = operator.post(
        f"/task/{review['id']}/complete",
        json={"variables": {"status": {"value": "refused", "type": "String"}}},
    )
    assert done.status_code == 204, done.text

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    top = {a["activityId"]: a for a in tree["childActivityInstances"]}
    assert set(top) == {"End_Undo", "Sub_Trip"}
    assert top["End_Undo"]["activityType"] == "compensationEndEvent"
    trip = top["Sub_Trip"]
    assert (trip["activityType"], trip["activityName"]) == ("subProcess", "Book the trip")
    [esp] = trip["childActivityInstances"]
    assert (esp["activityId"], esp["activityType"]) == ("Esp_Undo", "subProcess")
    assert esp["parentActivityInstanceId"] == trip["id"]
    [tell] = esp["childActivityInstances"]
    assert (tell["activityId"], tell["activityType"]) == ("Task_Tell", "userTask")

    task = one_task(operator, instance["id"])
    assert task["taskDefinitionKey"] == "Task_Tell"
    seen = operator.get(f"/task/{task['id']}/variables").json()
    assert seen["reservation"] == {"type": "String", "value": "R-7", "valueInfo": {}}
    assert seen["status"]["value"] == "refused"
    assert "reservation" not in operator.get(f"/process-instance/{instance['id']}/variables").json()
    done = operator.post(f"/task/{task['id']}/complete", json={})
    assert done.status_code == 204, done.text

    finished = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert finished["state"] == "COMPLETED"
    listed = rest.get("/variable-instance", params={"processInstanceIdIn": instance["id"]})
    assert "reservation" not in {v["name"] for v in listed.json()}  # gone with its compensation
    seen_history = history(rest, instance["id"])
    ids = [a["activityId"] for a in seen_history]
    assert ids.count("Sub_Trip") == 2  # its run, then its compensation
    assert "Task_CancelHotel" not in ids  # the event subprocess replaced the inner handler
    assert ids[-5:] == ["Sub_Trip", "Esp_Undo", "Undo_Start", "Task_Tell", "Undo_End"]
    by_type = history(rest, instance["id"], activityType="compensationStartEvent")
    assert [(a["activityId"], a["activityName"]) for a in by_type] == [
        ("Undo_Start", "Trip undone")
    ]
    assert all(a["endTime"] is not None for a in seen_history)
    [end] = [a for a in seen_history if a["activityId"] == "End_Undo"]
    assert end["activityType"] == "compensationEndEvent" and end["canceled"] is False


def cancelled_transaction() -> ProcessModel:
    """tx[ inner[ book (undo: the user task unbook) ; undo_inner: compensation start -> throw
    naming `book` -> end ] -> confirm (user task) -> cancel end ]; tx's cancel boundary -> end."""
    b = ProcessBuilder("tx_esp")
    b.start_event("start")
    b.transaction("tx", "Book")
    b.start_event("tx_start", parent="tx")
    b.sub_process("inner", "Inner", parent="tx")
    b.start_event("inner_start", parent="inner")
    b.task("book", "Book", parent="inner")
    b.user_task("unbook", "Unbook", parent="inner")
    b.compensation_boundary("booked", "book", "unbook")
    b.end_event("inner_end", parent="inner")
    b.chain("inner_start", "book", "inner_end")
    b.sub_process("undo_inner", "Undo inner", parent="inner", triggered_by_event=True)
    b.compensation_start("undo_start", parent="undo_inner")
    b.compensation_throw("rethrow", "Undo booking", parent="undo_inner", activity="book")
    b.end_event("undo_end", parent="undo_inner")
    b.chain("undo_start", "rethrow", "undo_end")
    b.user_task("confirm", "Confirm", parent="tx")
    b.end_event("cancel", "Cancel", cancel=True, parent="tx")
    b.chain("tx_start", "inner", "confirm", "cancel")
    b.cancel_boundary("cancelled", "tx", "Cancelled")
    b.end_event("end")
    b.end_event("after_cancel")
    b.chain("start", "tx", "end")
    b.chain("cancelled", "after_cancel")
    return b.build()


def shape(node: dict[str, Any]) -> tuple[str, list[Any]]:
    children = sorted(
        (shape(child) for child in node["childActivityInstances"]), key=lambda c: c[0]
    )
    return (node["activityId"], children)


def test_a_transaction_cancel_compensates_a_subprocess_through_its_event_subprocess(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("tx_esp.bpmn", write_bpmn([cancelled_transaction()])))
    instance = start(operator, "tx_esp")
    confirm = one_task(operator, instance["id"])
    assert confirm["taskDefinitionKey"] == "confirm"
    done = operator.post(f"/task/{confirm['id']}/complete", json={})
    assert done.status_code == 204, done.text

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    # As Camunda's tree shows it: the handler the event subprocess's throw started runs in the
    # compensated subprocess's scope, beside the event subprocess.
    assert [shape(child) for child in tree["childActivityInstances"]] == [
        (
            "tx",
            [
                ("cancel", []),
                ("inner", [("unbook", []), ("undo_inner", [("rethrow", [])])]),
            ],
        )
    ]
    [tx] = tree["childActivityInstances"]
    assert tx["activityType"] == "transaction"
    inner = next(a for a in tx["childActivityInstances"] if a["activityId"] == "inner")
    types = {a["activityId"]: a["activityType"] for a in inner["childActivityInstances"]}
    assert types == {"undo_inner": "subProcess", "unbook": "userTask"}

    unbook = one_task(operator, instance["id"])
    assert unbook["taskDefinitionKey"] == "unbook"
    done = operator.post(f"/task/{unbook['id']}/complete", json={})
    assert done.status_code == 204, done.text
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"
    seen = history(rest, instance["id"])
    ids = [a["activityId"] for a in seen]
    assert ids.count("unbook") == 1 and ids.count("undo_start") == 1
    assert ids[-2:] == ["cancelled", "after_cancel"]
    by_id = {a["activityId"]: a for a in seen}
    assert by_id["tx"]["canceled"] is True
    assert by_id["rethrow"]["activityType"] == "intermediateCompensationThrowEvent"
    assert by_id["undo_start"]["activityType"] == "compensationStartEvent"
