"""GET /engine-rest/history/task and /history/task/count as Camunda 7.24's REST reference
describes them: open and ended user tasks (completed, or deleted with their instance), their
filters and sorting, and only the tasks of definitions the user may read the history of. The
answer's fields are written out from the reference (HistoricTaskInstanceDto), not taken from the
code under test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.compat.conftest import deploy, start
from tests.compat.processes import HEADER
from tests.server import PASSWORD, LiveServer

# GET /history/task's fields in Camunda 7.24's reference (HistoricTaskInstanceDto).
HISTORIC_TASK_FIELDS = {
    "id",
    "processDefinitionKey",
    "processDefinitionId",
    "processInstanceId",
    "executionId",
    "caseDefinitionKey",
    "caseDefinitionId",
    "caseInstanceId",
    "caseExecutionId",
    "activityInstanceId",
    "name",
    "description",
    "deleteReason",
    "owner",
    "assignee",
    "startTime",
    "endTime",
    "duration",
    "taskDefinitionKey",
    "priority",
    "due",
    "parentTaskId",
    "followUp",
    "tenantId",
    "removalTime",
    "rootProcessInstanceId",
    "taskState",
}


def _process(key: str, task_name: str) -> str:
    return (
        HEADER.format(key=key)
        + f"""  <bpmn:process id="{key}" isExecutable="true">
    <bpmn:startEvent id="Start" />
    <bpmn:sequenceFlow id="F1" sourceRef="Start" targetRef="Work" />
    <bpmn:userTask id="Work" name="{task_name}" camunda:assignee="${{who}}" />
    <bpmn:sequenceFlow id="F2" sourceRef="Work" targetRef="End" />
    <bpmn:endEvent id="End" />
  </bpmn:process>
</bpmn:definitions>
"""
    )


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _task_of(rest: httpx.Client, instance_id: str) -> str:
    [task] = _ok(rest.get("/task", params={"processInstanceId": instance_id}))
    task_id: str = task["id"]
    return task_id


class Story:
    """Three instances of `approve` (one task completed, one deleted with its cancelled
    instance, one open) and one open task of `ship`."""

    def __init__(self, rest: httpx.Client) -> None:
        deploy(rest, ("approve.bpmn", _process("approve", "Approve order")))
        deploy(rest, ("ship.bpmn", _process("ship", "Ship parcel")))
        self.completed_instance = start(rest, "approve", {"who": {"value": "anna"}})["id"]
        self.deleted_instance = start(rest, "approve", {"who": {"value": "bert"}})["id"]
        self.open_instance = start(rest, "approve", {"who": {"value": "anna"}})["id"]
        self.ship_instance = start(rest, "ship", {"who": {"value": "carl"}})["id"]
        self.completed = _task_of(rest, self.completed_instance)
        self.deleted = _task_of(rest, self.deleted_instance)
        self.open = _task_of(rest, self.open_instance)
        self.ship = _task_of(rest, self.ship_instance)
        done = rest.post(f"/task/{self.completed}/complete", json={"variables": {}})
        assert done.status_code == 204, done.text
        cancelled = rest.delete(f"/process-instance/{self.deleted_instance}")
        assert cancelled.status_code == 204, cancelled.text


@pytest.fixture
def story(rest: httpx.Client) -> Iterator[Story]:
    yield Story(rest)


def _ids(rest: httpx.Client, **params: Any) -> list[str]:
    return [task["id"] for task in _ok(rest.get("/history/task", params=params))]


def _count(rest: httpx.Client, **params: Any) -> int:
    count: int = _ok(rest.get("/history/task/count", params=params))["count"]
    return count


def test_open_and_ended_tasks_in_the_reference_shape(story: Story, rest: httpx.Client) -> None:
    found = {task["id"]: task for task in _ok(rest.get("/history/task"))}
    assert set(found) == {story.completed, story.deleted, story.open, story.ship}
    for task in found.values():
        assert set(task) == HISTORIC_TASK_FIELDS, task
    completed = found[story.completed]
    assert completed["processDefinitionKey"] == "approve"
    assert completed["processInstanceId"] == story.completed_instance
    assert completed["rootProcessInstanceId"] == story.completed_instance
    assert completed["name"] == "Approve order"
    assert completed["taskDefinitionKey"] == "Work"
    assert completed["assignee"] == "anna"
    assert completed["deleteReason"] == "completed"
    assert completed["taskState"] == "Completed"
    assert completed["endTime"] is not None and isinstance(completed["duration"], int)
    assert completed["duration"] >= 0
    assert completed["priority"] == 50
    assert completed["startTime"].endswith("+0000")
    deleted = found[story.deleted]
    assert (deleted["deleteReason"], deleted["taskState"]) == ("deleted", "Deleted")
    assert deleted["endTime"] is not None
    still_open = found[story.open]
    assert still_open["endTime"] is None and still_open["duration"] is None
    assert still_open["deleteReason"] is None
    assert still_open["processDefinitionId"].startswith("approve:")
    assert _count(rest) == 4


def test_filters_and_sorting(story: Story, rest: httpx.Client) -> None:
    assert set(_ids(rest, finished="true")) == {story.completed, story.deleted}
    assert set(_ids(rest, unfinished="true")) == {story.open, story.ship}
    assert _count(rest, finished="true") == 2
    assert set(_ids(rest, finished="false")) == {
        story.completed,
        story.deleted,
        story.open,
        story.ship,
    }
    assert _ids(rest, taskId=story.open) == [story.open]
    assert _ids(rest, processInstanceId=story.ship_instance) == [story.ship]
    assert set(_ids(rest, processDefinitionKey="approve")) == {
        story.completed,
        story.deleted,
        story.open,
    }
    assert _ids(rest, taskName="Ship parcel") == [story.ship]
    assert set(_ids(rest, taskNameLike="%order")) == {story.completed, story.deleted, story.open}
    assert set(_ids(rest, taskAssignee="anna")) == {story.completed, story.open}
    assert set(_ids(rest, taskAssigneeLike="%er%")) == {story.deleted}
    assert len(_ids(rest, taskDefinitionKey="Work")) == 4
    assert _ids(rest, taskDefinitionKey="Other") == []
    assert _ids(rest, withoutTenantId="true", taskId=story.ship) == [story.ship]
    assert _ids(rest, tenantIdIn="north") == []
    assert _ids(rest, startedBefore="2000-01-01T00:00:00.000+0000") == []
    assert len(_ids(rest, startedAfter="2000-01-01T00:00:00.000+0000")) == 4
    assert set(_ids(rest, finishedAfter="2000-01-01T00:00:00.000+0000")) == {
        story.completed,
        story.deleted,
    }
    assert _ids(rest, finishedBefore="2000-01-01T00:00:00.000+0000") == []
    by_assignee = _ok(rest.get("/history/task", params={"sortBy": "assignee", "sortOrder": "desc"}))
    assert [t["assignee"] for t in by_assignee] == ["carl", "bert", "anna", "anna"]
    page = _ids(rest, sortBy="assignee", sortOrder="asc", firstResult=1, maxResults=2)
    assert len(page) == 2 and page[1] == story.deleted
    for sort_by in ("taskId", "startTime", "endTime", "duration", "priority", "processInstanceId"):
        assert len(_ids(rest, sortBy=sort_by, sortOrder="asc")) == 4, sort_by


def test_bad_parameters_name_the_parameter(story: Story, rest: httpx.Client) -> None:
    # A task id that is no UUID matches nothing: it is not refused.
    assert _ok(rest.get("/history/task", params={"taskId": "not-a-uuid-but-fine"})) == []
    for params in (
        {"finished": "maybe"},
        {"startedAfter": "yesterday"},
        {"sortBy": "nothing", "sortOrder": "asc"},
        {"firstResult": "x"},
    ):
        response = rest.get("/history/task", params=params)
        assert response.status_code == 400, (params, response.text)
        assert response.json()["type"] == "InvalidRequestException"
        assert next(iter(params)) in response.json()["message"]


def test_a_narrowed_user_sees_only_the_history_they_may_read(
    story: Story, rest: httpx.Client, server: LiveServer
) -> None:
    # The viewer's role reads everything: revoke READ_HISTORY on `approve` and READ on every
    # historic task, the two ways to a task's history.
    revoked = []
    for resource_type, resource_id, permission in (
        (6, "approve", "READ_HISTORY"),
        (19, "*", "READ"),
    ):
        revoke = {
            "type": 2,
            "permissions": [permission],
            "userId": "viewer",
            "resourceType": resource_type,
            "resourceId": resource_id,
        }
        created = rest.post("/authorization/create", json=revoke)
        assert created.status_code == 200, created.text
        revoked.append(created.json()["id"])
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        assert _ids(viewer) == [story.ship]
        assert _count(viewer) == 1
        assert _ids(viewer, processDefinitionKey="approve") == []
        # READ on historic tasks (the role's, once the revoke is gone) lets them through.
        assert rest.delete(f"/authorization/{revoked[1]}").status_code == 204
        assert _count(viewer) == 4
    assert _count(rest) == 4
