"""Camunda 7.24's POST /task/create against the real server: a standalone task (no process
instance) with TaskDto's fields, answered 204 No Content; listed by GET /task and
GET /history/task, claimed, commented on and completed like any task (completing it ends it and
nothing else), shown in the console's task inbox (Chromium). Who may see and change it is
decided by Camunda's TASK resource alone: READ_TASK on every process definition does not reach
it. Field sets are pinned from the reference (TaskDto, HistoricTaskInstanceDto, CommentDto)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from playwright.sync_api import expect

from engine.commands.standalone_tasks import CreateStandaloneTask
from tests.browser.conftest import Login
from tests.browser.conftest import console as console  # the console server fixture
from tests.browser.conftest import login as login  # the logged-in Chromium page fixture
from tests.browser.live import ConsoleServer
from tests.compat.test_history_tasks_rest import HISTORIC_TASK_FIELDS
from tests.server import PASSWORD, LiveServer

# Camunda 7.24's TaskDto.
TASK = {
    "id", "name", "assignee", "owner", "created", "lastUpdated", "due", "followUp",
    "delegationState", "description", "executionId", "parentTaskId", "priority",
    "processDefinitionId", "processInstanceId", "caseExecutionId", "caseDefinitionId",
    "caseInstanceId", "taskDefinitionKey", "suspended", "formKey", "camundaFormRef", "tenantId",
    "taskState", "attachment", "comment",
}  # fmt: skip
COMMENT = {
    "id", "userId", "time", "taskId", "processInstanceId", "message", "removalTime",
    "rootProcessInstanceId", "links",
}  # fmt: skip


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _refused(response: httpx.Response, status: int, type_: str, words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_, body
    assert words in body["message"], body


def test_a_standalone_task_is_created_listed_claimed_commented_and_completed(
    rest: httpx.Client,
) -> None:
    task_id = str(uuid.uuid4())
    body = {
        "id": task_id,
        "name": "Call the customer",
        "description": "About the late parcel",
        "owner": "olga",
        "due": "2031-01-31T12:00:00.000+0000",
        "followUp": "2031-01-15T08:30:00.000+0100",
        "priority": 70,
    }
    created = rest.post("/task/create", json=body)
    assert created.status_code == 204, created.text
    assert created.content == b""

    task = _ok(rest.get(f"/task/{task_id}"))
    assert set(task) == TASK
    assert task["name"] == "Call the customer"
    assert task["description"] == "About the late parcel"
    assert task["owner"] == "olga" and task["assignee"] is None
    assert task["due"] == "2031-01-31T12:00:00.000+0000"
    assert task["followUp"] == "2031-01-15T07:30:00.000+0000"
    assert task["priority"] == 70
    for empty in (
        "processInstanceId", "processDefinitionId", "executionId", "taskDefinitionKey",
        "formKey", "tenantId", "delegationState", "parentTaskId",
    ):  # fmt: skip
        assert task[empty] is None, empty
    assert task["suspended"] is False
    assert [t["id"] for t in _ok(rest.get("/task"))] == [task_id]
    assert _ok(rest.get("/task/count")) == {"count": 1}
    assert [t["id"] for t in _ok(rest.get("/task", params={"nameLike": "Call%"}))] == [task_id]
    assert _ok(rest.get("/task", params={"processDefinitionKey": "anything"})) == []

    # Claimed by someone, then again by someone else: refused as Camunda refuses it.
    assert rest.post(f"/task/{task_id}/claim", json={"userId": "anna"}).status_code == 204
    assert _ok(rest.get(f"/task/{task_id}"))["assignee"] == "anna"
    answer = rest.post(f"/task/{task_id}/claim", json={"userId": "bert"})
    _refused(answer, 500, "TaskAlreadyClaimedException", "already claimed")
    assert rest.post(f"/task/{task_id}/unclaim", json={}).status_code == 204
    assert rest.post(f"/task/{task_id}/assignee", json={"userId": "carl"}).status_code == 204
    assert _ok(rest.get(f"/task/{task_id}"))["assignee"] == "carl"

    comment = _ok(rest.post(f"/task/{task_id}/comment/create", json={"message": "Rang twice"}))
    assert set(comment) >= COMMENT
    assert comment["taskId"] == task_id and comment["processInstanceId"] is None
    listed = _ok(rest.get(f"/task/{task_id}/comment"))
    assert [c["message"] for c in listed] == ["Rang twice"]
    assert _ok(rest.get(f"/task/{task_id}"))["comment"] is True

    # It keeps no variables: completing with some is refused, and changes nothing.
    answer = rest.post(f"/task/{task_id}/complete", json={"variables": {"x": {"value": 1}}})
    _refused(answer, 400, "InvalidRequestException", "variables")
    assert _ok(rest.get("/task/count")) == {"count": 1}
    done = rest.post(f"/task/{task_id}/complete", json={})
    assert done.status_code == 204, done.text
    assert _ok(rest.get("/task")) == []
    again = rest.post(f"/task/{task_id}/complete", json={})
    assert again.status_code in (400, 404, 409, 500), again.text

    [historic] = _ok(rest.get("/history/task", params={"taskId": task_id}))
    assert set(historic) == HISTORIC_TASK_FIELDS
    assert historic["name"] == "Call the customer"
    assert historic["assignee"] == "carl"
    assert historic["processInstanceId"] is None and historic["taskDefinitionKey"] is None
    assert historic["endTime"] is not None and historic["deleteReason"] == "completed"
    assert _ok(rest.get("/history/task/count", params={"finished": "true"})) == {"count": 1}


def test_a_given_id_must_be_new_and_bad_fields_are_refused(rest: httpx.Client) -> None:
    task_id = str(uuid.uuid4())
    assert rest.post("/task/create", json={"id": task_id}).status_code == 204
    _refused(rest.post("/task/create", json={"id": task_id}), 400, "InvalidRequestException", "id")
    for body, field in (
        ({"id": "not-a-uuid"}, "id"),
        ({"name": 12}, "name"),
        ({"priority": "high"}, "priority"),
        ({"due": "soon"}, "due"),
        ({"followUp": "later"}, "followUp"),
        ({"delegationState": "DONE"}, "delegationState"),
        ({"parentTaskId": "nope"}, "parentTaskId"),
        ({"parentTaskId": str(uuid.uuid4())}, "parentTaskId"),
        ({"tenantId": " padded "}, "tenantId"),
    ):
        _refused(rest.post("/task/create", json=body), 400, "InvalidRequestException", field)
    assert _ok(rest.get("/task/count")) == {"count": 1}
    # A subtask of the first one.
    child = {"name": "Sub", "parentTaskId": task_id, "delegationState": "PENDING"}
    assert rest.post("/task/create", json=child).status_code == 204
    [sub] = _ok(rest.get("/task", params={"parentTaskId": task_id}))
    assert sub["name"] == "Sub" and sub["delegationState"] == "PENDING"


def test_a_standalone_task_is_changed_delegated_and_resolved(rest: httpx.Client) -> None:
    task_id = str(uuid.uuid4())
    assert rest.post("/task/create", json={"id": task_id, "name": "Draft"}).status_code == 204
    details = {
        "name": "Final",
        "description": "Check it",
        "priority": 5,
        "assignee": "anna",
        "due": "2031-02-01T00:00:00.000+0000",
    }
    assert rest.put(f"/task/{task_id}", json=details).status_code == 204
    task = _ok(rest.get(f"/task/{task_id}"))
    assert (task["name"], task["description"], task["priority"], task["assignee"]) == (
        "Final",
        "Check it",
        5,
        "anna",
    )
    assert task["due"] == "2031-02-01T00:00:00.000+0000"

    assert rest.post(f"/task/{task_id}/delegate", json={"userId": "bert"}).status_code == 204
    task = _ok(rest.get(f"/task/{task_id}"))
    assert (task["assignee"], task["owner"], task["delegationState"]) == ("bert", "anna", "PENDING")
    # A pending delegation is resolved, not completed.
    refused = rest.post(f"/task/{task_id}/complete", json={})
    assert refused.status_code >= 400, refused.text
    answer = rest.post(f"/task/{task_id}/resolve", json={"variables": {"x": {"value": 1}}})
    _refused(answer, 400, "InvalidRequestException", "variables")
    assert rest.post(f"/task/{task_id}/resolve", json={}).status_code == 204
    task = _ok(rest.get(f"/task/{task_id}"))
    assert (task["assignee"], task["owner"], task["delegationState"]) == (
        "anna",
        "anna",
        "RESOLVED",
    )
    assert rest.post(f"/task/{task_id}/complete", json={}).status_code == 204
    # Ended: no change reaches it any more.
    answer = rest.put(f"/task/{task_id}", json={"name": "Late"})
    assert 400 <= answer.status_code < 500, answer.text


def _authorize(
    rest: httpx.Client, kind: int, user: str, resource: int, on: str, *perms: str
) -> None:
    """An authorization of `kind` (1: grant, 2: revoke) for `user`."""
    body = {
        "type": kind,
        "permissions": list(perms),
        "userId": user,
        "resourceType": resource,
        "resourceId": on,
    }
    answer = rest.post("/authorization/create", json=body)
    assert answer.status_code == 200, answer.text


def _as(server: LiveServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(user, PASSWORD), timeout=30)


def test_only_grants_on_the_task_itself_reach_a_standalone_task(
    server: LiveServer, rest: httpx.Client
) -> None:
    """Viewers hold READ on every task and READ_TASK on every definition, operators TASK_WORK on
    both: revoked the task's own permission, the definitions' leave a standalone task out."""
    hidden, shown = str(uuid.uuid4()), str(uuid.uuid4())
    for task_id in (hidden, shown):
        assert rest.post("/task/create", json={"id": task_id}).status_code == 204
    _authorize(rest, 2, "viewer", 7, hidden, "READ")
    _authorize(rest, 2, "operator", 7, hidden, "READ", "TASK_WORK", "TASK_ASSIGN", "UPDATE")
    with _as(server, "viewer") as viewer, _as(server, "operator") as operator:
        assert [t["id"] for t in _ok(viewer.get("/task"))] == [shown]
        assert viewer.get(f"/task/{hidden}").status_code == 404
        assert [t["id"] for t in _ok(operator.get("/task"))] == [shown]
        # Without CREATE on tasks (operators have none): refused, nothing made.
        _refused(operator.post("/task/create", json={}), 403, "AuthorizationException", "CREATE")
        refused = operator.post(f"/task/{hidden}/complete", json={})
        assert refused.status_code == 403, refused.text
        assert operator.post(f"/task/{hidden}/claim", json={"userId": "x"}).status_code == 403
        assert _ok(rest.get("/task/count")) == {"count": 2}
        # TASK_WORK on the task itself.
        assert operator.post(f"/task/{shown}/complete", json={}).status_code == 204
        assert [t["id"] for t in _ok(rest.get("/task"))] == [hidden]
    # And CREATE on tasks lets one create.
    _authorize(rest, 1, "operator", 7, "*", "CREATE")
    with _as(server, "operator") as operator:
        assert operator.post("/task/create", json={"name": "Mine"}).status_code == 204
    assert _ok(rest.get("/task/count")) == {"count": 2}


def test_the_console_inbox_shows_claims_and_completes_a_standalone_task(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    created = engine.run(CreateStandaloneTask(task_name="Call the customer"))
    page = login("admin")
    page.goto("/tasks?show=all")
    row = page.locator(f'tr[data-task="{created.task_id}"]')
    expect(row).to_contain_text("Call the customer")
    expect(row).to_contain_text("standalone task")
    row.get_by_role("button", name="Claim").click()
    expect(page.locator("#flash-user_tasks")).to_contain_text("Task claimed by admin")
    page.reload()
    row = page.locator(f'tr[data-task="{created.task_id}"]')
    expect(row.locator("td").nth(2)).to_have_text("admin")
    row.locator("summary", has_text="Complete").click()
    row.get_by_role("button", name="Complete").click()
    expect(page.locator("#flash-user_tasks")).to_contain_text("Task completed")
    page.reload()
    expect(page.locator(f'tr[data-task="{created.task_id}"]')).to_have_count(0)
