"""Four small behaviours through /engine-rest, each as Camunda 7.24 shows it:

- a token waiting at a join is an activity instance of the gateway in the activity-instance tree,
  at the top level, in a subprocess and inside a multi-instance iteration (Camunda's
  GetActivityInstanceCmd makes one for every leaf execution, a joining one included: its
  ParallelGatewayTest counts the join among the children);
- a called instance ended by its caller's interrupting boundary event is INTERNALLY_TERMINATED in
  the history (HistoricProcessInstanceStateTest), one cancelled with its caller by a request
  EXTERNALLY_TERMINATED;
- a message sent by business key goes to the waiting instance of that key before a message
  start event (Camunda correlates to executions first);
- `camunda:mapDecisionResult` is checked on the decision's result at run time, as Camunda's
  DmnBusinessRuleTaskResultMapping does.

Models are our own; the answers are pinned from Camunda's reference."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.conftest import deploy, start

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'id="Definitions_{key}" targetNamespace="http://example.com/bpmn">\n'
)

# A split into two user tasks and a join; `{loop}` puts a multi-instance marker on the
# subprocess that holds them (empty: a plain subprocess).
_FORK_JOIN = (
    '      <bpmn:startEvent id="{p}Start" />\n'
    '      <bpmn:parallelGateway id="{p}Split" />\n'
    '      <bpmn:userTask id="{p}Pack" name="Pack" />\n'
    '      <bpmn:userTask id="{p}Label" name="Label" />\n'
    '      <bpmn:parallelGateway id="{p}Join" name="Both done" />\n'
    '      <bpmn:endEvent id="{p}End" />\n'
    '      <bpmn:sequenceFlow id="{p}f1" sourceRef="{p}Start" targetRef="{p}Split" />\n'
    '      <bpmn:sequenceFlow id="{p}f2" sourceRef="{p}Split" targetRef="{p}Pack" />\n'
    '      <bpmn:sequenceFlow id="{p}f3" sourceRef="{p}Split" targetRef="{p}Label" />\n'
    '      <bpmn:sequenceFlow id="{p}f4" sourceRef="{p}Pack" targetRef="{p}Join" />\n'
    '      <bpmn:sequenceFlow id="{p}f5" sourceRef="{p}Label" targetRef="{p}Join" />\n'
    '      <bpmn:sequenceFlow id="{p}f6" sourceRef="{p}Join" targetRef="{p}End" />\n'
)


def _joins(key: str, loop: str) -> str:
    """The process `key`: a subprocess `Parcel` (with `loop`) holding a fork and a join."""
    return _HEAD.format(key=key) + (
        f'  <bpmn:process id="{key}" isExecutable="true">\n'
        '    <bpmn:startEvent id="Start" />\n'
        f'    <bpmn:subProcess id="Parcel" name="Parcel">{loop}\n'
        + _FORK_JOIN.format(p="In")
        + "    </bpmn:subProcess>\n"
        '    <bpmn:endEvent id="End" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Parcel" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="Parcel" targetRef="End" />\n'
        "  </bpmn:process>\n</bpmn:definitions>\n"
    )


TOP_JOIN = _HEAD.format(key="top-join") + (
    '  <bpmn:process id="top-join" isExecutable="true">\n'
    + _FORK_JOIN.format(p="")
    + "  </bpmn:process>\n</bpmn:definitions>\n"
)
SUB_JOIN = _joins("sub-join", "")
MI_JOIN = _joins(
    "mi-join",
    '<bpmn:multiInstanceLoopCharacteristics camunda:collection="${parcels}" '
    'camunda:elementVariable="parcel" />',
)


def _json(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _tree(rest: httpx.Client, instance_id: str) -> dict[str, Any]:
    tree: dict[str, Any] = _json(rest.get(f"/process-instance/{instance_id}/activity-instances"))
    return tree


def _shape(entry: dict[str, Any]) -> Any:
    """(activityId, activityType, children sorted), the transition instances left out."""
    children = sorted(_shape(c) for c in entry["childActivityInstances"])
    return (entry["activityId"], entry["activityType"], children)


def _complete(rest: httpx.Client, instance_id: str, key: str, *, index: int = 0) -> None:
    tasks = _json(
        rest.get("/task", params={"processInstanceId": instance_id, "taskDefinitionKey": key})
    )
    tasks.sort(key=lambda t: t["executionId"])
    done = rest.post(f"/task/{tasks[index]['id']}/complete", json={})
    assert done.status_code == 204, done.text


def _open_visit(rest: httpx.Client, instance_id: str, activity: str) -> list[dict[str, Any]]:
    params = {"processInstanceId": instance_id, "activityId": activity, "unfinished": "true"}
    found: list[dict[str, Any]] = _json(rest.get("/history/activity-instance", params=params))
    return found


# -- (a) waiting joins in the activity-instance tree ----------------------------------------------


def test_a_waiting_join_is_an_activity_instance_at_every_level(rest: httpx.Client) -> None:
    deploy(
        rest,
        ("top-join.bpmn", TOP_JOIN),
        ("sub-join.bpmn", SUB_JOIN),
        ("mi-join.bpmn", MI_JOIN),
    )
    join: tuple[str, str, list[Any]] = ("Join", "parallelGateway", [])
    in_join: tuple[str, str, list[Any]] = ("InJoin", "parallelGateway", [])

    # The process's own join: Label still open, Pack's token waits at the join.
    top = start(rest, "top-join")["id"]
    assert _shape(_tree(rest, top))[2] == [("Label", "userTask", []), ("Pack", "userTask", [])]
    _complete(rest, top, "Pack")
    tree = _tree(rest, top)
    assert _shape(tree)[2] == [join, ("Label", "userTask", [])]
    [waiting] = [c for c in tree["childActivityInstances"] if c["activityId"] == "Join"]
    # The gateway's activity instance is its open historic activity instance, named as the
    # gateway is, with the waiting token as its execution.
    [visit] = _open_visit(rest, top, "Join")
    assert waiting["id"] == visit["id"]
    assert waiting["parentActivityInstanceId"] == top == visit["parentActivityInstanceId"]
    assert (waiting["activityName"], waiting["name"]) == ("Both done", "Both done")
    assert waiting["executionIds"] == [visit["executionId"]]
    assert (waiting["childActivityInstances"], waiting["childTransitionInstances"]) == ([], [])
    _complete(rest, top, "Label")
    assert _json(rest.get(f"/history/process-instance/{top}"))["state"] == "COMPLETED"

    # Inside a plain subprocess: the join is the subprocess's child.
    sub = start(rest, "sub-join")["id"]
    _complete(rest, sub, "InLabel")
    tree = _tree(rest, sub)
    assert _shape(tree)[2] == [("Parcel", "subProcess", [in_join, ("InPack", "userTask", [])])]
    [parcel] = tree["childActivityInstances"]
    [waiting] = [c for c in parcel["childActivityInstances"] if c["activityId"] == "InJoin"]
    assert waiting["parentActivityInstanceId"] == parcel["id"]

    # Inside a multi-instance body: each iteration is a scope of its own, and the join shows in
    # the iteration whose branch arrived, not in the other nor in the body.
    parcels = {"value": '["p1", "p2"]', "type": "Json"}
    mi = start(rest, "mi-join", {"parcels": parcels})["id"]
    _complete(rest, mi, "InPack", index=0)
    tree = _tree(rest, mi)
    [body] = tree["childActivityInstances"]
    assert (body["activityId"], body["activityType"]) == (
        "Parcel#multiInstanceBody",
        "multiInstanceBody",
    )
    iterations = body["childActivityInstances"]
    assert sorted(_shape(i) for i in iterations) == [
        ("Parcel", "subProcess", [in_join, ("InLabel", "userTask", [])]),
        ("Parcel", "subProcess", [("InLabel", "userTask", []), ("InPack", "userTask", [])]),
    ]
    [arrived] = [
        i
        for i in iterations
        if any(c["activityId"] == "InJoin" for c in i["childActivityInstances"])
    ]
    [waiting] = [c for c in arrived["childActivityInstances"] if c["activityId"] == "InJoin"]
    assert waiting["parentActivityInstanceId"] == arrived["id"]
    [visit] = _open_visit(rest, mi, "InJoin")
    assert (waiting["id"], visit["parentActivityInstanceId"]) == (visit["id"], arrived["id"])
    # The branch still open in that iteration arrives: the join fires and the iteration ends.
    [label] = [c for c in arrived["childActivityInstances"] if c["activityId"] == "InLabel"]
    [task] = _json(rest.get("/task", params={"executionId": label["executionIds"][0]}))
    assert rest.post(f"/task/{task['id']}/complete", json={}).status_code == 204
    tree = _tree(rest, mi)
    assert _shape(tree)[2] == [
        (
            "Parcel#multiInstanceBody",
            "multiInstanceBody",
            [("Parcel", "subProcess", [("InLabel", "userTask", []), ("InPack", "userTask", [])])],
        )
    ]


# -- (b) a called instance ended by its caller's boundary event ----------------------------------

CALLED = _HEAD.format(key="inspect") + (
    '  <bpmn:process id="inspect" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:userTask id="Inspect" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Inspect" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Inspect" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)

# A call activity of `inspect` with an interrupting message boundary (recall) and an interrupting
# timer boundary (an hour), each to a user task of its own.
CALLER = _HEAD.format(key="ship") + (
    '  <bpmn:message id="M_recall" name="recall" />\n'
    '  <bpmn:process id="ship" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:callActivity id="CallInspect" calledElement="inspect" />\n'
    '    <bpmn:boundaryEvent id="Recalled" attachedToRef="CallInspect">'
    '<bpmn:messageEventDefinition messageRef="M_recall" /></bpmn:boundaryEvent>\n'
    '    <bpmn:boundaryEvent id="TooLong" attachedToRef="CallInspect">'
    "<bpmn:timerEventDefinition><bpmn:timeDuration>PT1H</bpmn:timeDuration>"
    "</bpmn:timerEventDefinition></bpmn:boundaryEvent>\n"
    '    <bpmn:userTask id="Shipped" />\n'
    '    <bpmn:userTask id="Recall" />\n'
    '    <bpmn:userTask id="Escalate" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="CallInspect" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="CallInspect" targetRef="Shipped" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="Recalled" targetRef="Recall" />\n'
    '    <bpmn:sequenceFlow id="f4" sourceRef="TooLong" targetRef="Escalate" />\n'
    '    <bpmn:sequenceFlow id="f5" sourceRef="Shipped" targetRef="End" />\n'
    '    <bpmn:sequenceFlow id="f6" sourceRef="Recall" targetRef="End" />\n'
    '    <bpmn:sequenceFlow id="f7" sourceRef="Escalate" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)


def _called(rest: httpx.Client, caller: str) -> str:
    [called] = _json(rest.get("/process-instance", params={"superProcessInstance": caller}))
    called_id: str = called["id"]
    return called_id


def _historic_state(rest: httpx.Client, instance_id: str) -> str:
    state: str = _json(rest.get(f"/history/process-instance/{instance_id}"))["state"]
    return state


def test_b_a_call_ended_by_its_callers_boundary_is_internally_terminated(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("inspect.bpmn", CALLED), ("ship.bpmn", CALLER))

    # An interrupting message boundary on the call activity.
    recalled = start(rest, "ship", businessKey="recalled")["id"]
    by_message = _called(rest, recalled)
    answer = rest.post("/message", json={"messageName": "recall", "processInstanceId": recalled})
    assert answer.status_code == 204, answer.text
    assert _historic_state(rest, by_message) == "INTERNALLY_TERMINATED"
    assert _historic_state(rest, recalled) == "ACTIVE"
    [task] = _json(rest.get("/task", params={"processInstanceId": recalled}))
    assert task["taskDefinitionKey"] == "Recall"

    # An interrupting timer boundary on the call activity, its job run now.
    late = start(rest, "ship", businessKey="late")["id"]
    by_timer = _called(rest, late)
    [job] = _json(rest.get("/job", params={"processInstanceId": late, "timers": "true"}))
    assert rest.post(f"/job/{job['id']}/execute").status_code == 204
    assert _historic_state(rest, by_timer) == "INTERNALLY_TERMINATED"
    [task] = _json(rest.get("/task", params={"processInstanceId": late}))
    assert task["taskDefinitionKey"] == "Escalate"

    # Cancelled by a request, the caller and what it called are both externally terminated.
    cancelled = start(rest, "ship", businessKey="cancelled")["id"]
    with_caller = _called(rest, cancelled)
    assert rest.delete(f"/process-instance/{cancelled}").status_code == 204
    assert _historic_state(rest, cancelled) == "EXTERNALLY_TERMINATED"
    assert _historic_state(rest, with_caller) == "EXTERNALLY_TERMINATED"

    # A called instance left to complete is COMPLETED.
    finished = start(rest, "ship", businessKey="finished")["id"]
    completed = _called(rest, finished)
    _complete(rest, completed, "Inspect")
    assert _historic_state(rest, completed) == "COMPLETED"

    # The history's state flags tell the two terminations apart, in lists and counts.
    def ids(**flags: str) -> list[str]:
        params = {"processDefinitionKey": "inspect", **flags}
        found = _json(rest.get("/history/process-instance", params=params))
        count = _json(rest.get("/history/process-instance/count", params=params))["count"]
        assert count == len(found), params
        return sorted(entry["id"] for entry in found)

    assert ids(internallyTerminated="true") == sorted([by_message, by_timer])
    assert ids(externallyTerminated="true") == [with_caller]
    assert ids(internallyTerminated="true", externallyTerminated="true") == sorted(
        [by_message, by_timer, with_caller]
    )
    assert ids(completed="true", internallyTerminated="true") == sorted(
        [by_message, by_timer, completed]
    )
    assert ids(finished="true") == sorted([by_message, by_timer, with_caller, completed])
    refused = rest.get("/history/process-instance", params={"internallyTerminated": "maybe"})
    assert refused.status_code == 400, refused.text
    assert "internallyTerminated" in refused.json()["message"]
