"""/engine-rest over variables in scopes: a task's variables and local variables, the variable
instance query with its scope filters, localVariables on an external-task completion and
processVariablesLocal on a message, against input/output mappings."""

from __future__ import annotations

from typing import Any

import httpx

from engine.bpmn import write_bpmn
from engine.builder import ProcessBuilder
from tests.compat import fields
from tests.compat.conftest import deploy, start
from tests.compat.test_rest_shapes import _error, _has, _json, _no_content


def scoped_order() -> str:
    """start -> Review (inputs decision, output approved) -> Check[ Report (external) -> Inspect ]
    (input amount hides the root's) -> Confirm (message; output confirmation) -> end."""
    model = (
        ProcessBuilder("scoped_order", "Scoped order")
        .start_event("Start")
        .user_task("Review", "Review order")
        .sub_process("Check", "Check order")
        .start_event("CheckStart", parent="Check")
        .service_task("Report", topic="report-check", parent="Check")
        .user_task("Inspect", parent="Check")
        .end_event("CheckEnd", parent="Check")
        .chain("CheckStart", "Report", "Inspect", "CheckEnd")
        .intermediate_catch_event("Confirm", message="OrderConfirmed")
        .end_event("End")
        .chain("Start", "Review", "Check", "Confirm", "End")
        .input_output("Review", inputs={"decision": "pending"}, outputs={"approved": "${decision}"})
        .input_output("Check", inputs={"amount": "${amount + 100}"})
        .input_output("Confirm", outputs={"confirmation": "${confirmer}"})
        .build()
    )
    return write_bpmn([model])


def values(answer: dict[str, Any]) -> dict[str, Any]:
    return {name: dto["value"] for name, dto in answer.items()}


def tree_ids(client: httpx.Client, instance_id: str) -> dict[str, dict[str, Any]]:
    """activityId -> its entry in the activity-instance tree, at any depth."""
    found: dict[str, dict[str, Any]] = {}
    todo = [_json(client.get(f"/process-instance/{instance_id}/activity-instances"))]
    while todo:
        entry = todo.pop()
        found[entry["activityId"]] = entry
        todo.extend(entry["childActivityInstances"])
    return found


def instances_of(client: httpx.Client, **params: str) -> set[tuple[str, Any]]:
    return {(v["name"], v["value"]) for v in _json(client.get("/variable-instance", params=params))}


def test_task_variables_and_local_variables(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(rest, ("scoped_order.bpmn", scoped_order()))
    instance = start(operator, "scoped_order", {"amount": {"value": 5}, "city": {"value": "Oslo"}})
    iid = instance["id"]
    [task] = _json(operator.get("/task", params={"processInstanceId": iid}))
    tid = task["id"]
    assert _json(operator.get(f"/task/{tid}/localVariables")) == {
        "decision": {"type": "String", "value": "pending", "valueInfo": {}}
    }
    seen = _json(operator.get(f"/task/{tid}/variables"))
    assert values(seen) == {"amount": 5, "city": "Oslo", "decision": "pending"}
    assert seen["amount"] == {"type": "Integer", "value": 5, "valueInfo": {}}
    # The root scope only: the task's local is not the instance's.
    assert values(_json(operator.get(f"/process-instance/{iid}/variables"))) == {
        "amount": 5,
        "city": "Oslo",
    }

    modified = {
        "modifications": {"note": {"value": "n", "type": "String"}},
        "deletions": ["decision"],
    }
    _no_content(operator.post(f"/task/{tid}/localVariables", json=modified))
    assert values(_json(operator.get(f"/task/{tid}/localVariables"))) == {"note": "n"}
    _no_content(
        operator.put(
            f"/task/{tid}/localVariables/decision", json={"value": "again", "type": "String"}
        )
    )
    assert _json(operator.get(f"/task/{tid}/localVariables/decision"))["value"] == "again"
    assert _json(operator.get(f"/task/{tid}/variables/city"))["value"] == "Oslo"
    _error(operator.get(f"/task/{tid}/localVariables/city"), 404, "InvalidRequestException")
    _no_content(operator.delete(f"/task/{tid}/localVariables/note"))
    assert values(_json(operator.get(f"/task/{tid}/localVariables"))) == {"decision": "again"}

    # The variable instances: ids, executions and activity instances agree with the tree.
    review = tree_ids(operator, iid)["Review"]
    every = _json(operator.get("/variable-instance", params={"processInstanceIdIn": iid}))
    for entry in every:
        _has(entry, fields.VARIABLE_INSTANCE)
        assert entry["processInstanceId"] == iid
        assert entry["processDefinitionId"] == instance["definitionId"]
        assert entry["caseExecutionId"] is None and entry["tenantId"] is None
    located = {v["name"]: (v["executionId"], v["activityInstanceId"]) for v in every}
    assert located == {
        "amount": (iid, iid),
        "city": (iid, iid),
        "decision": (task["executionId"], review["id"]),
    }
    assert review["executionIds"] == [task["executionId"]]
    assert len({v["id"] for v in every}) == 3
    assert instances_of(operator, activityInstanceIdIn=review["id"]) == {("decision", "again")}
    assert instances_of(operator, variableScopeIdIn=task["executionId"]) == {("decision", "again")}
    assert instances_of(operator, variableScopeIdIn=iid) == {("amount", 5), ("city", "Oslo")}
    assert instances_of(operator, variableName="city") == {("city", "Oslo")}
    assert instances_of(operator, variableNameLike="%i%", processInstanceIdIn=iid) == {
        ("decision", "again"),
        ("city", "Oslo"),
    }
    assert _json(operator.get("/variable-instance/count", params={"processInstanceIdIn": iid})) == {
        "count": 3
    }
    ordered = _json(
        operator.get(
            "/variable-instance",
            params={"processInstanceIdIn": iid, "sortBy": "variableName", "sortOrder": "desc"},
        )
    )
    assert [v["name"] for v in ordered] == ["decision", "city", "amount"]

    # Completing with a name the task holds locally updates the local; the output copies it.
    _no_content(
        operator.post(f"/task/{tid}/complete", json={"variables": {"decision": {"value": "ok"}}})
    )
    assert values(_json(operator.get(f"/process-instance/{iid}/variables"))) == {
        "amount": 5,
        "city": "Oslo",
        "approved": "ok",
    }
    _error(operator.get(f"/task/{tid}/variables"), 404, "InvalidRequestException")

    # Inside the subprocess its input hides the root's amount, for the worker and the task.
    fetched = _json(
        operator.post(
            "/external-task/fetchAndLock",
            json={
                "workerId": "w1",
                "maxTasks": 1,
                "topics": [{"topicName": "report-check", "lockDuration": 10_000}],
            },
        )
    )
    assert fetched[0]["variables"]["amount"]["value"] == 105
    done = {
        "workerId": "w1",
        "variables": {"checked": {"value": True}},
        "localVariables": {"report": {"value": "fine"}},
    }
    _no_content(operator.post(f"/external-task/{fetched[0]['id']}/complete", json=done))
    [inspect] = _json(operator.get("/task", params={"processInstanceId": iid}))
    assert values(_json(operator.get(f"/task/{inspect['id']}/variables")))["amount"] == 105
    assert "report" not in values(_json(operator.get(f"/task/{inspect['id']}/variables")))
    check = tree_ids(operator, iid)["Check"]
    assert instances_of(operator, activityInstanceIdIn=check["id"]) == {("amount", 105)}
    _no_content(operator.post(f"/task/{inspect['id']}/complete", json={}))
    assert values(_json(operator.get(f"/process-instance/{iid}/variables")))["amount"] == 5

    # A message's processVariablesLocal is a local of the catch event; its output copies it out.
    correlation = {
        "messageName": "OrderConfirmed",
        "processInstanceId": iid,
        "processVariablesLocal": {"confirmer": {"value": "bob"}},
    }
    _no_content(operator.post("/message", json=correlation))
    final = values(_json(operator.get(f"/process-instance/{iid}/variables")))
    assert final["confirmation"] == "bob" and "confirmer" not in final
    assert instances_of(operator, processInstanceIdIn=iid) == set()  # ended: no runtime rows


def test_bad_local_variable_requests(rest: httpx.Client, operator: httpx.Client) -> None:
    deploy(rest, ("scoped_order.bpmn", scoped_order()))
    instance = start(operator, "scoped_order", {"amount": {"value": 5}})
    [task] = _json(operator.get("/task", params={"processInstanceId": instance["id"]}))
    tid = task["id"]
    _error(
        operator.post(f"/task/{tid}/localVariables", json={"deletions": "decision"}),
        400,
        "InvalidRequestException",
        "'deletions' must be an array",
    )
    _error(
        operator.post(
            f"/task/{tid}/localVariables",
            json={"modifications": {"x": {"value": "nope", "type": "Integer"}}},
        ),
        400,
        "InvalidRequestException",
        "variable 'x'",
    )
    missing = "00000000-0000-0000-0000-000000000000"
    _error(operator.get(f"/task/{missing}/localVariables"), 404, "InvalidRequestException")
    _error(
        operator.post(f"/task/{missing}/localVariables", json={"modifications": {}}),
        404,
        "InvalidRequestException",
    )
    _error(
        rest.get("/variable-instance", params={"sortBy": "nope", "sortOrder": "asc"}),
        400,
        "InvalidRequestException",
    )
    # Nothing was written by the refusals.
    assert values(_json(operator.get(f"/task/{tid}/localVariables"))) == {"decision": "pending"}


def test_task_variables_are_written_where_camunda_finds_them(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("scoped_order.bpmn", scoped_order()))
    instance = start(operator, "scoped_order", {"amount": {"value": 5}, "gone": {"value": 1}})
    iid = instance["id"]
    [task] = _json(operator.get("/task", params={"processInstanceId": iid}))
    tid = task["id"]
    body = {
        "modifications": {"decision": {"value": "set"}, "fresh": {"value": 2}},
        "deletions": ["gone"],
    }
    _no_content(operator.post(f"/task/{tid}/variables", json=body))
    assert values(_json(operator.get(f"/task/{tid}/localVariables"))) == {"decision": "set"}
    assert values(_json(operator.get(f"/process-instance/{iid}/variables"))) == {
        "amount": 5,
        "fresh": 2,
    }
    _no_content(operator.put(f"/task/{tid}/variables/amount", json={"value": 6}))
    _no_content(operator.delete(f"/task/{tid}/variables/decision"))
    assert _json(operator.get(f"/task/{tid}/localVariables")) == {}
    assert values(_json(operator.get(f"/task/{tid}/variables"))) == {"amount": 6, "fresh": 2}
