"""A process whose only start event is a message start event, started over /engine-rest by key
and by id as Camunda 7 starts it (through that event): the answer is the new instance, GET
/history/activity-instance shows the `messageStartEvent` as its first, finished activity, GET
/history/process-instance/{id} names it as `startActivityId`, and the activity-instance tree
holds the task after it; with two message start events and no none start event the start is
refused naming the missing default start activity, and nothing starts."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.conftest import deploy, start
from tests.server import LiveServer

ONE_MESSAGE = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:message id="m1" name="invoiceArrived"/>
  <bpmn:process id="invoice_in" name="Invoice in" isExecutable="true">
    <bpmn:startEvent id="Start_Invoice" name="Invoice arrived">
      <bpmn:messageEventDefinition messageRef="m1"/>
    </bpmn:startEvent>
    <bpmn:userTask id="Task_Review" name="Review invoice"/>
    <bpmn:endEvent id="End"/>
    <bpmn:sequenceFlow id="f1" sourceRef="Start_Invoice" targetRef="Task_Review"/>
    <bpmn:sequenceFlow id="f2" sourceRef="Task_Review" targetRef="End"/>
  </bpmn:process>
</bpmn:definitions>
"""

TWO_MESSAGES = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:message id="m1" name="orderByMail"/>
  <bpmn:message id="m2" name="orderByPhone"/>
  <bpmn:process id="order_in" name="Order in" isExecutable="true">
    <bpmn:startEvent id="By_Mail"><bpmn:messageEventDefinition messageRef="m1"/></bpmn:startEvent>
    <bpmn:startEvent id="By_Phone"><bpmn:messageEventDefinition messageRef="m2"/></bpmn:startEvent>
    <bpmn:userTask id="Task_Take"/>
    <bpmn:endEvent id="End"/>
    <bpmn:sequenceFlow id="f1" sourceRef="By_Mail" targetRef="Task_Take"/>
    <bpmn:sequenceFlow id="f2" sourceRef="By_Phone" targetRef="Task_Take"/>
    <bpmn:sequenceFlow id="f3" sourceRef="Task_Take" targetRef="End"/>
  </bpmn:process>
</bpmn:definitions>
"""


def activities(rest: httpx.Client, instance_id: str) -> list[dict[str, Any]]:
    response = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance_id, "sortBy": "startTime", "sortOrder": "asc"},
    )
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def test_a_message_start_process_starts_by_key_and_by_id_through_its_event(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deployed = deploy(rest, ("invoice_in.bpmn", ONE_MESSAGE))
    [definition] = deployed["deployedProcessDefinitions"].values()
    instance = start(operator, "invoice_in", {"amount": {"value": 30, "type": "Integer"}})
    assert instance["definitionId"] == definition["id"]
    assert instance["ended"] is False

    seen = activities(rest, instance["id"])
    assert [(a["activityId"], a["activityType"]) for a in seen] == [
        ("Start_Invoice", "messageStartEvent"),
        ("Task_Review", "userTask"),
    ]
    assert seen[0]["activityName"] == "Invoice arrived"
    assert seen[0]["endTime"] is not None and seen[1]["endTime"] is None
    by_type = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityType": "messageStartEvent"},
    ).json()
    assert [a["activityId"] for a in by_type] == ["Start_Invoice"]

    historic = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert historic["startActivityId"] == "Start_Invoice"
    assert historic["state"] == "ACTIVE"

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    assert tree["activityType"] == "processDefinition"
    assert [(a["activityId"], a["activityType"]) for a in tree["childActivityInstances"]] == [
        ("Task_Review", "userTask")
    ]
    variables = operator.get(f"/process-instance/{instance['id']}/variables").json()
    assert variables["amount"]["value"] == 30

    by_id = operator.post(f"/process-definition/{definition['id']}/start", json={})
    assert by_id.status_code == 200, by_id.text
    assert [a["activityId"] for a in activities(rest, by_id.json()["id"])] == [
        "Start_Invoice",
        "Task_Review",
    ]


def test_two_message_start_events_and_no_none_start_are_refused(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deployed = deploy(rest, ("order_in.bpmn", TWO_MESSAGES))
    [definition] = deployed["deployedProcessDefinitions"].values()
    for path in (
        "/process-definition/key/order_in/start",
        f"/process-definition/{definition['id']}/start",
    ):
        refused = operator.post(path, json={})
        assert refused.status_code == 400, refused.text
        body = refused.json()
        assert set(body) >= {"type", "message"}
        assert body["message"].startswith(
            f"Cannot instantiate process definition {definition['id']}: Process 'Order in' has "
            "no default start activity (e.g. none start event)"
        )
    count = rest.get("/process-instance/count", params={"processDefinitionKey": "order_in"})
    assert count.json() == {"count": 0}
    correlated = operator.post(
        "/message", json={"messageName": "orderByPhone", "resultEnabled": True}
    )
    assert correlated.status_code == 200, correlated.text
    [result] = correlated.json()
    assert result["resultType"] == "ProcessDefinition"
    started = result["processInstance"]["id"]
    assert [a["activityType"] for a in activities(rest, started)][:1] == ["messageStartEvent"]
