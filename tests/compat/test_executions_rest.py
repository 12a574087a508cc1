"""/engine-rest over HTTP: executions as Camunda's REST reference (7.24) serves them. Here an
execution is a running instance's own (its id is the instance's) or a live token (the
`executionId` tasks, jobs, external tasks and the activity-instance tree already answer).
GET and POST /execution with Camunda's filters, GET /execution/{id}, POST
/execution/{id}/signal (a receive task without a messageRef deployed from BPMN text, a message
catch, a user task, refusals), local variables, message subscriptions and their trigger; and the
same signal through the Python API. Answer shapes are pinned from the reference."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from engine.errors import NotFound
from tests.compat.conftest import deploy, start
from tests.server import LiveServer

# ExecutionDto, as Camunda's reference lists it for GET /execution.
EXECUTION_FIELDS = {"id", "processInstanceId", "ended", "tenantId"}
# EventSubscriptionDto, for GET /execution/{id}/messageSubscriptions/{messageName}.
SUBSCRIPTION_FIELDS = {
    "id", "eventType", "eventName", "executionId", "processInstanceId", "activityId",
    "createdDate", "tenantId",
}  # fmt: skip

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'id="Definitions_{key}" targetNamespace="http://bpmn.io/schema/bpmn">\n'
)

# start -> a receive task with no messageRef -> end.
GO_AHEAD = _HEAD.format(key="go-ahead") + (
    '  <bpmn:process id="go-ahead" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:receiveTask id="Wait" name="Wait for the go-ahead" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Wait" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Wait" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)

# start -> split -> a message catch (order-paid) | a signal catch (go-signal) | a receive task
# with the message parcel-arrived -> join -> a user task -> end.
PARCEL = _HEAD.format(key="parcel") + (
    '  <bpmn:message id="M_paid" name="order-paid" />\n'
    '  <bpmn:message id="M_parcel" name="parcel-arrived" />\n'
    '  <bpmn:signal id="S_go" name="go-signal" />\n'
    '  <bpmn:process id="parcel" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:parallelGateway id="Split" />\n'
    '    <bpmn:intermediateCatchEvent id="Paid">'
    '<bpmn:messageEventDefinition messageRef="M_paid" /></bpmn:intermediateCatchEvent>\n'
    '    <bpmn:intermediateCatchEvent id="Go">'
    '<bpmn:signalEventDefinition signalRef="S_go" /></bpmn:intermediateCatchEvent>\n'
    '    <bpmn:receiveTask id="Parcel" messageRef="M_parcel" />\n'
    '    <bpmn:parallelGateway id="Join" />\n'
    '    <bpmn:userTask id="Review" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Split" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Split" targetRef="Paid" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="Split" targetRef="Go" />\n'
    '    <bpmn:sequenceFlow id="f4" sourceRef="Split" targetRef="Parcel" />\n'
    '    <bpmn:sequenceFlow id="f5" sourceRef="Paid" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f6" sourceRef="Go" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f7" sourceRef="Parcel" targetRef="Join" />\n'
    '    <bpmn:sequenceFlow id="f8" sourceRef="Join" targetRef="Review" />\n'
    '    <bpmn:sequenceFlow id="f9" sourceRef="Review" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)


def _executions(rest: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = rest.get("/execution", params=params)
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()
    for execution in found:
        assert set(execution) == EXECUTION_FIELDS
        assert execution["ended"] is False
    count = rest.get("/execution/count", params=params)
    assert count.json() == {"count": len(found)}
    return found


def _at(rest: httpx.Client, instance_id: str, activity: str) -> str:
    [found] = _executions(rest, processInstanceId=instance_id, activityId=activity)
    execution_id: str = found["id"]
    return execution_id


def _state(rest: httpx.Client, instance_id: str) -> str:
    state: str = rest.get(f"/history/process-instance/{instance_id}").json()["state"]
    return state


def _refused(answer: httpx.Response, status: int, type_: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["type"] == type_, body
    message: str = body["message"]
    return message


def test_a_receive_task_without_a_message_waits_and_is_signalled(
    server: LiveServer, rest: httpx.Client
) -> None:
    deploy(rest, ("go-ahead.bpmn", GO_AHEAD))
    over_rest = start(rest, "go-ahead", businessKey="order-1")
    by_api = start(rest, "go-ahead", businessKey="order-2")
    for instance in (over_rest, by_api):
        assert _state(rest, instance["id"]) == "ACTIVE"
    # Each instance: its own execution and its token waiting at the receive task.
    mine = _executions(rest, processInstanceId=over_rest["id"])
    wait = _at(rest, over_rest["id"], "Wait")
    assert sorted(e["id"] for e in mine) == sorted([over_rest["id"], wait])
    assert {e["processInstanceId"] for e in mine} == {over_rest["id"]}
    assert rest.get(f"/execution/{wait}").json() == {
        "id": wait,
        "processInstanceId": over_rest["id"],
        "ended": False,
        "tenantId": None,
    }
    # The tree names the token as the receive task's execution; it waits for no message.
    tree = rest.get(f"/process-instance/{over_rest['id']}/activity-instances").json()
    [activity] = tree["childActivityInstances"]
    assert (activity["activityId"], activity["executionIds"]) == ("Wait", [wait])
    assert rest.get("/event-subscription", params={"executionId": wait}).json() == []

    body = {"variables": {"goAhead": {"value": "yes", "type": "String"}}}
    answer = rest.post(f"/execution/{wait}/signal", json=body)
    assert answer.status_code == 204, answer.text
    assert _state(rest, over_rest["id"]) == "COMPLETED"
    assert rest.get(f"/execution/{wait}").status_code == 404
    variables = rest.get(
        "/history/variable-instance", params={"processInstanceId": over_rest["id"]}
    ).json()
    assert [(v["name"], v["value"]) for v in variables] == [("goAhead", "yes")]
    visits = rest.get(
        "/history/activity-instance",
        params={"processInstanceId": over_rest["id"], "activityId": "Wait"},
    ).json()
    assert [(v["activityType"], v["endTime"] is not None) for v in visits] == [
        ("receiveTask", True)
    ]
    # The signal is in the audit trail.
    entries = rest.get(
        "/history/user-operation", params={"processInstanceId": over_rest["id"]}
    ).json()
    assert "Signal" in [e["operationType"] for e in entries]

    # The Python API: the instance's own execution stands for its one waiting token.
    handle = server.engine.instance(by_api["id"])
    handle.signal(variables={"goAhead": "also"})
    assert handle.wait_completion(5).value == "Completed"
    assert handle.variables() == {"goAhead": "also"}
    with pytest.raises(NotFound):
        handle.signal()  # it has ended: Camunda's runtime knows no such execution


def test_executions_are_filtered_sorted_and_posted(rest: httpx.Client) -> None:
    deploy(rest, ("parcel.bpmn", PARCEL))
    small = start(rest, "parcel", {"amount": {"value": 3, "type": "Integer"}}, businessKey="s")
    large = start(rest, "parcel", {"amount": {"value": 30, "type": "Integer"}}, businessKey="l")
    # An instance's own execution and its three waiting tokens; the split left no other.
    assert len(_executions(rest, processInstanceId=small["id"])) == 4
    assert len(_executions(rest, processDefinitionKey="parcel")) == 8
    definition_id = small["definitionId"]
    assert len(_executions(rest, processDefinitionId=definition_id)) == 8
    assert {e["processInstanceId"] for e in _executions(rest, businessKey="l")} == {large["id"]}
    paid = _executions(rest, messageEventSubscriptionName="order-paid")
    assert sorted(e["processInstanceId"] for e in paid) == sorted([small["id"], large["id"]])
    assert [e["id"] for e in paid if e["processInstanceId"] == small["id"]] == [
        _at(rest, small["id"], "Paid")
    ]
    go = _executions(rest, signalEventSubscriptionName="go-signal", businessKey="s")
    assert [e["id"] for e in go] == [_at(rest, small["id"], "Go")]
    parcel = _executions(rest, messageEventSubscriptionName="parcel-arrived", businessKey="s")
    assert [e["id"] for e in parcel] == [_at(rest, small["id"], "Parcel")]
    # Instance variables; an execution's own (local) ones.
    big = _executions(rest, processVariables="amount_gt_5")
    assert {e["processInstanceId"] for e in big} == {large["id"]}
    assert _executions(rest, processVariables="amount_gt_50") == []
    own = [e["id"] for e in _executions(rest, variables="amount_eq_3")]
    assert own == [small["id"]]  # the root scope's variables are the instance execution's
    tenants = _executions(rest, tenantIdIn="elsewhere")
    assert tenants == []
    assert len(_executions(rest, withoutTenantId="true")) == 8
    # Sorted as asked.
    ordered = _executions(rest, sortBy="instanceId", sortOrder="desc")
    instance_ids = [e["processInstanceId"] for e in ordered]
    assert instance_ids == sorted(instance_ids, reverse=True)
    bad = rest.get("/execution", params={"sortBy": "nope", "sortOrder": "asc"})
    _refused(bad, 400, "InvalidRequestException")
    bad = rest.get("/execution", params={"processVariables": "amount"})
    assert "processVariables" in _refused(bad, 400, "InvalidRequestException")

    # Suspended and active.
    answer = rest.put(f"/process-instance/{large['id']}/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    suspended = _executions(rest, suspended="true")
    assert {e["processInstanceId"] for e in suspended} == {large["id"]}
    assert {e["processInstanceId"] for e in _executions(rest, active="true")} == {small["id"]}
    # A suspended instance's execution is not signalled: Camunda's RestException.
    message = _refused(
        rest.post(f"/execution/{_at(rest, large['id'], 'Go')}/signal", json={}),
        500,
        "RestException",
    )
    assert message.startswith("Cannot signal execution")
    assert "suspended" in message

    # POST /execution: the same filters in the body, the variable filters as objects.
    body = {
        "processDefinitionKey": "parcel",
        "processVariables": [{"name": "amount", "operator": "lt", "value": 10}],
        "sorting": [{"sortBy": "instanceId", "sortOrder": "asc"}],
    }
    posted = rest.post("/execution", json=body)
    assert posted.status_code == 200, posted.text
    assert {e["processInstanceId"] for e in posted.json()} == {small["id"]}
    assert len(posted.json()) == 4
    assert rest.post("/execution/count", json=body).json() == {"count": 4}
    paged = rest.post("/execution", params={"maxResults": 2}, json=body).json()
    assert [e["id"] for e in paged] == [e["id"] for e in posted.json()][:2]
    wrong = rest.post("/execution", json={"sorting": [{"sortBy": "x", "sortOrder": "asc"}]})
    _refused(wrong, 400, "InvalidRequestException")
    missing = rest.get("/execution/00000000-0000-4000-8000-00000000abcd")
    assert _refused(missing, 404, "InvalidRequestException") == (
        "Execution with id 00000000-0000-4000-8000-00000000abcd does not exist"
    )


def test_signals_continue_waits_and_refuse_what_they_cannot(rest: httpx.Client) -> None:
    deploy(rest, ("parcel.bpmn", PARCEL))
    instance = start(rest, "parcel")
    iid = instance["id"]
    # The instance's own execution stands for one waiting token only: here there are three.
    message = _refused(rest.post(f"/execution/{iid}/signal", json={}), 500, "RestException")
    assert message.startswith(f"Cannot signal execution {iid}:")
    assert "3 executions" in message
    missing = "00000000-0000-4000-8000-00000000abcd"
    _refused(rest.post(f"/execution/{missing}/signal", json={}), 404, "InvalidRequestException")
    ten = {"variables": {"x": {"type": "Integer", "value": "ten"}}}
    bad = rest.post(f"/execution/{iid}/signal", json=ten)
    assert "'x'" in _refused(bad, 400, "InvalidRequestException")

    # A message catch goes on when signalled; its subscription goes with it.
    paid = _at(rest, iid, "Paid")
    assert rest.post(f"/execution/{paid}/signal", json={}).status_code == 204
    assert _executions(rest, processInstanceId=iid, messageEventSubscriptionName="order-paid") == []
    # Its token waits at the join now: a join is not continued by a signal.
    join = _at(rest, iid, "Join")
    message = _refused(rest.post(f"/execution/{join}/signal", json={}), 500, "RestException")
    assert "Join" in message
    # The receive task with a message: signalled too (Camunda's signal skips its message).
    assert rest.post(f"/execution/{_at(rest, iid, 'Parcel')}/signal", json={}).status_code == 204
    go = _at(rest, iid, "Go")
    assert rest.post(f"/execution/{go}/signal", json={}).status_code == 204
    # The join fired: a user task waits. Camunda's signal skips a user task (its reference:
    # "can for example be used to explicitly skip user tasks"): the task goes, the path goes on.
    [task] = rest.get("/task", params={"processInstanceId": iid}).json()
    assert rest.post(f"/execution/{task['executionId']}/signal", json={}).status_code == 204
    assert rest.get("/task", params={"processInstanceId": iid}).json() == []
    assert _state(rest, iid) == "COMPLETED"
    [ended] = rest.get("/history/task", params={"processInstanceId": iid}).json()
    assert ended["endTime"] is not None


def test_a_message_subscription_is_read_and_triggered_for_its_execution_alone(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("parcel.bpmn", PARCEL))
    first, second = start(rest, "parcel")["id"], start(rest, "parcel")["id"]
    paid = _at(rest, first, "Paid")
    answer = rest.get(f"/execution/{paid}/messageSubscriptions/order-paid")
    assert answer.status_code == 200, answer.text
    subscription = answer.json()
    assert set(subscription) == SUBSCRIPTION_FIELDS
    assert (subscription["eventType"], subscription["eventName"]) == ("message", "order-paid")
    assert (subscription["executionId"], subscription["processInstanceId"]) == (paid, first)
    assert subscription["activityId"] == "Paid"
    wrong = rest.get(f"/execution/{paid}/messageSubscriptions/parcel-arrived")
    assert _refused(wrong, 404, "InvalidRequestException") == (
        f"Message event subscription for execution {paid} named parcel-arrived does not exist"
    )

    body = {"variables": {"paidAt": {"value": "noon", "type": "String"}}}
    answer = rest.post(f"/execution/{paid}/messageSubscriptions/order-paid/trigger", json=body)
    assert answer.status_code == 204, answer.text
    # That execution went on; the other instance's still waits for the same message.
    assert _executions(rest, processInstanceId=first, activityId="Paid") == []
    assert len(_executions(rest, processInstanceId=second, activityId="Paid")) == 1
    assert rest.get(f"/process-instance/{first}/variables/paidAt").json()["value"] == "noon"
    assert rest.get(f"/process-instance/{second}/variables").json() == {}
    again = rest.post(f"/execution/{paid}/messageSubscriptions/order-paid/trigger", json={})
    _refused(again, 404, "InvalidRequestException")
    # The execution at Go has no subscription to order-paid.
    go = _at(rest, second, "Go")
    wrong = rest.post(f"/execution/{go}/messageSubscriptions/order-paid/trigger", json={})
    _refused(wrong, 404, "InvalidRequestException")


def test_local_variables_are_the_executions_own_scope(rest: httpx.Client) -> None:
    deploy(rest, ("parcel.bpmn", PARCEL))
    instance = start(rest, "parcel", {"amount": {"value": 3, "type": "Integer"}})
    iid = instance["id"]
    go = _at(rest, iid, "Go")
    # The instance's own execution: its root scope.
    assert rest.get(f"/execution/{iid}/localVariables").json() == {
        "amount": {"type": "Integer", "value": 3, "valueInfo": {}}
    }
    assert rest.get(f"/execution/{go}/localVariables").json() == {}

    put = rest.put(f"/execution/{go}/localVariables/note", json={"value": "x", "type": "String"})
    assert put.status_code == 204, put.text
    assert rest.get(f"/execution/{go}/localVariables/note").json() == {
        "type": "String",
        "value": "x",
        "valueInfo": {},
    }
    # Local to the token: the instance's scope does not have it.
    assert "note" not in rest.get(f"/process-instance/{iid}/variables").json()
    assert [e["id"] for e in _executions(rest, variables="note_eq_x")] == [go]
    body = {
        "modifications": {"count": {"value": 2, "type": "Integer"}},
        "deletions": ["note"],
    }
    assert rest.post(f"/execution/{go}/localVariables", json=body).status_code == 204
    assert rest.get(f"/execution/{go}/localVariables").json() == {
        "count": {"type": "Integer", "value": 2, "valueInfo": {}}
    }
    assert rest.delete(f"/execution/{go}/localVariables/count").status_code == 204
    assert rest.get(f"/execution/{go}/localVariables").json() == {}
    missing = rest.get(f"/execution/{go}/localVariables/count")
    _refused(missing, 404, "InvalidRequestException")
    # The root scope through the instance's execution.
    assert rest.delete(f"/execution/{iid}/localVariables/amount").status_code == 204
    assert rest.get(f"/process-instance/{iid}/variables").json() == {}
    gone = "00000000-0000-4000-8000-00000000abcd"
    _refused(rest.get(f"/execution/{gone}/localVariables"), 404, "InvalidRequestException")
    wrong = rest.put(f"/execution/{go}/localVariables/n", json={"value": "a", "type": "Integer"})
    assert "'n'" in _refused(wrong, 400, "InvalidRequestException")


def test_a_signal_to_one_execution_reaches_its_subscription_alone(rest: httpx.Client) -> None:
    """POST /signal with `executionId`: only that execution's own subscription to the signal
    receives it (and its variables); a malformed, unknown or unsubscribed execution is a 404,
    a tenant beside it a 400, never a 500."""
    deploy(rest, ("parcel.bpmn", PARCEL))
    first, second = start(rest, "parcel")["id"], start(rest, "parcel")["id"]
    go = _at(rest, first, "Go")
    body = {
        "name": "go-signal",
        "executionId": go,
        "variables": {"goAt": {"value": "dawn", "type": "String"}},
    }
    answer = rest.post("/signal", json=body)
    assert answer.status_code == 204, answer.text
    assert _executions(rest, processInstanceId=first, activityId="Go") == []
    assert len(_executions(rest, processInstanceId=second, activityId="Go")) == 1
    assert rest.get(f"/process-instance/{first}/variables/goAt").json()["value"] == "dawn"
    assert rest.get(f"/process-instance/{second}/variables").json() == {}
    # Delivered once: the subscription is gone.
    again = rest.post("/signal", json={"name": "go-signal", "executionId": go})
    assert "has no subscription to the signal 'go-signal'" in _refused(
        again, 404, "InvalidRequestException"
    )
    # The execution at Paid waits for a message, not for this signal.
    paid = _at(rest, second, "Paid")
    wrong = rest.post("/signal", json={"name": "go-signal", "executionId": paid})
    _refused(wrong, 404, "InvalidRequestException")
    unknown = "00000000-0000-7000-8000-000000000000"
    for execution_id in ("not-an-id", unknown, ""):
        answer = rest.post("/signal", json={"name": "go-signal", "executionId": execution_id})
        _refused(answer, 404, "InvalidRequestException")
    _refused(
        rest.post("/signal", json={"name": "go-signal", "executionId": 7}),
        400,
        "InvalidRequestException",
    )
    for tenant in ({"tenantId": "t1"}, {"withoutTenantId": True}):
        answer = rest.post("/signal", json={"name": "go-signal", "executionId": paid, **tenant})
        assert "cannot be used together with the parameter 'executionId'" in _refused(
            answer, 400, "InvalidRequestException"
        )
    # The other instance still waits at Go, and a broadcast still reaches it.
    assert len(_executions(rest, processInstanceId=second, activityId="Go")) == 1
    assert rest.post("/signal", json={"name": "go-signal"}).status_code == 204
    assert _executions(rest, processInstanceId=second, activityId="Go") == []
