"""Camunda 7.24's `POST /message` options against the real server: `localCorrelationKeys` match
the waiting execution's own variables (not the instance's), `variablesInResultEnabled` is
refused without `resultEnabled` as Camunda refuses it (400 InvalidRequestException) and answers
the result with the variables when both are set, `processVariablesToTriggeredScope` land in the
scope the message starts, `processInstanceId`, `all` and the tenant options narrow or widen the
correlation. The answers' shapes are pinned from Camunda's REST reference."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.conftest import deploy, start
from tests.compat.processes import HEADER
from tests.server import LiveServer

# start -> a message catch (`Paid`) whose input mapping gives it the local `expected` ->
# a user task -> end.
LOCAL = (
    HEADER.format(key="paying") + '  <bpmn:process id="paying" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:intermediateCatchEvent id="WaitPaid">\n'
    "      <bpmn:extensionElements><camunda:inputOutput>\n"
    '        <camunda:inputParameter name="expected">${order}</camunda:inputParameter>\n'
    "      </camunda:inputOutput></bpmn:extensionElements>\n"
    '      <bpmn:messageEventDefinition messageRef="Message_Paid" />\n'
    "    </bpmn:intermediateCatchEvent>\n"
    '    <bpmn:userTask id="Ship" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="WaitPaid" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="WaitPaid" targetRef="Ship" />\n'
    '    <bpmn:sequenceFlow id="f3" sourceRef="Ship" targetRef="End" />\n'
    "  </bpmn:process>\n"
    '  <bpmn:message id="Message_Paid" name="Paid" />\n'
    "</bpmn:definitions>\n"
)

# start -> a user task; a non-interrupting message event subprocess (`Note`) -> its user task.
NOTED = (
    HEADER.format(key="noted") + '  <bpmn:process id="noted" isExecutable="true">\n'
    '    <bpmn:startEvent id="Start" />\n'
    '    <bpmn:userTask id="Work" />\n'
    '    <bpmn:endEvent id="End" />\n'
    '    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Work" />\n'
    '    <bpmn:sequenceFlow id="f2" sourceRef="Work" targetRef="End" />\n'
    '    <bpmn:subProcess id="OnNote" triggeredByEvent="true">\n'
    '      <bpmn:startEvent id="NoteStart" isInterrupting="false">\n'
    '        <bpmn:messageEventDefinition messageRef="Message_Note" />\n'
    "      </bpmn:startEvent>\n"
    '      <bpmn:userTask id="Read" />\n'
    '      <bpmn:endEvent id="NoteEnd" />\n'
    '      <bpmn:sequenceFlow id="n1" sourceRef="NoteStart" targetRef="Read" />\n'
    '      <bpmn:sequenceFlow id="n2" sourceRef="Read" targetRef="NoteEnd" />\n'
    "    </bpmn:subProcess>\n"
    "  </bpmn:process>\n"
    '  <bpmn:message id="Message_Note" name="Note" />\n'
    "</bpmn:definitions>\n"
)

# MessageCorrelationResultWithVariableDto and its ExecutionDto, from the reference.
RESULT = {"resultType", "execution", "processInstance", "variables"}
EXECUTION = {"id", "processInstanceId", "ended", "tenantId"}


def _waiting(rest: httpx.Client, instance_id: str) -> bool:
    """Whether the instance still waits at its message catch (no user task yet)."""
    tasks = rest.get("/task", params={"processInstanceId": instance_id})
    assert tasks.status_code == 200, tasks.text
    found: list[Any] = tasks.json()
    return found == []


def _refused(response: httpx.Response, message: str) -> None:
    assert response.status_code == 400, response.text
    assert response.json() == {"type": "InvalidRequestException", "message": message}


def test_local_correlation_keys_match_the_waiting_execution(
    server: LiveServer, rest: httpx.Client
) -> None:
    deploy(rest, ("paying.bpmn", LOCAL))
    first = start(rest, "paying", {"order": {"value": "A-1", "type": "String"}})["id"]
    second = start(rest, "paying", {"order": {"value": "A-2", "type": "String"}})["id"]
    local = {"localCorrelationKeys": {"expected": {"value": "A-2", "type": "String"}}}

    # `expected` is no variable of the instance: as a correlation key it matches nothing.
    as_instance_key = rest.post(
        "/message",
        json={"messageName": "Paid", "correlationKeys": local["localCorrelationKeys"]},
    )
    assert as_instance_key.status_code == 400
    assert as_instance_key.json()["type"] == "RestException"
    unknown = {"expected": {"value": "A-3", "type": "String"}}
    nothing = rest.post("/message", json={"messageName": "Paid", "localCorrelationKeys": unknown})
    assert nothing.status_code == 400
    assert _waiting(rest, first) and _waiting(rest, second)

    delivered = rest.post("/message", json={"messageName": "Paid", **local, "resultEnabled": True})
    assert delivered.status_code == 200, delivered.text
    [result] = delivered.json()
    assert result["resultType"] == "Execution"
    assert result["execution"]["processInstanceId"] == second
    assert _waiting(rest, first) and not _waiting(rest, second)

    # With the instance's keys too, both must hold.
    both = {
        "messageName": "Paid",
        "correlationKeys": {"order": {"value": "A-1", "type": "String"}},
        "localCorrelationKeys": {"expected": {"value": "A-2", "type": "String"}},
    }
    assert rest.post("/message", json=both).status_code == 400
    both["localCorrelationKeys"] = {"expected": {"value": "A-1", "type": "String"}}
    assert rest.post("/message", json=both).status_code == 204
    assert not _waiting(rest, first)


def test_variables_in_the_result_need_the_result(server: LiveServer, rest: httpx.Client) -> None:
    deploy(rest, ("paying.bpmn", LOCAL))
    waiting = start(rest, "paying", {"order": {"value": "B-1", "type": "String"}})["id"]
    refused = rest.post("/message", json={"messageName": "Paid", "variablesInResultEnabled": True})
    _refused(
        refused,
        "Parameter 'variablesInResultEnabled' cannot be used without 'resultEnabled' set to true.",
    )
    assert _waiting(rest, waiting), "a refused correlation delivers nothing"
    _refused(
        rest.post(
            "/message",
            json={"messageName": "Paid", "tenantId": "t", "withoutTenantId": True},
        ),
        "Parameter 'tenantId' cannot be used together with parameter 'withoutTenantId'.",
    )
    _refused(rest.post("/message", json={"processVariables": {}}), "No message name supplied")

    answer = rest.post(
        "/message",
        json={
            "messageName": "Paid",
            "processInstanceId": waiting,
            "processVariables": {"paid": {"value": True, "type": "Boolean"}},
            "resultEnabled": True,
            "variablesInResultEnabled": True,
        },
    )
    assert answer.status_code == 200, answer.text
    [result] = answer.json()
    assert set(result) == RESULT
    assert set(result["execution"]) == EXECUTION
    assert (result["resultType"], result["processInstance"]) == ("Execution", None)
    assert (result["execution"]["processInstanceId"], result["execution"]["ended"]) == (
        waiting,
        False,
    )
    assert result["variables"]["paid"] == {"type": "Boolean", "value": True, "valueInfo": {}}
    assert result["variables"]["order"]["value"] == "B-1"


def test_all_and_the_instance_id(server: LiveServer, rest: httpx.Client) -> None:
    deploy(rest, ("paying.bpmn", LOCAL))
    ids = [
        start(rest, "paying", {"order": {"value": f"C-{n}", "type": "String"}})["id"]
        for n in (1, 2, 3)
    ]
    several = rest.post("/message", json={"messageName": "Paid"})
    assert several.status_code == 400
    assert all(_waiting(rest, i) for i in ids)
    one = rest.post("/message", json={"messageName": "Paid", "processInstanceId": ids[0]})
    assert one.status_code == 204
    assert [_waiting(rest, i) for i in ids] == [False, True, True]
    rest_of_them = rest.post(
        "/message", json={"messageName": "Paid", "all": True, "resultEnabled": True}
    )
    assert rest_of_them.status_code == 200, rest_of_them.text
    assert sorted(r["execution"]["processInstanceId"] for r in rest_of_them.json()) == sorted(
        ids[1:]
    )
    assert not any(_waiting(rest, i) for i in ids)


def test_variables_to_the_triggered_scope(server: LiveServer, rest: httpx.Client) -> None:
    deploy(rest, ("noted.bpmn", NOTED))
    instance = start(rest, "noted")["id"]
    sent = rest.post(
        "/message",
        json={
            "messageName": "Note",
            "processInstanceId": instance,
            "processVariables": {"seen": {"value": 1, "type": "Integer"}},
            "processVariablesToTriggeredScope": {"note": {"value": "hi", "type": "String"}},
        },
    )
    assert sent.status_code == 204, sent.text
    rows = rest.get("/variable-instance", params={"processInstanceIdIn": instance}).json()
    by_name: dict[str, Any] = {row["name"]: row for row in rows}
    assert by_name["seen"]["activityInstanceId"] == instance
    # The note is a variable of the event subprocess's run, not of the instance.
    assert by_name["note"]["value"] == "hi"
    assert by_name["note"]["activityInstanceId"] != instance
    instance_variables = rest.get(f"/process-instance/{instance}/variables").json()
    assert "note" not in instance_variables and "seen" in instance_variables
