"""Camunda 7.24's job log and external task log against the real server: `GET
/history/job-log` (+count, `{id}`, `{id}/stacktrace`) and `GET /history/external-task-log`
(+count, `{id}`, `{id}/error-details`). One row per event of a job or an external task, with
Camunda's creationLog, failureLog, successLog and deletionLog flags; shapes pinned from the
reference's HistoricJobLogDto and HistoricExternalTaskLogDto. The rows of an instance go with
it when the history cleanup deletes it; a principal sees the rows of the definitions whose
history it may read (READ_HISTORY). The server runs no job executor: jobs run through
`POST /job/{id}/execute`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from engine.commands.cleanup import CleanupBatch
from tests.compat.conftest import deploy, start
from tests.server import PASSWORD, LiveServer, live_server
from tests.waiting import wait_until

# Camunda's HistoricJobLogDto, from the reference.
JOB_LOG = {
    "id", "timestamp", "removalTime", "jobId", "jobDueDate", "jobRetries", "jobPriority",
    "jobExceptionMessage", "failedActivityId", "jobDefinitionId", "jobDefinitionType",
    "jobDefinitionConfiguration", "activityId", "executionId", "processInstanceId",
    "processDefinitionId", "processDefinitionKey", "deploymentId", "tenantId", "hostname",
    "rootProcessInstanceId", "creationLog", "failureLog", "successLog", "deletionLog",
}  # fmt: skip
# Camunda's HistoricExternalTaskLogDto, from the reference.
EXTERNAL_TASK_LOG = {
    "id", "timestamp", "removalTime", "externalTaskId", "topicName", "workerId", "retries",
    "priority", "errorMessage", "activityId", "activityInstanceId", "executionId",
    "processInstanceId", "processDefinitionId", "processDefinitionKey", "tenantId",
    "rootProcessInstanceId", "creationLog", "failureLog", "successLog", "deletionLog",
}  # fmt: skip
FLAGS = ("creationLog", "failureLog", "successLog", "deletionLog")
MISSING = "00000000-0000-0000-0000-000000000001"


def flaky_xml(key: str) -> str:
    """start -> an asynchronous service task calling the handler `flaky` -> end; the history
    of its ended instances may go at once."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="{key}" isExecutable="true" camunda:historyTimeToLive="0">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
    <serviceTask id="work" camunda:asyncBefore="true" camunda:delegateExpression="${{flaky}}"/>
    <sequenceFlow id="f2" sourceRef="work" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"""


WAITING_XML = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="waiting" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="later"/>
    <intermediateCatchEvent id="later">
      <timerEventDefinition><timeDuration>P10D</timeDuration></timerEventDefinition>
    </intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="later" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="remote" isExecutable="true">
    <startEvent id="rs"/>
    <sequenceFlow id="r1" sourceRef="rs" targetRef="call"/>
    <serviceTask id="call" camunda:type="external" camunda:topic="log-work"
                 camunda:taskPriority="7"/>
    <sequenceFlow id="r2" sourceRef="call" targetRef="re"/>
    <endEvent id="re"/>
  </process>
  <process id="straight" isExecutable="true">
    <startEvent id="ss"/>
    <sequenceFlow id="s1" sourceRef="ss" targetRef="se"/>
    <endEvent id="se"/>
  </process>
</definitions>"""


class Flaky:
    """A handler that raises on its first `failures` calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, ctx: Any) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"flaky attempt {self.calls}")


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    """A server without a job executor (conftest's `rest` calls it)."""
    with live_server(database_url, run_jobs=False) as running:
        running.engine.register_handler("flaky", Flaky(2))
        yield running


def _rows(client: httpx.Client, path: str, **params: Any) -> list[dict[str, Any]]:
    answer = client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()
    return rows


def _count(client: httpx.Client, path: str, **params: Any) -> int:
    answer = client.get(f"{path}/count", params=params)
    assert answer.status_code == 200, answer.text
    count: int = answer.json()["count"]
    return count


def _flags(row: dict[str, Any]) -> list[str]:
    return [flag for flag in FLAGS if row[flag]]


def _job_id(rest: httpx.Client, instance_id: str) -> str:
    (job,) = _rows(rest, "/job", processInstanceId=instance_id)
    job_id: str = job["id"]
    return job_id


def test_a_job_that_fails_twice_then_succeeds(rest: httpx.Client) -> None:
    deployment = deploy(rest, ("flaky.bpmn", flaky_xml("flaky")))
    instance = start(rest, "flaky")
    job_id = _job_id(rest, instance["id"])
    for _ in range(2):
        assert rest.post(f"/job/{job_id}/execute").status_code == 500
    assert rest.post(f"/job/{job_id}/execute").status_code == 204
    assert rest.get(f"/process-instance/{instance['id']}").status_code == 404

    rows = _rows(rest, "/history/job-log", processInstanceId=instance["id"])
    assert [set(row) for row in rows] == [JOB_LOG] * 4
    assert [_flags(row) for row in rows] == [
        ["creationLog"],
        ["failureLog"],
        ["failureLog"],
        ["successLog"],
    ]
    assert {row["jobId"] for row in rows} == {job_id}
    assert [row["jobRetries"] for row in rows] == [3, 2, 1, 1]
    messages = [row["jobExceptionMessage"] for row in rows][1:3]
    assert [
        message.endswith(f"RuntimeError: flaky attempt {n}")
        for n, message in zip((1, 2), messages, strict=True)
    ] == [True, True]
    assert rows[0]["jobExceptionMessage"] is None and rows[3]["jobExceptionMessage"] is None
    assert [row["failedActivityId"] for row in rows] == [None, "work", "work", None]
    created = rows[0]
    assert created["activityId"] == "work"
    assert created["processDefinitionKey"] == "flaky"
    assert created["processDefinitionId"] == instance["definitionId"]
    assert created["deploymentId"] == deployment["id"]
    assert created["rootProcessInstanceId"] == instance["id"]
    assert created["jobDefinitionType"] == "async-continuation"
    job_definition = _rows(rest, "/job-definition", processDefinitionId=instance["definitionId"])
    assert created["jobDefinitionId"] == job_definition[0]["id"]
    assert created["tenantId"] is None and created["removalTime"] is None
    assert isinstance(created["jobDueDate"], str) and created["timestamp"].endswith("+0000")
    assert created["hostname"] is None and isinstance(rows[3]["hostname"], str)

    # Counts, the flags and the other filters; the newest first by occurrence.
    assert _count(rest, "/history/job-log", processInstanceId=instance["id"]) == 4
    assert _count(rest, "/history/job-log", jobId=job_id, failureLog="true") == 2
    assert _count(rest, "/history/job-log", jobId=job_id, successLog="true") == 1
    assert _count(rest, "/history/job-log", jobId=job_id, deletionLog="true") == 0
    assert _count(rest, "/history/job-log", failedActivityIdIn="work") == 2
    assert _count(rest, "/history/job-log", activityIdIn="work,other") == 4
    assert _count(rest, "/history/job-log", processDefinitionKey="nothing") == 0
    assert _count(rest, "/history/job-log", jobDefinitionType="async-continuation") == 4
    assert _count(rest, "/history/job-log", jobExceptionMessage=messages[1]) == 1
    assert _count(rest, "/history/job-log", jobPriorityHigherThanOrEquals="1") == 0
    assert _count(rest, "/history/job-log", jobPriorityLowerThanOrEquals="0") == 4
    assert _count(rest, "/history/job-log", withoutTenantId="true") == 4
    newest = _rows(rest, "/history/job-log", sortBy="occurrence", sortOrder="desc")
    assert [row["id"] for row in newest] == [row["id"] for row in reversed(rows)]
    paged = _rows(rest, "/history/job-log", firstResult="1", maxResults="2")
    assert [row["id"] for row in paged] == [row["id"] for row in rows[1:3]]

    # One entry, and a failure's full text as text/plain (none: 204).
    one = rest.get(f"/history/job-log/{rows[1]['id']}")
    assert one.status_code == 200 and one.json() == rows[1]
    trace = rest.get(f"/history/job-log/{rows[2]['id']}/stacktrace")
    assert trace.status_code == 200, trace.text
    assert trace.headers["content-type"].startswith("text/plain")
    assert "Traceback" in trace.text and "flaky attempt 2" in trace.text
    assert rest.get(f"/history/job-log/{rows[0]['id']}/stacktrace").status_code == 204
    for path in (f"/history/job-log/{MISSING}", f"/history/job-log/{MISSING}/stacktrace"):
        answer = rest.get(path)
        assert answer.status_code == 404, answer.text
        assert answer.json()["type"] == "InvalidRequestException"
        assert MISSING in answer.json()["message"]


def test_a_deleted_job_and_an_instance_without_work(rest: httpx.Client) -> None:
    deploy(rest, ("waiting.bpmn", WAITING_XML))
    straight = start(rest, "straight")
    assert _rows(rest, "/history/job-log", processInstanceId=straight["id"]) == []
    instance = start(rest, "waiting")
    job_id = _job_id(rest, instance["id"])
    assert rest.delete(f"/process-instance/{instance['id']}").status_code == 204
    rows = _rows(rest, "/history/job-log", jobId=job_id)
    assert [_flags(row) for row in rows] == [["creationLog"], ["deletionLog"]]
    assert rows[0]["jobDefinitionType"] == rows[1]["jobDefinitionType"]
    assert rows[1]["activityId"] == "later"
    assert _count(rest, "/history/job-log", deletionLog="true") == 1
    assert _count(rest, "/history/job-log", creationLog="true") == 1
    # An external task whose instance is cancelled is deleted too, locked or not.
    remote = start(rest, "remote")
    task = _fetch(rest, "w9")
    assert rest.delete(f"/process-instance/{remote['id']}").status_code == 204
    rows = _rows(rest, "/history/external-task-log", externalTaskId=task["id"])
    assert [_flags(row) for row in rows] == [["creationLog"], ["deletionLog"]]
    assert rows[1]["workerId"] == "w9" and rows[1]["processInstanceId"] == remote["id"]
    assert _rows(rest, "/history/external-task-log", processInstanceId=straight["id"]) == []


def tick_xml(cycle: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="tick" isExecutable="true">
    <startEvent id="clock">
      <timerEventDefinition><timeCycle>{cycle}</timeCycle></timerEventDefinition>
    </startEvent>
    <sequenceFlow id="f1" sourceRef="clock" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"""


def test_a_timer_start_job_s_log_has_no_instance_and_expires(
    rest: httpx.Client, server: LiveServer, database_url: str
) -> None:
    first = deploy(rest, ("tick.bpmn", tick_xml("R2/PT10M")))
    (created,) = _rows(rest, "/history/job-log")
    assert _flags(created) == ["creationLog"]
    assert created["processInstanceId"] is None and created["rootProcessInstanceId"] is None
    assert created["executionId"] is None and created["deploymentId"] == first["id"]
    assert created["jobDefinitionType"] == "timer-start-event"
    assert created["processDefinitionKey"] == "tick" and created["activityId"] == "clock"
    # A new version takes the timer over: the old job is deleted, the new one created.
    deploy(rest, ("tick.bpmn", tick_xml("R3/PT20M")))
    rows = _rows(rest, "/history/job-log")
    assert [_flags(row) for row in rows] == [["creationLog"], ["deletionLog"], ["creationLog"]]
    assert rows[1]["jobId"] == created["jobId"] != rows[2]["jobId"]
    # Run now: successful, with no instance but the one it started.
    assert rest.post(f"/job/{rows[2]['jobId']}/execute").status_code == 204
    ran = _rows(rest, "/history/job-log", successLog="true")
    assert [row["processInstanceId"] for row in ran] == [None]
    # Rows of no instance go once older than the default time to live (180 days).
    assert server.engine.run(CleanupBatch()).instances == 0
    assert _count(rest, "/history/job-log") == 4
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE work_log SET logged_at = logged_at - interval '181 days' WHERE work_id = %s",
            (created["jobId"],),
        )
    server.engine.run(CleanupBatch())
    assert _count(rest, "/history/job-log", jobId=created["jobId"]) == 0
    assert _count(rest, "/history/job-log") == 2


def _fetch(rest: httpx.Client, worker: str) -> dict[str, Any]:
    body = {
        "workerId": worker,
        "maxTasks": 1,
        "topics": [{"topicName": "log-work", "lockDuration": 60000}],
    }
    answer = rest.post("/external-task/fetchAndLock", json=body)
    assert answer.status_code == 200, answer.text
    (task,) = answer.json()
    found: dict[str, Any] = task
    return found


def test_an_external_task_created_failed_and_completed(rest: httpx.Client) -> None:
    deploy(rest, ("waiting.bpmn", WAITING_XML))
    instance = start(rest, "remote")
    task = _fetch(rest, "w1")
    failure = {
        "workerId": "w1",
        "errorMessage": "the service is down",
        "errorDetails": "stack of the worker",
        "retries": 1,
        "retryTimeout": 0,
    }
    answer = rest.post(f"/external-task/{task['id']}/failure", json=failure)
    assert answer.status_code == 204, answer.text
    again = _fetch(rest, "w2")
    assert again["id"] == task["id"]
    answer = rest.post(f"/external-task/{task['id']}/complete", json={"workerId": "w2"})
    assert answer.status_code == 204, answer.text

    rows = _rows(rest, "/history/external-task-log", processInstanceId=instance["id"])
    assert [set(row) for row in rows] == [EXTERNAL_TASK_LOG] * 3
    assert [_flags(row) for row in rows] == [["creationLog"], ["failureLog"], ["successLog"]]
    assert {row["externalTaskId"] for row in rows} == {task["id"]}
    assert [row["workerId"] for row in rows] == [None, "w1", "w2"]
    assert [row["errorMessage"] for row in rows] == [None, "the service is down", None]
    assert [row["retries"] for row in rows][1] == 1
    assert {row["topicName"] for row in rows} == {"log-work"}
    assert {row["priority"] for row in rows} == {7}
    assert {row["activityId"] for row in rows} == {"call"}
    assert rows[0]["processDefinitionKey"] == "remote"
    assert rows[0]["executionId"] == rows[0]["activityInstanceId"]

    path = "/history/external-task-log"
    assert _count(rest, path, externalTaskId=task["id"]) == 3
    assert _count(rest, path, failureLog="true") == 1
    assert _count(rest, path, workerId="w2") == 1
    assert _count(rest, path, topicName="log-work", successLog="true") == 1
    assert _count(rest, path, errorMessage="the service is down") == 1
    assert _count(rest, path, priorityHigherThanOrEquals="8") == 0
    assert _count(rest, path, priorityLowerThanOrEquals="7") == 3
    assert _count(rest, path, activityInstanceIdIn=rows[0]["activityInstanceId"]) == 3
    by_worker = _rows(rest, path, sortBy="workerId", sortOrder="asc")
    assert [row["workerId"] for row in by_worker] == ["w1", "w2", None]
    assert rest.get(f"{path}/{rows[2]['id']}").json() == rows[2]
    details = rest.get(f"{path}/{rows[1]['id']}/error-details")
    assert details.status_code == 200, details.text
    assert details.headers["content-type"].startswith("text/plain")
    assert details.text == "stack of the worker"
    assert rest.get(f"{path}/{rows[0]['id']}/error-details").status_code == 204
    assert rest.get(f"{path}/{MISSING}").status_code == 404
    # A job log is not an external task log, and the other way round.
    assert rest.get(f"/history/job-log/{rows[0]['id']}").status_code == 404


def test_bad_parameters_are_refused_naming_them(rest: httpx.Client) -> None:
    for path, params in (
        ("/history/job-log", {"sortBy": "nothing", "sortOrder": "asc"}),
        ("/history/job-log", {"creationLog": "maybe"}),
        ("/history/job-log", {"jobPriorityLowerThanOrEquals": "high"}),
        ("/history/external-task-log", {"priorityHigherThanOrEquals": "1.5"}),
        ("/history/external-task-log", {"withoutTenantId": "2"}),
        ("/history/external-task-log", {"maxResults": "x"}),
    ):
        answer = rest.get(path, params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert answer.json()["type"] == "InvalidRequestException"
        name = "sortBy" if "sortBy" in params else next(iter(params))
        assert name in answer.json()["message"], answer.text


def test_the_cleanup_removes_an_ended_instance_s_log(
    rest: httpx.Client, server: LiveServer
) -> None:
    deploy(rest, ("flaky.bpmn", flaky_xml("gone")))
    server.engine.register_handler("flaky", Flaky(0))
    instance = start(rest, "gone")
    assert rest.post(f"/job/{_job_id(rest, instance['id'])}/execute").status_code == 204
    assert _count(rest, "/history/job-log", processInstanceId=instance["id"]) == 2
    result = server.engine.run(CleanupBatch())
    assert result.instances == 1
    assert _count(rest, "/history/job-log", processInstanceId=instance["id"]) == 0
    assert rest.get(f"/history/process-instance/{instance['id']}").status_code == 404


def test_a_narrowed_user_sees_only_the_logs_it_may_read(
    rest: httpx.Client, server: LiveServer
) -> None:
    deploy(rest, ("flaky.bpmn", flaky_xml("flaky")), ("waiting.bpmn", WAITING_XML))
    start(rest, "flaky")
    start(rest, "waiting")
    start(rest, "remote")
    assert _count(rest, "/history/job-log") == 2
    # The viewer's role reads every history: revoke READ_HISTORY on `flaky` and on `remote`.
    for key in ("flaky", "remote"):
        revoke = {
            "type": 2,
            "permissions": ["READ_HISTORY"],
            "userId": "viewer",
            "resourceType": 6,
            "resourceId": key,
        }
        created = rest.post("/authorization/create", json=revoke)
        assert created.status_code == 200, created.text
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        rows = _rows(viewer, "/history/job-log")
        assert [row["processDefinitionKey"] for row in rows] == ["waiting"]
        assert _count(viewer, "/history/job-log") == 1
        assert _count(viewer, "/history/job-log", processDefinitionKey="flaky") == 0
        assert _rows(viewer, "/history/external-task-log") == []
        hidden = _rows(rest, "/history/job-log", processDefinitionKey="flaky")[0]["id"]
        assert viewer.get(f"/history/job-log/{hidden}").status_code == 404
        assert viewer.get(f"/history/job-log/{hidden}/stacktrace").status_code == 404
    assert _count(rest, "/history/external-task-log") == 1


TIMERS_XML = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" targetNamespace="t">
  <process id="soon" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>
    <intermediateCatchEvent id="wait">
      <timerEventDefinition><timeDuration>PT0S</timeDuration></timerEventDefinition>
    </intermediateCatchEvent>
    <sequenceFlow id="f2" sourceRef="wait" targetRef="e"/>
    <endEvent id="e"/>
  </process>
</definitions>"""


def test_jobs_the_job_executor_runs_together_are_logged(database_url: str) -> None:
    """The job executor runs due timers (those of several instances together when they are due
    together): each job is logged created once and successful once, with the executor's host."""
    with (
        live_server(database_url) as running,
        httpx.Client(
            base_url=f"{running.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
        ) as rest,
    ):
        deploy(rest, ("soon.bpmn", TIMERS_XML))
        started = [start(rest, "soon")["id"] for _ in range(5)]

        def ended() -> bool:
            return _count(rest, "/history/process-instance", finished="true") == len(started)

        wait_until(ended, what="the timers ran")
        rows = _rows(rest, "/history/job-log")
        assert sorted(_flags(row)[0] for row in rows) == ["creationLog"] * 5 + ["successLog"] * 5
        for instance_id in started:
            mine = [row for row in rows if row["processInstanceId"] == instance_id]
            assert [_flags(row) for row in mine] == [["creationLog"], ["successLog"]]
            assert (
                mine[1]["hostname"] and mine[1]["jobDefinitionType"] == mine[0]["jobDefinitionType"]
            )
