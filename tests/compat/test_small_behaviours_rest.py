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
  result mappers do (its DmnBusinessRuleTaskResultMappingTest), an empty output entry giving no
  output (its DMN engine skips one), with the messages of Camunda's DecisionLogger and DMN
  engine: a refused start for a synchronous task, a failed job and then an incident for an
  asynchronous one.

Models are our own; the answers are pinned from Camunda's reference and engine tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer, live_server

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


# -- (c) a message by business key: the waiting instance before a message start event ----------

# A none start to a catch of `nudge`, and a message start event of `nudge`, each to a task.
NUDGED = _HEAD.format(key="nudged") + (
    '  <bpmn:message id="M_nudge" name="nudge" />\n'
    '  <bpmn:process id="nudged" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:intermediateCatchEvent id="WaitNudge">'
    '<bpmn:messageEventDefinition messageRef="M_nudge" /></bpmn:intermediateCatchEvent>\n'
    '    <bpmn:userTask id="Nudged" />\n'
    '    <bpmn:startEvent id="StartByNudge">'
    '<bpmn:messageEventDefinition messageRef="M_nudge" /></bpmn:startEvent>\n'
    '    <bpmn:userTask id="StartedByNudge" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="WaitNudge" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="WaitNudge" targetRef="Nudged" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="Nudged" targetRef="End" />\n'
    '    <bpmn:sequenceFlow id="f4" sourceRef="StartByNudge" targetRef="StartedByNudge" />\n'
    '    <bpmn:sequenceFlow id="f5" sourceRef="StartedByNudge" targetRef="End" />\n'
    "  </bpmn:process>\n</bpmn:definitions>\n"
)

# MessageCorrelationResultWithVariableDto's fields without its variables.
CORRELATION_RESULT = {"resultType", "execution", "processInstance"}


def _instances_of(rest: httpx.Client, business_key: str) -> list[dict[str, Any]]:
    params = {"processDefinitionKey": "nudged", "businessKey": business_key}
    found: list[dict[str, Any]] = _json(rest.get("/process-instance", params=params))
    return found


def _tasks_of(rest: httpx.Client, instance_id: str) -> list[str]:
    tasks = _json(rest.get("/task", params={"processInstanceId": instance_id}))
    return sorted(t["taskDefinitionKey"] for t in tasks)


def test_c_a_message_by_business_key_goes_to_the_waiting_instance_first(
    rest: httpx.Client,
) -> None:
    deploy(rest, ("nudged.bpmn", NUDGED))
    waiting = start(rest, "nudged", businessKey="order-7")["id"]
    other = start(rest, "nudged", businessKey="order-9")["id"]

    body = {"messageName": "nudge", "businessKey": "order-7", "resultEnabled": True}
    answer = rest.post("/message", json=body)
    [result] = _json(answer)
    assert set(result) == CORRELATION_RESULT
    assert result["resultType"] == "Execution"
    assert result["processInstance"] is None
    assert result["execution"]["processInstanceId"] == waiting
    assert result["execution"]["ended"] is False
    # It reached the waiting instance; no instance was started by the message start event,
    # and the other waiting instance (another business key) still waits.
    assert [i["id"] for i in _instances_of(rest, "order-7")] == [waiting]
    assert _tasks_of(rest, waiting) == ["Nudged"]
    assert _tasks_of(rest, other) == []

    # Nothing of that business key waits any more: the message start event takes it.
    answer = rest.post("/message", json=body)
    [result] = _json(answer)
    assert set(result) == CORRELATION_RESULT
    assert (result["resultType"], result["execution"]) == ("ProcessDefinition", None)
    started = result["processInstance"]
    assert started["businessKey"] == "order-7"
    assert started["id"] != waiting
    assert _tasks_of(rest, started["id"]) == ["StartedByNudge"]

    # Without resultEnabled: 204, and again the waiting instance first.
    answer = rest.post("/message", json={"messageName": "nudge", "businessKey": "order-9"})
    assert answer.status_code == 204, answer.text
    assert _tasks_of(rest, other) == ["Nudged"]
    assert len(_instances_of(rest, "order-9")) == 1

    # With `all`, as Camunda's correlateAll: every waiting instance and the start event.
    third = start(rest, "nudged", businessKey="order-11")["id"]
    body = {"messageName": "nudge", "businessKey": "order-11", "all": True, "resultEnabled": True}
    results = _json(rest.post("/message", json=body))
    assert sorted(r["resultType"] for r in results) == ["Execution", "ProcessDefinition"]
    assert _tasks_of(rest, third) == ["Nudged"]
    assert len(_instances_of(rest, "order-11")) == 2


# -- (d) camunda:mapDecisionResult checked on the result at run time -----------------------------

# Two outputs (tier, note). Rules, COLLECT: gold fills only `tier`; silver fills only `tier`;
# flagged fills both. A rule without output entries for an output gives no value for it.
TIERS = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="Definitions_Tiers" '
    'name="Tiers" namespace="http://example.com/dmn">\n'
    '  <decision id="tiers" name="Tiers">\n'
    '    <decisionTable id="Table_Tiers" hitPolicy="COLLECT">\n'
    '      <input id="Input_Points" label="Points">\n'
    '        <inputExpression id="Expr_Points" typeRef="integer"><text>points</text>'
    "</inputExpression>\n"
    "      </input>\n"
    '      <input id="Input_Flagged" label="Flagged">\n'
    '        <inputExpression id="Expr_Flagged" typeRef="boolean"><text>flagged</text>'
    "</inputExpression>\n"
    "      </input>\n"
    '      <output id="Output_Tier" name="tier" typeRef="string" />\n'
    '      <output id="Output_Note" name="note" typeRef="string" />\n'
    '      <rule id="Rule_Gold">\n'
    '        <inputEntry id="In_1a"><text>&gt;= 100</text></inputEntry>\n'
    '        <inputEntry id="In_1b"><text>false</text></inputEntry>\n'
    '        <outputEntry id="Out_1a"><text>"gold"</text></outputEntry>\n'
    '        <outputEntry id="Out_1b"><text></text></outputEntry>\n'
    "      </rule>\n"
    '      <rule id="Rule_Silver">\n'
    '        <inputEntry id="In_2a"><text>&gt;= 50</text></inputEntry>\n'
    '        <inputEntry id="In_2b"><text>false</text></inputEntry>\n'
    '        <outputEntry id="Out_2a"><text>"silver"</text></outputEntry>\n'
    '        <outputEntry id="Out_2b"><text></text></outputEntry>\n'
    "      </rule>\n"
    '      <rule id="Rule_Flagged">\n'
    '        <inputEntry id="In_3a"><text></text></inputEntry>\n'
    '        <inputEntry id="In_3b"><text>true</text></inputEntry>\n'
    '        <outputEntry id="Out_3a"><text>"none"</text></outputEntry>\n'
    '        <outputEntry id="Out_3b"><text>"review"</text></outputEntry>\n'
    "      </rule>\n"
    "    </decisionTable>\n"
    "  </decision>\n"
    "</definitions>\n"
)


def _rating(key: str, mapping: str, *, asynchronous: bool = False) -> str:
    """start -> a business rule task over `tiers` mapping its result into `rated` -> a user task."""
    async_before = ' camunda:asyncBefore="true"' if asynchronous else ""
    return _HEAD.format(key=key) + (
        f'  <bpmn:process id="{key}" isExecutable="true">\n'
        '    <bpmn:startEvent id="Start" />\n'
        '    <bpmn:businessRuleTask id="Rate" camunda:decisionRef="tiers" '
        f'camunda:resultVariable="rated" camunda:mapDecisionResult="{mapping}"{async_before} />\n'
        '    <bpmn:userTask id="Look" />\n'
        '    <bpmn:endEvent id="End" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Rate" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="Rate" targetRef="Look" />\n'
        '    <bpmn:sequenceFlow id="f3" sourceRef="Look" targetRef="End" />\n'
        "  </bpmn:process>\n</bpmn:definitions>\n"
    )


def _facts(points: int, *, flagged: bool = False) -> dict[str, Any]:
    return {
        "points": {"value": points, "type": "Integer"},
        "flagged": {"value": flagged, "type": "Boolean"},
    }


def _rated(rest: httpx.Client, instance_id: str) -> Any:
    """The variable `rated`'s value, a Json one (a map or a list) read from its JSON text."""
    variable = _json(rest.get(f"/process-instance/{instance_id}/variables/rated"))
    if variable["type"] == "Json":
        return json.loads(variable["value"])
    return variable["value"]


def _start_refused(rest: httpx.Client, key: str, facts: dict[str, Any]) -> str:
    before = _json(rest.get("/process-instance/count", params={"processDefinitionKey": key}))
    answer = rest.post(f"/process-definition/key/{key}/start", json={"variables": facts})
    assert answer.status_code == 500, answer.text
    body = answer.json()
    assert body["type"] == "RestException", body
    after = _json(rest.get("/process-instance/count", params={"processDefinitionKey": key}))
    assert after == before  # the refused start wrote nothing
    message: str = body["message"]
    return message


def test_d_map_decision_result_is_checked_on_the_actual_result(rest: httpx.Client) -> None:
    deploy(
        rest,
        ("tiers.dmn", TIERS),
        ("entry.bpmn", _rating("entry", "singleEntry")),
        ("single.bpmn", _rating("single", "singleResult")),
        ("collect.bpmn", _rating("collect", "collectEntries")),
    )
    # The table declares two outputs, and still: one entry of one output maps to its value, no
    # entry to null.
    assert _rated(rest, start(rest, "entry", _facts(70))["id"]) == "silver"
    assert _rated(rest, start(rest, "entry", _facts(10))["id"]) is None
    assert _rated(rest, start(rest, "single", _facts(70))["id"]) == {"tier": "silver"}
    assert _rated(rest, start(rest, "single", _facts(10))["id"]) is None
    # collectEntries: the values of the one output name every entry gives; none: an empty list.
    assert _rated(rest, start(rest, "collect", _facts(120))["id"]) == ["gold", "silver"]
    assert _rated(rest, start(rest, "collect", _facts(10))["id"]) == []

    # Several entries for singleEntry and singleResult: the start fails with Camunda's message.
    message = _start_refused(rest, "entry", _facts(120))
    assert "ENGINE-22001 The decision result mapper 'SingleEntryDecisionResultMapper' failed " in (
        message
    )
    assert "Unable to get single decision result as it has more than one result" in message
    message = _start_refused(rest, "single", _facts(120))
    assert "'SingleResultDecisionResultMapper'" in message
    assert "Unable to get single decision result as it has more than one result" in message
    # One entry with two outputs, for singleEntry and collectEntries.
    message = _start_refused(rest, "entry", _facts(0, flagged=True))
    assert (
        "Unable to get single decision result entry as it has more than one entry "
        '\'{"tier": "none", "note": "review"}\''
    ) in message
    message = _start_refused(rest, "collect", _facts(0, flagged=True))
    assert (
        "ENGINE-22002 The decision result mapper 'CollectEntriesDecisionResultMapper' failed to "
        "process"
    ) in message
    assert (
        "The decision outputs should only contains values for one output name but found "
        '\'["note", "tier"]\'.'
    ) in message
    # singleResult takes one entry of two outputs.
    flagged = start(rest, "single", _facts(0, flagged=True))["id"]
    assert _rated(rest, flagged) == {"tier": "none", "note": "review"}


@pytest.fixture
def idle_server(database_url: str) -> Iterator[LiveServer]:
    """A server that runs no job executor: the test runs the jobs through /job/{id}/execute."""
    with live_server(database_url, run_jobs=False) as running:
        yield running


def test_d_an_asynchronous_rule_task_fails_its_job_into_an_incident(
    idle_server: LiveServer,
) -> None:
    with httpx.Client(
        base_url=f"{idle_server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
    ) as rest:
        deploy(
            rest,
            ("tiers.dmn", TIERS),
            ("entry-async.bpmn", _rating("entry-async", "singleEntry", asynchronous=True)),
        )
        # One entry of one output: the job maps it and goes on.
        other = start(rest, "entry-async", _facts(70))["id"]
        [job] = _json(rest.get("/job", params={"processInstanceId": other}))
        assert rest.post(f"/job/{job['id']}/execute").status_code == 204
        assert _rated(rest, other) == "silver"
        # Several entries: the start succeeds; the job fails with the message, and at its last
        # retry the failure is an incident on the task.
        instance = start(rest, "entry-async", _facts(120))["id"]
        [job] = _json(rest.get("/job", params={"processInstanceId": instance}))
        assert rest.put(f"/job/{job['id']}/retries", json={"retries": 1}).status_code == 204
        failed = rest.post(f"/job/{job['id']}/execute")
        assert failed.status_code == 500, failed.text
        assert "SingleEntryDecisionResultMapper" in failed.json()["message"]
        [incident] = _json(rest.get("/incident", params={"processInstanceId": instance}))
        assert (incident["incidentType"], incident["activityId"]) == ("failedJob", "Rate")
        several = "Unable to get single decision result as it has more than one result"
        assert several in incident["incidentMessage"]
