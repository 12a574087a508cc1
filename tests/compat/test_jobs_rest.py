"""Camunda 7.24's job endpoints and the external-task additions against the real server: a
job's priority (camunda:jobPriority, `PUT /job/{id}/priority`, sorting by it), suspension
(`PUT /job/{id}/suspended`, the `suspended` filter), due date (`PUT /job/{id}/duedate`), the
failure's full text (`GET /job/{id}/stacktrace`, `GET /external-task/{id}/errorDetails`, both
text/plain), and fetch-and-lock's topic filters and `usePriority`. Answers are pinned from
Camunda's REST reference: 204 No Content for a change; refusals as `{type, message}` with
InvalidRequestException, 400 for a body it cannot use, 404 for a job that does not exist. The
server runs no job executor: the tests run jobs through `POST /job/{id}/execute`."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.compat.conftest import camunda_date, deploy, start
from tests.server import LiveServer, live_server

# Camunda's JobDto, from the reference.
JOB = {
    "id", "jobDefinitionId", "processInstanceId", "processDefinitionId", "processDefinitionKey",
    "executionId", "exceptionMessage", "failedActivityId", "retries", "dueDate", "suspended",
    "priority", "tenantId", "createTime", "batchId",
}  # fmt: skip
MISSING = "00000000-0000-0000-0000-000000000001"


def jobs_xml(key: str, job_priority: str = "", task_priority: str = "") -> str:
    """start -> an async service task calling `${nobody}` (it fails: nothing is registered under
    that name) -> an external task of topic `jobs-work` -> end."""
    job = f' camunda:jobPriority="{job_priority}"' if job_priority else ""
    task = f' camunda:taskPriority="{task_priority}"' if task_priority else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="{key}" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="async"/>
    <serviceTask id="async" camunda:asyncBefore="true"{job}
                 camunda:delegateExpression="${{nobody}}"/>
    <sequenceFlow id="f2" sourceRef="async" targetRef="e"/>
    <endEvent id="e"/>
  </process>
  <process id="{key}_remote" isExecutable="true">
    <startEvent id="rs"/>
    <sequenceFlow id="r1" sourceRef="rs" targetRef="remote"/>
    <serviceTask id="remote" camunda:type="external" camunda:topic="jobs-work"{task}/>
    <sequenceFlow id="r2" sourceRef="remote" targetRef="re"/>
    <endEvent id="re"/>
  </process>
</definitions>"""


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    """A server without a job executor (conftest's `rest` and `operator` call it)."""
    with live_server(database_url, run_jobs=False) as running:
        yield running


def _job(rest: httpx.Client, instance_id: str) -> dict[str, Any]:
    answer = rest.get("/job", params={"processInstanceId": instance_id})
    assert answer.status_code == 200, answer.text
    (job,) = answer.json()
    assert set(job) == JOB
    found: dict[str, Any] = job
    return found


def _refused(answer: httpx.Response, status: int, *words: str) -> None:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["type"] == "InvalidRequestException", body
    for word in words:
        assert word in body["message"], body


def test_job_priority_from_the_model_set_and_sorted(rest: httpx.Client) -> None:
    deploy(rest, ("jobs.bpmn", jobs_xml("prio", job_priority="${rank}")))
    low = start(rest, "prio", {"rank": {"value": 3, "type": "Integer"}})
    high = start(rest, "prio", {"rank": {"value": 40, "type": "Integer"}})
    assert _job(rest, low["id"])["priority"] == 3
    job = _job(rest, high["id"])
    assert job["priority"] == 40
    answer = rest.get("/job", params={"sortBy": "jobPriority", "sortOrder": "desc"})
    assert [j["processInstanceId"] for j in answer.json()] == [high["id"], low["id"]]
    assert rest.put(f"/job/{job['id']}/priority", json={"priority": 1}).status_code == 204
    assert _job(rest, high["id"])["priority"] == 1
    answer = rest.get("/job", params={"sortBy": "jobPriority", "sortOrder": "desc"})
    assert [j["processInstanceId"] for j in answer.json()] == [low["id"], high["id"]]
    # A Long is accepted; none, a text or a fraction is refused; an unknown job is 404.
    big = 2**40
    assert rest.put(f"/job/{job['id']}/priority", json={"priority": big}).status_code == 204
    assert _job(rest, high["id"])["priority"] == big
    _refused(rest.put(f"/job/{job['id']}/priority", json={}), 400, "cannot be null")
    _refused(rest.put(f"/job/{job['id']}/priority", json={"priority": "high"}), 400, "priority")
    _refused(rest.put(f"/job/{job['id']}/priority", json={"priority": 1.5}), 400, "priority")
    _refused(rest.put(f"/job/{MISSING}/priority", json={"priority": 1}), 404, MISSING)


def test_a_suspended_job_waits_until_activated(rest: httpx.Client) -> None:
    deploy(rest, ("jobs.bpmn", jobs_xml("held")))
    instance = start(rest, "held")
    job = _job(rest, instance["id"])
    assert job["suspended"] is False
    answer = rest.put(f"/job/{job['id']}/suspended", json={"suspended": True})
    assert answer.status_code == 204, answer.text
    assert _job(rest, instance["id"])["suspended"] is True
    assert [j["id"] for j in rest.get("/job", params={"suspended": "true"}).json()] == [job["id"]]
    assert rest.get("/job", params={"active": "true"}).json() == []
    # Executed now, a suspended job does not run: Camunda's 500 with the reason.
    answer = rest.post(f"/job/{job['id']}/execute")
    assert answer.status_code == 500 and "suspended" in answer.json()["message"]
    assert _job(rest, instance["id"])["retries"] == 3
    assert rest.put(f"/job/{job['id']}/suspended", json={"suspended": False}).status_code == 204
    assert _job(rest, instance["id"])["suspended"] is False
    assert [j["id"] for j in rest.get("/job", params={"active": "true"}).json()] == [job["id"]]
    _refused(rest.put(f"/job/{job['id']}/suspended", json={"suspended": "yes"}), 400, "suspended")
    _refused(rest.put(f"/job/{MISSING}/suspended", json={"suspended": True}), 404, MISSING)


def test_a_job_due_date_moves(rest: httpx.Client) -> None:
    deploy(rest, ("jobs.bpmn", jobs_xml("moved")))
    instance = start(rest, "moved")
    job = _job(rest, instance["id"])
    later = datetime(2031, 5, 4, 3, 2, 1, tzinfo=UTC)
    answer = rest.put(f"/job/{job['id']}/duedate", json={"duedate": camunda_date(later)})
    assert answer.status_code == 204, answer.text
    assert _job(rest, instance["id"])["dueDate"] == camunda_date(later)
    answer = rest.put(
        f"/job/{job['id']}/duedate",
        json={"duedate": "2031-05-04T05:02:01.000+0200", "cascade": True},
    )
    assert answer.status_code == 204, answer.text
    assert _job(rest, instance["id"])["dueDate"] == camunda_date(later)
    # None: due now.
    assert rest.put(f"/job/{job['id']}/duedate", json={"duedate": None}).status_code == 204
    due = _job(rest, instance["id"])["dueDate"]
    assert due < camunda_date(later)
    _refused(rest.put(f"/job/{job['id']}/duedate", json={"duedate": "soon"}), 400, "duedate")
    answer = rest.put(f"/job/{job['id']}/duedate", json={"duedate": None, "cascade": "x"})
    _refused(answer, 400, "cascade")
    _refused(rest.put(f"/job/{MISSING}/duedate", json={"duedate": None}), 404, MISSING)


def test_a_failed_job_serves_its_stacktrace_as_text(rest: httpx.Client) -> None:
    deploy(rest, ("jobs.bpmn", jobs_xml("failing")))
    instance = start(rest, "failing")
    job = _job(rest, instance["id"])
    # No failure yet: nothing to serve.
    assert rest.get(f"/job/{job['id']}/stacktrace").status_code == 204
    assert rest.post(f"/job/{job['id']}/execute").status_code == 500
    failed = _job(rest, instance["id"])
    assert failed["exceptionMessage"] and failed["retries"] == 2
    answer = rest.get(f"/job/{job['id']}/stacktrace")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    assert "Traceback" in answer.text and "nobody" in answer.text
    _refused(rest.get(f"/job/{MISSING}/stacktrace"), 404, MISSING)


def test_an_external_task_serves_its_error_details_as_text(rest: httpx.Client) -> None:
    deploy(rest, ("jobs.bpmn", jobs_xml("reported")))
    start(rest, "reported_remote")
    (task,) = _fetch(rest, [{"topicName": "jobs-work", "lockDuration": 60_000}])
    assert rest.get(f"/external-task/{task['id']}/errorDetails").status_code == 204
    answer = rest.post(
        f"/external-task/{task['id']}/failure",
        json={
            "workerId": "w",
            "errorMessage": "the printer is out of paper",
            "errorDetails": "line 1\nline 2: paper tray empty",
            "retries": 1,
            "retryTimeout": 0,
        },
    )
    assert answer.status_code == 204, answer.text
    answer = rest.get(f"/external-task/{task['id']}/errorDetails")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.text == "line 1\nline 2: paper tray empty"
    answer = rest.get(f"/external-task/{MISSING}/errorDetails")
    assert answer.status_code == 404 and MISSING in answer.json()["message"]


def _fetch(rest: httpx.Client, topics: list[dict[str, Any]], **body: Any) -> list[dict[str, Any]]:
    answer = rest.post(
        "/external-task/fetchAndLock",
        json={"workerId": "w", "maxTasks": 10, "topics": topics, **body},
    )
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()
    return found


def test_fetch_and_lock_filters_per_topic_and_priority(rest: httpx.Client) -> None:
    one = deploy(rest, ("one.bpmn", jobs_xml("one", task_priority="${weight}")))
    deploy(rest, ("two.bpmn", jobs_xml("two")))
    [one_id] = [
        d["id"] for d in one["deployedProcessDefinitions"].values() if d["key"] == "one_remote"
    ]
    started = {
        name: start(rest, key, {"weight": {"value": weight, "type": "Integer"},
                                "region": {"value": region, "type": "String"}},
                    businessKey=f"bk-{name}")["id"]
        for name, key, weight, region in [
            ("light", "one_remote", 1, "north"),
            ("heavy", "one_remote", 9, "south"),
            ("other", "two_remote", 0, "north"),
        ]
    }  # fmt: skip
    by_instance = {v: k for k, v in started.items()}

    def fetched(**filters: Any) -> list[str]:
        topic = {"topicName": "jobs-work", "lockDuration": 1, **filters}
        found = _fetch(rest, [topic], usePriority=True)
        for task in found:  # let them go again for the next fetch
            assert rest.post(f"/external-task/{task['id']}/unlock").status_code == 204
        return [by_instance[t["processInstanceId"]] for t in found]

    assert fetched() == ["heavy", "light", "other"]
    assert fetched(processDefinitionKey="two_remote") == ["other"]
    assert fetched(processDefinitionKeyIn=["one_remote", "none"]) == ["heavy", "light"]
    assert fetched(processDefinitionId=one_id) == ["heavy", "light"]
    assert fetched(processDefinitionIdIn=["missing"]) == []
    assert fetched(businessKey="bk-light") == ["light"]
    assert fetched(processVariables={"region": "north"}) == ["light", "other"]
    assert fetched(processVariables={"region": "north", "weight": 1}) == ["light"]
    assert fetched(processVariables={"region": "east"}) == []
    assert fetched(withoutTenantId=True, businessKey="bk-other") == ["other"]
    assert fetched(tenantIdIn=["acme"]) == []
    for bad in (
        {"processDefinitionIdIn": "one"},
        {"processDefinitionKey": 5},
        {"businessKey": ["a"]},
        {"processVariables": ["region"]},
    ):
        topic = {"topicName": "jobs-work", "lockDuration": 1, **bad}
        answer = rest.post("/external-task/fetchAndLock", json={"workerId": "w", "topics": [topic]})
        _refused(answer, 400, next(iter(bad)))


# Camunda's JobDefinitionDto, from the reference.
JOB_DEFINITION = {
    "id", "processDefinitionId", "processDefinitionKey", "activityId", "jobType",
    "jobConfiguration", "overridingJobPriority", "suspended", "tenantId", "deploymentId",
}  # fmt: skip

TIMED = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="timed" isExecutable="true">
    <startEvent id="s"/>
    <sequenceFlow id="f1" sourceRef="s" targetRef="work"/>
    <serviceTask id="work" camunda:asyncBefore="true" camunda:asyncAfter="true"
                 camunda:delegateExpression="${nobody}"/>
    <sequenceFlow id="f2" sourceRef="work" targetRef="pause"/>
    <intermediateCatchEvent id="pause">
      <timerEventDefinition><timeDuration>PT5M</timeDuration></timerEventDefinition>
    </intermediateCatchEvent>
    <sequenceFlow id="f3" sourceRef="pause" targetRef="e"/>
    <endEvent id="e"/>
    <boundaryEvent id="late" attachedToRef="work">
      <timerEventDefinition><timeDuration>PT1H</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f4" sourceRef="late" targetRef="e2"/>
    <endEvent id="e2"/>
  </process>
  <process id="ticking" isExecutable="true">
    <startEvent id="tick">
      <timerEventDefinition><timeCycle>R2/PT10M</timeCycle></timerEventDefinition>
    </startEvent>
    <sequenceFlow id="t1" sourceRef="tick" targetRef="te"/>
    <endEvent id="te"/>
  </process>
</definitions>"""


def test_job_definitions_are_listed_filtered_and_changed(rest: httpx.Client) -> None:
    deployment = deploy(rest, ("timed.bpmn", TIMED))
    answer = rest.get("/job-definition", params={"sortBy": "activityId", "sortOrder": "asc"})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    for item in found:
        assert set(item) == JOB_DEFINITION
        assert item["deploymentId"] == deployment["id"]
        assert item["suspended"] is False and item["overridingJobPriority"] is None
    assert [d["activityId"] for d in found] == ["late", "pause", "tick", "work", "work"]
    assert sorted((d["activityId"], d["jobType"], d["jobConfiguration"]) for d in found) == [
        ("late", "timer-transition", "DURATION: PT1H"),
        ("pause", "timer-intermediate-transition", "DURATION: PT5M"),
        ("tick", "timer-start-event", "CYCLE: R2/PT10M"),
        ("work", "async-continuation", "async-after"),
        ("work", "async-continuation", "async-before"),
    ]
    assert rest.get("/job-definition/count").json() == {"count": 5}
    by = {(d["activityId"], d["jobConfiguration"]): d for d in found}
    before = by[("work", "async-before")]
    assert rest.get(f"/job-definition/{before['id']}").json() == before
    params: dict[str, str] = {"processDefinitionKey": "ticking"}
    assert [d["activityId"] for d in rest.get("/job-definition", params=params).json()] == ["tick"]
    params = {"activityIdIn": "pause,late", "jobType": "timer-transition"}
    assert [d["activityId"] for d in rest.get("/job-definition", params=params).json()] == ["late"]
    params = {"jobConfiguration": "async-before"}
    assert [d["id"] for d in rest.get("/job-definition", params=params).json()] == [before["id"]]
    # The instance's job names its job definition.
    instance = start(rest, "timed")
    job = _job(rest, instance["id"])
    assert job["jobDefinitionId"] == before["id"]
    listed = rest.get("/job", params={"jobDefinitionId": before["id"]}).json()
    assert [j["id"] for j in listed] == [job["id"]]
    after = by[("work", "async-after")]
    assert rest.get("/job", params={"jobDefinitionId": after["id"]}).json() == []
    # Suspended with its jobs: the job is suspended too; the filters see it.
    answer = rest.put(
        f"/job-definition/{before['id']}/suspended", json={"suspended": True, "includeJobs": True}
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/job-definition/{before['id']}").json()["suspended"] is True
    assert _job(rest, instance["id"])["suspended"] is True
    suspended = rest.get("/job-definition", params={"suspended": "true"}).json()
    assert [d["id"] for d in suspended] == [before["id"]]
    assert rest.get("/job-definition/count", params={"active": "true"}).json() == {"count": 4}
    answer = rest.put(
        f"/job-definition/{before['id']}/suspended", json={"suspended": False, "includeJobs": True}
    )
    assert answer.status_code == 204
    assert _job(rest, instance["id"])["suspended"] is False
    # An overriding priority, with the jobs.
    answer = rest.put(
        f"/job-definition/{before['id']}/jobPriority", json={"priority": 12, "includeJobs": True}
    )
    assert answer.status_code == 204, answer.text
    assert rest.get(f"/job-definition/{before['id']}").json()["overridingJobPriority"] == 12
    assert _job(rest, instance["id"])["priority"] == 12
    params = {"withOverridingJobPriority": "true"}
    assert [d["id"] for d in rest.get("/job-definition", params=params).json()] == [before["id"]]
    answer = rest.put(f"/job-definition/{before['id']}/jobPriority", json={})
    assert answer.status_code == 204
    assert rest.get(f"/job-definition/{before['id']}").json()["overridingJobPriority"] is None
    _refused(
        rest.put(f"/job-definition/{before['id']}/jobPriority", json={"includeJobs": True}),
        400,
        "includeJobs",
    )
    # Retries of its jobs.
    answer = rest.put(f"/job-definition/{before['id']}/retries", json={"retries": 7})
    assert answer.status_code == 204, answer.text
    assert _job(rest, instance["id"])["retries"] == 7
    _refused(rest.put(f"/job-definition/{before['id']}/retries", json={}), 400, "null")
    _refused(rest.put(f"/job-definition/{MISSING}/retries", json={"retries": 1}), 404, MISSING)
    _refused(rest.get(f"/job-definition/{MISSING}"), 404, MISSING)
    _refused(rest.put(f"/job-definition/{MISSING}/suspended", json={"suspended": True}), 404)
    answer = rest.put(f"/job-definition/{before['id']}/suspended", json={"suspended": 1})
    _refused(answer, 400, "suspended")
