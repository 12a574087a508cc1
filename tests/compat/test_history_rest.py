"""Camunda's history over REST: historic process instances with every filter and sort the
console's operators ask for, historic variable instances (ended instances' variables stay until
the history cleanup), and historic incidents (open, resolved and deleted, with end times)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import NAMESPACE_URL, uuid5

import httpx
import pytest

from engine.builder import ProcessBuilder
from tests.compat.conftest import camunda_date
from tests.server import PASSWORD, LiveServer, live_server

BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
# Variable instance ids are name-based UUIDs, the same in every run and on every server.
VARIABLE_INSTANCE_IDS = uuid5(NAMESPACE_URL, "interlock:variable-instance")

HISTORIC_VARIABLE_INSTANCE = {
    "id", "name", "type", "value", "valueInfo", "processDefinitionKey", "processDefinitionId",
    "processInstanceId", "executionId", "activityInstanceId", "caseDefinitionKey",
    "caseDefinitionId", "caseInstanceId", "caseExecutionId", "taskId", "tenantId",
    "errorMessage", "state", "createTime", "removalTime", "rootProcessInstanceId",
}  # fmt: skip
HISTORIC_INCIDENT = {
    "id", "processDefinitionKey", "processDefinitionId", "processInstanceId", "executionId",
    "rootProcessInstanceId", "createTime", "endTime", "removalTime", "incidentType",
    "activityId", "failedActivityId", "causeIncidentId", "rootCauseIncidentId", "configuration",
    "historyConfiguration", "incidentMessage", "tenantId", "jobDefinitionId", "open", "deleted",
    "resolved", "annotation",
}  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = BASE

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Story:
    """Three instances of `hist-rest` (start, the external task `charge`, end), at chosen times:
    `done` failed at charge, was retried and completed (ten seconds); `cancelled` failed and
    was cancelled (five seconds); `running` failed and still waits."""

    rest: httpx.Client
    definition_id: str
    done: str
    cancelled: str
    running: str
    incidents: dict[str, str]  # instance id -> its incident's id


@pytest.fixture
def story(database_url: str) -> Iterator[Story]:
    clock = Clock()
    with live_server(database_url, run_jobs=False, clock=clock) as server:
        told = _told(server, clock)
        with told.rest:
            yield told


def _told(server: LiveServer, clock: Clock) -> Story:
    engine = server.engine
    model = (
        ProcessBuilder("hist-rest")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    [definition] = engine.deploy(model).definitions
    incidents: dict[str, str] = {}

    def failed(at: timedelta, key: str, variables: dict[str, Any]) -> str:
        clock.now = BASE + at
        instance = engine.start_latest("hist-rest", variables, business_key=key)
        [task] = engine.fetch_and_lock("w", {"charge": 60_000})
        engine.fail_external_task(task["id"], "w", f"declined {key}", retries=0)
        [incident] = engine.incidents(instance_id=instance.id)
        incidents[str(instance.id)] = str(incident.id)
        return str(instance.id)

    done = failed(timedelta(0), "a-1", {"amount": 5, "customer": "ann"})
    clock.now = BASE + timedelta(seconds=4)
    engine.retry_incident(incidents[done])
    [task] = engine.fetch_and_lock("w", {"charge": 60_000})
    clock.now = BASE + timedelta(seconds=10)
    engine.complete_external_task(task["id"], "w", {"receipt": "r-1"})
    cancelled = failed(timedelta(seconds=20), "b-1", {"amount": 7})
    clock.now = BASE + timedelta(seconds=25)
    engine.instance(cancelled).cancel()
    running = failed(timedelta(seconds=40), "c-1", {"amount": 9})
    client = httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    )
    return Story(client, definition["id"], done, cancelled, running, incidents)


def at(seconds: int) -> str:
    return camunda_date(BASE + timedelta(seconds=seconds))


def ids(rest: httpx.Client, path: str, **params: Any) -> list[str]:
    answer = rest.get(path, params=params)
    assert answer.status_code == 200, answer.text
    listed = [row["id"] for row in answer.json()]
    counted = rest.get(f"{path}/count", params=params)
    assert counted.status_code == 200, counted.text
    assert counted.json() == {"count": len(listed)}
    return listed


def test_historic_process_instances_filter_and_sort(story: Story) -> None:
    rest, done, cancelled, running = story.rest, story.done, story.cancelled, story.running
    path = "/history/process-instance"

    def found(**params: Any) -> list[str]:
        return ids(rest, path, **params)

    assert found(sortBy="startTime", sortOrder="asc") == [done, cancelled, running]
    assert found(finished="true", sortBy="startTime", sortOrder="asc") == [done, cancelled]
    assert found(unfinished="true") == [running]
    assert found(processDefinitionKey="hist-rest", sortBy="endTime", sortOrder="desc") == [
        running,
        cancelled,
        done,
    ]
    assert found(processDefinitionKey="other") == []
    assert found(processInstanceBusinessKey="b-1") == [cancelled]
    assert found(superProcessInstanceId=done) == []
    assert found(startedAfter=at(20), sortBy="startTime", sortOrder="asc") == [cancelled, running]
    assert found(startedBefore=at(20), sortBy="startTime", sortOrder="asc") == [done, cancelled]
    assert found(finishedAfter=at(11)) == [cancelled]
    assert found(finishedBefore=at(11)) == [done]
    assert found(sortBy="duration", sortOrder="asc") == [cancelled, done, running]
    assert found(sortBy="businessKey", sortOrder="desc") == [running, cancelled, done]
    by_id = sorted([done, cancelled, running])
    assert found(sortBy="instanceId", sortOrder="asc") == by_id
    assert found(sortBy="definitionId", sortOrder="asc", finished="true") != []
    assert found(sortBy="definitionKey", sortOrder="asc", unfinished="true") == [running]
    [ended] = rest.get(path, params={"processInstanceBusinessKey": "a-1"}).json()
    assert (ended["startTime"], ended["endTime"], ended["durationInMillis"]) == (
        at(0),
        at(10),
        10_000,
    )
    assert ended["state"] == "COMPLETED"
    refused = rest.get(path, params={"sortBy": "nothing", "sortOrder": "asc"})
    assert refused.status_code == 400 and "sortBy" in refused.json()["message"]


def test_historic_variable_instances_of_ended_and_running_instances(story: Story) -> None:
    rest, done, cancelled, running = story.rest, story.done, story.cancelled, story.running
    path = "/history/variable-instance"
    answer = rest.get(path, params={"processInstanceId": done, "sortBy": "variableName",
                                    "sortOrder": "asc"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    rows = answer.json()
    for row in rows:
        assert set(row) == HISTORIC_VARIABLE_INSTANCE
    assert [(r["name"], r["type"], r["value"]) for r in rows] == [
        ("amount", "Integer", 5),
        ("customer", "String", "ann"),
        ("receipt", "String", "r-1"),
    ]
    assert rows[0] == {
        "id": str(uuid5(VARIABLE_INSTANCE_IDS, f"{done}//amount")),  # instance/scope/name
        "name": "amount",
        "type": "Integer",
        "value": 5,
        "valueInfo": {},
        "processDefinitionKey": "hist-rest",
        "processDefinitionId": story.definition_id,
        "processInstanceId": done,
        "executionId": done,
        "activityInstanceId": done,
        "caseDefinitionKey": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "caseExecutionId": None,
        "taskId": None,
        "tenantId": None,
        "errorMessage": None,
        "state": "CREATED",
        "createTime": at(0),
        "removalTime": None,
        "rootProcessInstanceId": done,
    }
    assert rows[2]["createTime"] == at(10)  # set when the external task completed

    def names(**params: Any) -> list[tuple[str, str]]:
        answer = rest.get(path, params={**params, "sortBy": "variableName", "sortOrder": "asc"})
        assert answer.status_code == 200, answer.text
        counted = rest.get(f"{path}/count", params=params).json()["count"]
        assert counted == len(answer.json())
        return [(r["processInstanceId"], r["name"]) for r in answer.json()]

    assert names(variableName="amount", processInstanceIdIn=f"{cancelled},{running}") in (
        [(cancelled, "amount"), (running, "amount")],
        [(running, "amount"), (cancelled, "amount")],
    )
    assert names(variableNameLike="cust%") == [(done, "customer")]
    assert names(processDefinitionKey="hist-rest", processInstanceId=cancelled) == [
        (cancelled, "amount")
    ]
    assert names(processDefinitionKey="other") == []
    assert names(variableTypeIn="boolean,json", processInstanceId=done) == []
    assert names(variableTypeIn="string", processInstanceId=done) == names(
        variableTypeIn="String", processInstanceId=done
    )
    assert names(variableTypeIn="String", processInstanceId=done) == [
        (done, "customer"),
        (done, "receipt"),
    ]
    refused = rest.get(path, params={"processInstanceId": "not-a-uuid"})
    assert refused.status_code == 200 and refused.json() == []


def test_historic_incidents_open_resolved_and_deleted(story: Story) -> None:
    rest, done, cancelled, running = story.rest, story.done, story.cancelled, story.running
    path = "/history/incident"
    answer = rest.get(path, params={"sortBy": "createTime", "sortOrder": "asc"})
    assert answer.status_code == 200, answer.text
    rows = answer.json()
    for row in rows:
        assert set(row) == HISTORIC_INCIDENT
    assert [
        (r["processInstanceId"], r["createTime"], r["endTime"], r["open"], r["resolved"],
         r["deleted"])
        for r in rows
    ] == [
        (done, at(0), at(4), False, True, False),
        (cancelled, at(20), at(25), False, False, True),
        (running, at(40), None, True, False, False),
    ]  # fmt: skip
    first = rows[0]
    assert {k: v for k, v in first.items() if k not in ("configuration",)} == {
        "id": story.incidents[done],
        "processDefinitionKey": "hist-rest",
        "processDefinitionId": story.definition_id,
        "processInstanceId": done,
        "executionId": first["executionId"],
        "rootProcessInstanceId": done,
        "createTime": at(0),
        "endTime": at(4),
        "removalTime": None,
        "incidentType": "failedExternalTask",
        "activityId": "charge",
        "failedActivityId": "charge",
        "causeIncidentId": story.incidents[done],
        "rootCauseIncidentId": story.incidents[done],
        "historyConfiguration": None,
        "incidentMessage": "declined a-1",
        "tenantId": None,
        "jobDefinitionId": None,
        "open": False,
        "deleted": False,
        "resolved": True,
        "annotation": None,
    }
    assert first["executionId"] not in (None, done)  # the token at charge
    assert first["configuration"] is not None  # the external task

    def instances(**params: Any) -> list[str]:
        answer = rest.get(path, params={**params, "sortBy": "createTime", "sortOrder": "asc"})
        assert answer.status_code == 200, answer.text
        assert rest.get(f"{path}/count", params=params).json() == {"count": len(answer.json())}
        return [r["processInstanceId"] for r in answer.json()]

    assert instances(open="true") == [running]
    assert instances(resolved="true") == [done]
    assert instances(deleted="true") == [cancelled]
    assert instances(open="false") == [done, cancelled, running]  # false: not filtered
    assert instances(processInstanceId=cancelled) == [cancelled]
    assert instances(incidentType="failedExternalTask") == [done, cancelled, running]
    assert instances(incidentType="failedJob") == []
    assert instances(processDefinitionKey="hist-rest", activityId="charge") == [
        done,
        cancelled,
        running,
    ]
    assert instances(createTimeAfter=at(20)) == [cancelled, running]
    assert instances(endTimeBefore=at(10)) == [done]
    assert instances(incidentMessageLike="declined b%") == [cancelled]
    assert instances(incidentId=story.incidents[running]) == [running]
    refused = rest.get(path, params={"open": "maybe"})
    assert refused.status_code == 400 and "open" in refused.json()["message"]


def test_the_job_and_external_task_logs_are_served(story: Story) -> None:
    # Their rows and filters: tests/compat/test_history_logs_rest.py.
    for path in ("/history/job-log", "/history/external-task-log"):
        listed = story.rest.get(path)
        assert listed.status_code == 200 and isinstance(listed.json(), list)
        assert story.rest.get(f"{path}/count").json() == {"count": len(listed.json())}
