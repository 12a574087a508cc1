"""Camunda 7.24's `executionDate` on the suspension endpoints of process definitions (by id, by
the latest version of a key, every version of a key) and job definitions (one, or those of a
process definition): the change is scheduled as a job due then, listed by GET /job as Camunda
lists its timer-suspend and timer-activate jobs, and run by the job executor through the same
command as an immediate change, `includeProcessInstances` / `includeJobs` honoured when it
runs. Each request answers 204 No Content; an unreadable date is Camunda's
InvalidRequestException naming executionDate. Shapes are pinned from the reference: JobDto."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from engine.builder import ProcessBuilder
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition
from tests.compat.conftest import camunda_date
from tests.jobs.conftest import ManualClock
from tests.server import PASSWORD, LiveServer, live_server
from tests.waiting import wait_until

# Camunda's JobDto, from the reference.
JOB = {
    "id", "jobDefinitionId", "processInstanceId", "processDefinitionId", "processDefinitionKey",
    "executionId", "exceptionMessage", "failedActivityId", "retries", "dueDate", "suspended",
    "priority", "tenantId", "createTime", "batchId",
}  # fmt: skip

START = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


def _paused(key: str = "paused") -> ProcessModel:
    """start -> pause (a one-hour timer) -> review (a user task) -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .intermediate_catch_event("pause", timer=TimerDefinition(kind="duration", text="PT1H"))
        .user_task("review", "Review")
        .end_event("end")
        .chain("start", "pause", "review", "end")
        .build()
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def server(database_url: str, clock: ManualClock) -> Iterator[LiveServer]:
    """A server on a clock the test moves, without a job executor: the test runs the jobs."""
    with live_server(database_url, run_jobs=False, clock=clock) as running:
        yield running


def _client(server: LiveServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(user, PASSWORD), timeout=30)


def _definition(rest: httpx.Client, key: str = "paused") -> dict[str, Any]:
    found: dict[str, Any] = rest.get(f"/process-definition/key/{key}").json()
    return found


def _instance_suspended(rest: httpx.Client, instance_id: str) -> bool:
    suspended: bool = rest.get(f"/process-instance/{instance_id}").json()["suspended"]
    return suspended


def _scheduled(rest: httpx.Client) -> list[dict[str, Any]]:
    """The jobs of no instance (the scheduled changes)."""
    return [job for job in rest.get("/job").json() if job["processInstanceId"] is None]


def _run_due(server: LiveServer) -> int:
    return JobExecutor(server.engine).run_once()


def test_a_definition_suspension_waits_for_its_date_then_suspends_its_instances(
    server: LiveServer, rest: httpx.Client, clock: ManualClock
) -> None:
    server.engine.deploy(_paused())
    definition = _definition(rest)
    instance = rest.post("/process-definition/key/paused/start", json={}).json()["id"]
    when = START + timedelta(hours=2)
    answer = rest.put(
        f"/process-definition/{definition['id']}/suspended",
        json={
            "suspended": True,
            "includeProcessInstances": True,
            "executionDate": camunda_date(when),
        },
    )
    assert answer.status_code == 204, answer.text
    assert answer.content == b""
    # Nothing changed yet; the change waits as a timer job of the definition.
    assert _definition(rest)["suspended"] is False
    assert _instance_suspended(rest, instance) is False
    [job] = _scheduled(rest)
    assert set(job) == JOB
    assert job["dueDate"] == camunda_date(when)
    assert job["processDefinitionId"] == definition["id"]
    assert job["processDefinitionKey"] == "paused"
    assert job["executionId"] is None and job["jobDefinitionId"] is None
    assert job["suspended"] is False and job["retries"] == 3
    timers = rest.get("/job", params={"timers": "true", "processDefinitionId": definition["id"]})
    assert job["id"] in [j["id"] for j in timers.json()]
    assert rest.get(f"/job/{job['id']}").json() == job

    # Before the date the executor runs nothing (the instance's timer is due later still).
    clock.advance(minutes=30)
    assert _run_due(server) == 0
    assert _definition(rest)["suspended"] is False
    clock.set(when + timedelta(seconds=1))
    # The instance's own timer was due first (after an hour): it fired and the instance waits in
    # review; the scheduled suspension ran in the same round.
    assert _run_due(server) == 2
    assert _definition(rest)["suspended"] is True
    assert _instance_suspended(rest, instance) is True
    assert _scheduled(rest) == []
    assert rest.get(f"/job/{job['id']}").status_code == 404

    # An activation by key, of every version, scheduled while the definition is suspended: its
    # job is acquired all the same.
    later = when + timedelta(hours=1)
    answer = rest.put(
        "/process-definition/suspended",
        json={
            "processDefinitionKey": "paused",
            "suspended": False,
            "includeProcessInstances": True,
            "executionDate": camunda_date(later),
        },
    )
    assert answer.status_code == 204, answer.text
    [job] = _scheduled(rest)
    assert job["dueDate"] == camunda_date(later)
    assert job["processDefinitionKey"] == "paused"
    clock.set(later)
    assert _run_due(server) == 1
    assert _definition(rest)["suspended"] is False
    assert _instance_suspended(rest, instance) is False


def test_by_key_without_instances_leaves_them_running(
    server: LiveServer, rest: httpx.Client, clock: ManualClock
) -> None:
    server.engine.deploy(_paused())
    instance = rest.post("/process-definition/key/paused/start", json={}).json()["id"]
    when = START + timedelta(minutes=10)
    answer = rest.put(
        "/process-definition/key/paused/suspended",
        json={"suspended": True, "executionDate": camunda_date(when)},
    )
    assert answer.status_code == 204, answer.text
    clock.set(when)
    assert _run_due(server) == 1
    assert _definition(rest)["suspended"] is True
    assert _instance_suspended(rest, instance) is False


def test_job_definition_suspensions_are_scheduled_with_their_jobs(
    server: LiveServer, rest: httpx.Client, clock: ManualClock
) -> None:
    server.engine.deploy(_paused())
    instance = rest.post("/process-definition/key/paused/start", json={}).json()["id"]
    [job_definition] = rest.get("/job-definition", params={"processDefinitionKey": "paused"}).json()
    [timer] = rest.get("/job", params={"processInstanceId": instance}).json()
    when = START + timedelta(minutes=5)
    answer = rest.put(
        f"/job-definition/{job_definition['id']}/suspended",
        json={"suspended": True, "includeJobs": True, "executionDate": camunda_date(when)},
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/job-definition/{job_definition['id']}").json()["suspended"] is False
    [scheduled] = _scheduled(rest)
    assert scheduled["dueDate"] == camunda_date(when)
    assert scheduled["processDefinitionId"] == job_definition["processDefinitionId"]
    clock.set(when)
    assert _run_due(server) == 1
    assert rest.get(f"/job-definition/{job_definition['id']}").json()["suspended"] is True
    assert rest.get(f"/job/{timer['id']}").json()["suspended"] is True

    # Every job definition of the key, activated later with their jobs.
    later = when + timedelta(minutes=5)
    answer = rest.put(
        "/job-definition/suspended",
        json={
            "processDefinitionKey": "paused",
            "suspended": False,
            "includeJobs": True,
            "executionDate": camunda_date(later),
        },
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/job/{timer['id']}").json()["suspended"] is True
    clock.set(later)
    assert _run_due(server) == 1
    assert rest.get(f"/job-definition/{job_definition['id']}").json()["suspended"] is False
    assert rest.get(f"/job/{timer['id']}").json()["suspended"] is False

    # At once, by process definition id, without the jobs.
    answer = rest.put(
        "/job-definition/suspended",
        json={"processDefinitionId": job_definition["processDefinitionId"], "suspended": True},
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/job-definition/{job_definition['id']}").json()["suspended"] is True
    assert rest.get(f"/job/{timer['id']}").json()["suspended"] is False


def _refused(response: httpx.Response, status: int, type_: str, words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["type"] == type_, body
    assert words in body["message"], body


def test_bad_dates_unknown_targets_and_missing_grants_are_refused(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(_paused())
    definition = _definition(rest)
    [job_definition] = rest.get("/job-definition").json()
    when = camunda_date(START + timedelta(hours=1))
    for path, body in (
        (f"/process-definition/{definition['id']}/suspended", {}),
        ("/process-definition/suspended", {"processDefinitionKey": "paused"}),
        (f"/job-definition/{job_definition['id']}/suspended", {}),
        ("/job-definition/suspended", {"processDefinitionKey": "paused"}),
    ):
        for bad in ("tomorrow", 12, True):
            answer = rest.put(path, json={"suspended": True, "executionDate": bad, **body})
            _refused(answer, 400, "InvalidRequestException", "executionDate")
    _refused(
        rest.put(
            "/process-definition/nothing:1:x/suspended",
            json={"suspended": True, "executionDate": when},
        ),
        404,
        "InvalidRequestException",
        "nothing:1:x",
    )
    _refused(
        rest.put(
            "/job-definition/00000000-0000-4000-8000-000000000001/suspended",
            json={"suspended": True, "executionDate": when},
        ),
        404,
        "InvalidRequestException",
        "does not exist",
    )
    _refused(
        rest.put("/job-definition/suspended", json={"suspended": True}),
        400,
        "InvalidRequestException",
        "processDefinitionKey",
    )
    with _client(server, "operator") as operator:
        answer = operator.put(
            f"/process-definition/{definition['id']}/suspended",
            json={"suspended": True, "executionDate": when},
        )
        _refused(answer, 403, "AuthorizationException", "")
    assert _scheduled(rest) == []


def test_a_real_short_timer_suspends_the_definition(database_url: str) -> None:
    """The server's own job executor on the system clock runs the change when it is due."""
    with live_server(database_url) as running, _client(running, "admin") as rest:
        running.engine.deploy(_paused())
        definition = _definition(rest)
        when = datetime.now(UTC) + timedelta(seconds=1.5)
        answer = rest.put(
            f"/process-definition/{definition['id']}/suspended",
            json={"suspended": True, "executionDate": camunda_date(when)},
        )
        assert answer.status_code == 204, answer.text
        assert _definition(rest)["suspended"] is False
        wait_until(lambda: _definition(rest)["suspended"], "the scheduled suspension", 30)
        assert datetime.now(UTC) >= when
        assert _scheduled(rest) == []


def test_deleting_the_deployment_takes_its_scheduled_suspensions(
    server: LiveServer, rest: httpx.Client
) -> None:
    server.engine.deploy(_paused())
    definition = _definition(rest)
    answer = rest.put(
        "/process-definition/key/paused/suspended",
        json={"suspended": True, "executionDate": camunda_date(START + timedelta(days=1))},
    )
    assert answer.status_code == 204, answer.text
    assert len(_scheduled(rest)) == 1
    deleted = rest.delete(f"/deployment/{definition['deploymentId']}", params={"cascade": "true"})
    assert deleted.status_code == 204, deleted.text
    assert _scheduled(rest) == []
