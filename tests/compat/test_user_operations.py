"""Camunda's user operation log over the audit log: the entries' fields, the filters, sorting
and paging of `/history/user-operation` and its count, and annotating an entry."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat import processes
from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer

# Camunda 7's UserOperationLogEntryDto.
USER_OPERATION = {
    "id", "deploymentId", "processDefinitionId", "processDefinitionKey", "processInstanceId",
    "executionId", "caseDefinitionId", "caseInstanceId", "caseExecutionId", "taskId", "jobId",
    "jobDefinitionId", "batchId", "userId", "timestamp", "operationId", "externalTaskId",
    "operationType", "entityType", "property", "orgValue", "newValue", "removalTime",
    "rootProcessInstanceId", "category", "annotation",
}  # fmt: skip


def listed(client: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = client.get("/history/user-operation", params=params)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()
    counted = client.get("/history/user-operation/count", params=params)
    assert counted.json() == {"count": len(entries)} or "maxResults" in params
    return entries


def operations(entries: list[dict[str, Any]]) -> list[str]:
    return [e["operationType"] for e in entries]


def test_user_operation_log(server: LiveServer, rest: httpx.Client, operator: httpx.Client) -> None:
    deployment = deploy(rest, ("approval.bpmn", processes.approval()))
    instance = start(rest, "approval")["id"]  # a client's start: not an operation of the log
    [task] = operator.get("/task", params={"processInstanceId": instance}).json()
    assert operator.post(f"/task/{task['id']}/claim", json={"userId": "ann"}).status_code == 204
    put = operator.put(f"/process-instance/{instance}/variables/amount", json={"value": 5})
    assert put.status_code == 204, put.text
    assert operator.delete(f"/process-instance/{instance}").status_code == 204

    entries = listed(operator)
    assert operations(entries) == ["Create", "Claim", "SetVariable", "Delete"]
    for found in entries:
        assert set(found) == USER_OPERATION
        assert found["operationId"] == found["id"]
    created, claimed, variable, deleted = entries
    assert created["deploymentId"] == deployment["id"]
    assert (created["entityType"], created["category"], created["userId"]) == (
        "Deployment",
        "Admin",
        "admin",
    )
    assert (claimed["taskId"], claimed["property"], claimed["newValue"]) == (
        task["id"],
        "assignee",
        "ann",
    )
    assert (claimed["category"], claimed["orgValue"]) == ("TaskWorker", None)
    assert variable == {
        **variable,
        "processInstanceId": instance,
        "processDefinitionKey": "approval",
        "entityType": "Variable",
        "property": "amount",
        "orgValue": None,
        "newValue": "5",
        "userId": "operator",
        "category": "Operator",
    }
    assert variable["processDefinitionId"].startswith("approval:1:")
    assert (deleted["entityType"], deleted["orgValue"], deleted["newValue"]) == (
        "ProcessInstance",
        "Active",
        "Terminated",
    )

    assert operations(listed(operator, processInstanceId=instance)) == [
        "Claim",
        "SetVariable",
        "Delete",
    ]
    assert operations(listed(operator, userId="admin")) == ["Create"]
    assert operations(listed(operator, deploymentId=deployment["id"])) == ["Create"]
    assert operations(listed(operator, taskId=task["id"])) == ["Claim"]
    assert operations(listed(operator, operationType="Delete")) == ["Delete"]
    assert operations(listed(operator, entityType="Task")) == ["Claim"]
    assert operations(listed(operator, entityTypeIn="Task,Variable")) == ["Claim", "SetVariable"]
    assert operations(listed(operator, category="Admin")) == ["Create"]
    assert operations(listed(operator, category="Admin", entityType="Task")) == []
    # The deployment of one process names its definition too.
    assert operations(listed(operator, processDefinitionKey="approval")) == operations(entries)
    assert listed(operator, afterTimestamp="2999-01-01T00:00:00.000+0000") == []
    assert listed(operator, beforeTimestamp="2000-01-01T00:00:00.000+0000") == []
    newest = listed(operator, sortBy="timestamp", sortOrder="desc")
    assert operations(newest) == ["Delete", "SetVariable", "Claim", "Create"]
    assert operations(listed(operator, firstResult=1, maxResults=2)) == ["Claim", "SetVariable"]

    for params in ({"entityType": "Nothing"}, {"sortBy": "id", "sortOrder": "asc"}):
        refused = operator.get("/history/user-operation", params=params)
        assert refused.status_code == 400, params
        assert refused.json()["type"] == "InvalidRequestException"

    path = f"/history/user-operation/{deleted['id']}"
    noted = operator.put(f"{path}/set-annotation", json={"annotation": "asked by the customer"})
    assert noted.status_code == 204, noted.text
    [again] = listed(operator, operationId=deleted["id"])
    assert again["annotation"] == "asked by the customer"
    annotated = listed(operator, operationType="SetAnnotation")
    assert [(a["newValue"], a["processInstanceId"]) for a in annotated] == [
        ("asked by the customer", instance)
    ]
    assert operator.put(f"{path}/clear-annotation").status_code == 204
    assert listed(operator, operationId=deleted["id"])[0]["annotation"] is None
    missing = operator.put(
        "/history/user-operation/00000000-0000-0000-0000-000000000001/set-annotation",
        json={"annotation": "x"},
    )
    assert missing.status_code == 404

    with httpx.Client(base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD)) as viewer:
        assert viewer.get("/history/user-operation").status_code == 403
        assert viewer.put(f"{path}/clear-annotation").status_code == 403


def test_a_task_filter_finds_the_changes_of_its_variables(
    rest: httpx.Client, operator: httpx.Client
) -> None:
    deploy(rest, ("approval.bpmn", processes.approval()))
    instance = start(rest, "approval")["id"]
    [task] = operator.get("/task", params={"processInstanceId": instance}).json()
    put = operator.put(f"/task/{task['id']}/localVariables/note", json={"value": "checked"})
    assert put.status_code == 204, put.text
    assert operator.post(f"/task/{task['id']}/claim", json={"userId": "ann"}).status_code == 204
    put = operator.put(f"/process-instance/{instance}/variables/amount", json={"value": 5})
    assert put.status_code == 204, put.text

    entries = listed(operator, taskId=task["id"])
    assert [(e["operationType"], e["entityType"]) for e in entries] == [
        ("SetVariable", "Variable"),
        ("Claim", "Task"),
    ]
    assert [e["taskId"] for e in entries] == [task["id"], task["id"]]
    assert (entries[0]["property"], entries[0]["newValue"]) == ("note", "checked")
    # The instance's own variable names no task.
    [amount] = listed(operator, processInstanceId=instance, operationType="SetVariable")[1:]
    assert (amount["property"], amount["taskId"]) == ("amount", None)
    assert listed(operator, taskId=task["id"], jobId="any") == []
