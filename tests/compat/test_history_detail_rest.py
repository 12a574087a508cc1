"""Camunda 7.24's `GET /history/detail` (+count, `{id}`) against the real server: details of type
`variableUpdate`, shaped as the reference's HistoricDetailDto with HistoricVariableUpdateDto's
fields. Interlock serves what its rows hold: each variable's current value, and each variable an
operator changed (through the instance or a task), with the value after the change and the
entry's id as `userOperationId`; no form field is kept apart from the variables it set."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer

# Camunda's HistoricDetailDto with the fields of a variable update, from the reference.
VARIABLE_UPDATE = {
    "type", "id", "processDefinitionKey", "processDefinitionId", "processInstanceId",
    "activityInstanceId", "executionId", "caseDefinitionKey", "caseDefinitionId",
    "caseInstanceId", "caseExecutionId", "taskId", "tenantId", "userOperationId", "time",
    "removalTime", "rootProcessInstanceId", "variableName", "variableInstanceId", "variableType",
    "value", "valueInfo", "initial", "revision", "errorMessage",
}  # fmt: skip
MISSING = "00000000-0000-0000-0000-000000000001"

REVIEW_XML = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="review" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="check"/>
    <userTask id="check" name="Check"/>
    <sequenceFlow id="f2" sourceRef="check" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"""


def _rows(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    answer = client.get("/history/detail", params=params)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()
    counted = client.get("/history/detail/count", params=params)
    assert counted.status_code == 200, counted.text
    assert counted.json() == {"count": len(rows)}
    return rows


def _operator_changes(rest: httpx.Client) -> tuple[str, str]:
    """An instance of `review` whose `amount` an operator changed and `note` set, and whose
    task got a local `flag`: the instance's id and the task's."""
    deploy(rest, ("review.bpmn", REVIEW_XML))
    variables = {"amount": {"value": 5, "type": "Integer"}, "customer": {"value": "ann"}}
    instance_id: str = start(rest, "review", variables)["id"]
    answer = rest.put(
        f"/process-instance/{instance_id}/variables/amount", json={"value": 7, "type": "Integer"}
    )
    assert answer.status_code == 204, answer.text
    answer = rest.post(
        f"/process-instance/{instance_id}/variables",
        json={"modifications": {"note": {"value": "call back", "type": "String"}}},
    )
    assert answer.status_code == 204, answer.text
    (task,) = rest.get("/task", params={"processInstanceId": instance_id}).json()
    answer = rest.put(
        f"/task/{task['id']}/localVariables/flag", json={"value": True, "type": "Boolean"}
    )
    assert answer.status_code == 204, answer.text
    return instance_id, task["id"]


def test_current_values_and_operator_changes(rest: httpx.Client) -> None:
    instance_id, task_id = _operator_changes(rest)
    rows = _rows(rest, processInstanceId=instance_id)
    assert [set(row) for row in rows] == [VARIABLE_UPDATE] * 7
    assert {row["type"] for row in rows} == {"variableUpdate"}
    assert len({row["id"] for row in rows}) == 7
    current = [row for row in rows if row["userOperationId"] is None]
    changed = [row for row in rows if row["userOperationId"] is not None]
    shown = {r["variableName"]: (r["variableType"], r["value"]) for r in current}
    assert shown == {
        "amount": ("Integer", 7),
        "customer": ("String", "ann"),
        "note": ("String", "call back"),
        "flag": ("Boolean", True),
    }
    by_name = {r["variableName"]: r for r in changed}
    assert sorted(by_name) == ["amount", "flag", "note"]
    assert (by_name["amount"]["value"], by_name["amount"]["initial"]) == (7, False)
    assert (by_name["note"]["value"], by_name["note"]["initial"]) == ("call back", True)
    assert by_name["flag"]["taskId"] == task_id and by_name["flag"]["variableType"] == "Boolean"
    assert by_name["amount"]["taskId"] is None
    for row in rows:
        assert row["processDefinitionKey"] == "review"
        assert row["rootProcessInstanceId"] == instance_id
        assert row["time"].endswith("+0000") and row["removalTime"] is None
        assert row["revision"] == 0 and row["errorMessage"] is None
    # A task's local variable is of the task's execution; the others of the instance's.
    local = [row for row in rows if row["variableName"] == "flag"]
    assert {row["executionId"] for row in local} != {instance_id}
    assert {r["executionId"] for r in rows if r["variableName"] != "flag"} == {instance_id}

    # The variable instance a detail updates is the one the history names.
    (amount,) = rest.get(
        "/history/variable-instance",
        params={"processInstanceId": instance_id, "variableName": "amount"},
    ).json()
    assert {r["variableInstanceId"] for r in rows if r["variableName"] == "amount"} == {
        amount["id"]
    }
    assert len(_rows(rest, variableInstanceId=amount["id"])) == 2
    paged = rest.get(
        "/history/detail", params={"variableInstanceId": amount["id"], "maxResults": 1}
    )
    assert len(paged.json()) == 1

    # The audit entry a change came from, and the user operation log's id of it.
    entries = rest.get("/history/user-operation", params={"processInstanceId": instance_id})
    operation_ids = {entry["operationId"] for entry in entries.json()}
    assert {row["userOperationId"] for row in changed} <= operation_ids
    operation = by_name["note"]["userOperationId"]
    assert [r["variableName"] for r in _rows(rest, userOperationId=operation)] == ["note"]


def test_filters_and_sorting(rest: httpx.Client) -> None:
    instance_id, task_id = _operator_changes(rest)
    assert len(_rows(rest, excludeTaskDetails="true")) == 6
    assert [r["variableName"] for r in _rows(rest, taskId=task_id)] == ["flag"]
    assert {r["variableName"] for r in _rows(rest, variableTypeIn="Boolean")} == {"flag"}
    assert len(_rows(rest, variableTypeIn="string,INTEGER")) == 5
    assert _rows(rest, formFields="true") == []
    assert len(_rows(rest, variableUpdates="true")) == 7
    assert len(_rows(rest, occurredAfter="2000-01-01T00:00:00.000+0000")) == 7
    assert _rows(rest, occurredBefore="2000-01-01T00:00:00.000+0000") == []
    assert _rows(rest, processInstanceId=MISSING) == []
    assert len(_rows(rest, withoutTenantId="true")) == 7
    names = [r["variableName"] for r in _rows(rest, sortBy="variableName", sortOrder="asc")]
    assert names == sorted(names) and len(names) == 7
    times = [r["time"] for r in _rows(rest, sortBy="time", sortOrder="desc")]
    assert times == sorted(times, reverse=True)
    paging = {"sortBy": "variableName", "sortOrder": "asc", "firstResult": "2", "maxResults": "3"}
    paged = rest.get("/history/detail", params=paging).json()
    assert [r["variableName"] for r in paged] == names[2:5]

    one = _rows(rest)[0]
    answer = rest.get(f"/history/detail/{one['id']}")
    assert answer.status_code == 200 and answer.json() == one
    answer = rest.get(f"/history/detail/{MISSING}")
    assert answer.status_code == 404, answer.text
    assert answer.json()["type"] == "InvalidRequestException"
    assert MISSING in answer.json()["message"]

    for params in (
        {"sortBy": "value", "sortOrder": "asc"},
        {"occurredBefore": "yesterday"},
        {"excludeTaskDetails": "maybe"},
        {"deserializeValues": "2"},
        {"maxResults": "many"},
    ):
        answer = rest.get("/history/detail", params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert answer.json()["type"] == "InvalidRequestException"
        assert next(iter(params)) in answer.json()["message"], answer.text


def test_a_narrowed_user_sees_only_details_it_may_read(
    rest: httpx.Client, server: LiveServer
) -> None:
    _operator_changes(rest)
    # The viewer's role reads every history: revoke READ_HISTORY on `review` and READ on every
    # historic instance, the two ways to a detail (Camunda's).
    for resource_type, resource_id, permission in (
        (6, "review", "READ_HISTORY"),
        (20, "*", "READ"),
    ):
        revoke = {
            "type": 2,
            "permissions": [permission],
            "userId": "viewer",
            "resourceType": resource_type,
            "resourceId": resource_id,
        }
        answer = rest.post("/authorization/create", json=revoke)
        assert answer.status_code == 200, answer.text
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        assert _rows(viewer) == []
        hidden = _rows(rest)[0]["id"]
        assert viewer.get(f"/history/detail/{hidden}").status_code == 404
    assert len(_rows(rest)) == 7
