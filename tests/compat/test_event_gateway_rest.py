"""An event-based gateway through /engine-rest: while the token waits, the activity-instance
tree shows the gateway as an "eventBasedGateway" activity; the winning message moves it on, a
late correlation of the other message fails as Camunda's does (400, no match), and the history
names the gateway and the winning catch event."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.compat.conftest import deploy, start
from tests.server import LiveServer

MODEL = Path(__file__).parent.parent / "data" / "bpmn" / "payment_wait.bpmn"


def test_waiting_at_an_event_based_gateway_through_engine_rest(
    server: LiveServer, rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("payment_wait.bpmn", MODEL.read_text()))
    variables = {"timeout": {"value": "PT1H", "type": "String"}}
    instance = start(operator, "payment-wait", variables, businessKey="order-7")

    tree = operator.get(f"/process-instance/{instance['id']}/activity-instances").json()
    [gateway] = tree["childActivityInstances"]
    assert (gateway["activityId"], gateway["activityType"], gateway["activityName"]) == (
        "Gateway_Wait",
        "eventBasedGateway",
        "What happens first?",
    )
    assert gateway["parentActivityInstanceId"] == instance["id"]
    assert gateway["childActivityInstances"] == [] and tree["childTransitionInstances"] == []
    waiting = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "activityType": "eventBasedGateway"},
    ).json()
    assert [(a["activityId"], a["endTime"]) for a in waiting] == [("Gateway_Wait", None)]

    paid = operator.post("/message", json={"messageName": "payment", "businessKey": "order-7"})
    assert paid.status_code == 204, paid.text
    history = rest.get(f"/history/process-instance/{instance['id']}").json()
    assert history["state"] == "COMPLETED"
    activities = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": instance["id"], "sortBy": "startTime", "sortOrder": "asc"},
    ).json()
    assert sorted((a["activityId"], a["activityType"]) for a in activities) == [
        ("Event_Payment", "intermediateMessageCatch"),
        ("Event_Shipped", "noneEndEvent"),
        ("Gateway_Wait", "eventBasedGateway"),
        ("StartEvent_Order", "startEvent"),
    ]
    assert all(a["endTime"] is not None for a in activities)

    # The losing events were retired with the win: a late message matches nothing.
    late = operator.post("/message", json={"messageName": "payment", "businessKey": "order-7"})
    assert late.status_code == 400, late.text
    assert late.json()["type"] == "RestException"
    assert "No process definition or execution matches the parameters" in late.json()["message"]
    signalled = operator.post("/signal", json={"name": "cancel"})
    assert signalled.status_code == 204, signalled.text
    assert rest.get(f"/history/process-instance/{instance['id']}").json()["state"] == "COMPLETED"


def test_a_refused_gateway_names_file_line_and_element(rest: httpx.Client) -> None:
    bad = MODEL.read_text().replace(
        '<bpmn:eventBasedGateway id="Gateway_Wait" name="What happens first?">',
        '<bpmn:eventBasedGateway id="Gateway_Wait" name="What happens first?" instantiate="true">',
    )
    files = [("data", ("payment_wait.bpmn", bad.encode(), "application/octet-stream"))]
    response = rest.post("/deployment/create", data={"deployment-name": "bad"}, files=files)
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    assert 'eventBasedGateway with instantiate="true" is not supported' in message
    assert "payment_wait.bpmn" in message and "line 8" in message
    assert "Gateway_Wait" in message
    assert rest.get("/process-definition", params={"key": "payment-wait"}).json() == []
