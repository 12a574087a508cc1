"""Camunda's /batch resource and the asynchronous operations that create batches: bodies, answers
and status codes. The server runs no job executor here: the test runs the chunks itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.builder import ProcessBuilder
from engine.states import InstanceState
from tests.engine.batches import run_to_end
from tests.server import PASSWORD, LiveServer, live_server

BATCH = {
    "id", "type", "totalJobs", "jobsCreated", "batchJobsPerSeed", "invocationsPerBatchJob",
    "seedJobDefinitionId", "monitorJobDefinitionId", "batchJobDefinitionId", "suspended",
    "tenantId", "createUserId", "startTime", "executionStartTime",
}  # fmt: skip
BATCH_STATISTICS = BATCH | {"remainingJobs", "completedJobs", "failedJobs"}


@pytest.fixture
def idle_server(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False) as running:
        yield running


def _client(server: LiveServer, role: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(role, PASSWORD), timeout=30)


def _instances(server: LiveServer, count: int) -> list[str]:
    server.engine.deploy(
        ProcessBuilder("rest-batch")
        .start_event("start")
        .service_task("charge", topic="rest-batch")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    return [str(server.engine.start_latest("rest-batch").id) for _ in range(count)]


def test_deleting_instances_as_a_batch_from_a_query(idle_server: LiveServer) -> None:
    ids = _instances(idle_server, 3)
    with _client(idle_server, "operator") as rest:
        created = rest.post(
            "/process-instance/delete",
            json={
                "processInstanceQuery": {"processDefinitionKey": "rest-batch"},
                "deleteReason": "clean up",
                "skipCustomListeners": True,
            },
        )
        assert created.status_code == 200, created.text
        batch: dict[str, Any] = created.json()
        assert set(batch) == BATCH
        assert batch["type"] == "instance-deletion"
        assert (batch["totalJobs"], batch["jobsCreated"], batch["suspended"]) == (3, 0, False)
        assert batch["createUserId"] == "operator"
        batch_id = batch["id"]
        assert rest.get("/batch").json() == [batch]
        assert rest.get("/batch/count", params={"type": "instance-deletion"}).json() == {"count": 1}
        assert rest.get("/batch/count", params={"type": "set-job-retries"}).json() == {"count": 0}
        assert rest.get(f"/batch/{batch_id}").json() == batch
        [stats] = rest.get("/batch/statistics").json()
        assert set(stats) == BATCH_STATISTICS
        assert (stats["remainingJobs"], stats["completedJobs"], stats["failedJobs"]) == (3, 0, 0)

        suspended = rest.put(f"/batch/{batch_id}/suspended", json={"suspended": True})
        assert suspended.status_code == 204
        assert [b["id"] for b in rest.get("/batch", params={"suspended": "true"}).json()] == [
            batch_id
        ]
        run_to_end(idle_server.engine, batch_id)
        assert idle_server.engine.instance(ids[0]).state is InstanceState.ACTIVE
        assert (
            rest.put(f"/batch/{batch_id}/suspended", json={"suspended": False}).status_code == 204
        )
        run_to_end(idle_server.engine, batch_id)
        assert {idle_server.engine.instance(i).state for i in ids} == {InstanceState.TERMINATED}
        # Finished: no longer a runtime batch, as in Camunda.
        gone = rest.get(f"/batch/{batch_id}")
        assert gone.status_code == 404
        assert gone.json()["type"] == "InvalidRequestException"
        assert rest.get("/batch").json() == []


def test_retries_as_batches_and_cancelling_one(idle_server: LiveServer) -> None:
    ids = _instances(idle_server, 2)
    with _client(idle_server, "operator") as rest:
        created = rest.post(
            "/external-task/retries-async", json={"processInstanceIds": ids, "retries": 5}
        )
        assert created.status_code == 200, created.text
        assert (created.json()["type"], created.json()["totalJobs"]) == (
            "set-external-task-retries",
            2,
        )
        run_to_end(idle_server.engine, created.json()["id"])
        tasks = idle_server.engine.external_tasks()
        assert {(str(t.instance_id), t.retries) for t in tasks} == {(i, 5) for i in ids}

        by_query = rest.post(
            "/external-task/retries-async",
            json={"externalTaskQuery": {"topicName": "rest-batch"}, "retries": 1},
        )
        assert by_query.json()["totalJobs"] == 2
        cancelled = rest.delete(f"/batch/{by_query.json()['id']}")
        assert cancelled.status_code == 204
        assert rest.get(f"/batch/{by_query.json()['id']}").status_code == 404
        assert rest.delete(f"/batch/{by_query.json()['id']}").status_code == 404

        jobs = rest.post("/job/retries", json={"jobIds": [ids[0]], "retries": 1})
        assert jobs.status_code == 200 and jobs.json()["type"] == "set-job-retries"


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/job/retries", {"jobIds": []}, "retries cannot be negative or null"),
        ("/job/retries", {"jobIds": [], "retries": 1}, "job ids are empty"),
        ("/job/retries", {"jobIds": "x", "retries": 1}, "'jobIds' must be an array of ids"),
        ("/external-task/retries-async", {"retries": -1}, "cannot be negative"),
        ("/process-instance/delete", {}, "processInstanceIds is empty"),
        (
            "/process-instance/delete",
            {"processInstanceQuery": {"variables": [{"name": "a"}]}},
            "'processInstanceQuery.variables' is not supported",
        ),
        ("/process-instance/delete", {"processInstanceQuery": 3}, "must be an object"),
    ],
)
def test_bad_bodies_are_refused_and_create_nothing(
    idle_server: LiveServer, path: str, body: dict[str, Any], message: str
) -> None:
    with _client(idle_server, "operator") as rest:
        refused = rest.post(path, json=body)
        assert refused.status_code == 400, refused.text
        assert refused.json()["type"] == "InvalidRequestException"
        assert message in refused.json()["message"]
        assert rest.get("/batch/count").json() == {"count": 0}


def test_a_viewer_reads_batches_and_changes_none(idle_server: LiveServer) -> None:
    ids = _instances(idle_server, 1)
    with _client(idle_server, "operator") as rest:
        batch_id = rest.post("/process-instance/delete", json={"processInstanceIds": ids}).json()[
            "id"
        ]
    with _client(idle_server, "viewer") as viewer:
        assert viewer.get(f"/batch/{batch_id}").status_code == 200
        assert (
            viewer.put(f"/batch/{batch_id}/suspended", json={"suspended": True}).status_code == 403
        )
        assert viewer.delete(f"/batch/{batch_id}").status_code == 403
        assert (
            viewer.post("/process-instance/delete", json={"processInstanceIds": ids}).status_code
            == 403
        )
    with _client(idle_server, "viewer") as viewer:
        assert viewer.get(f"/batch/{batch_id}").json()["suspended"] is False  # untouched
        assert viewer.get("/batch/count").json() == {"count": 1}


def test_deleting_history_as_a_batch_needs_an_administrator(idle_server: LiveServer) -> None:
    ids = _instances(idle_server, 2)
    for instance in ids:
        idle_server.engine.instance(instance).cancel()
    body = {"historicProcessInstanceIds": ids, "deleteReason": "tidy"}
    with _client(idle_server, "operator") as operator:
        assert operator.post("/history/process-instance/delete", json=body).status_code == 403
    with _client(idle_server, "admin") as admin:
        refused = admin.post(
            "/history/process-instance/delete", json={"historicProcessInstanceQuery": {}}
        )
        assert refused.status_code == 400
        assert "historicProcessInstanceQuery" in refused.json()["message"]
        created = admin.post("/history/process-instance/delete", json=body)
        assert created.status_code == 200, created.text
        assert (created.json()["type"], created.json()["totalJobs"]) == (
            "historic-process-instance-deletion",
            2,
        )
        run_to_end(idle_server.engine, created.json()["id"])
        gone = admin.get(
            "/history/process-instance/count", params={"processDefinitionKey": "rest-batch"}
        )
        assert gone.json() == {"count": 0}


# Camunda 7.24's HistoricBatchDto, written out from the reference.
HISTORIC_BATCH = {
    "id", "type", "totalJobs", "batchJobsPerSeed", "invocationsPerBatchJob",
    "seedJobDefinitionId", "monitorJobDefinitionId", "batchJobDefinitionId", "tenantId",
    "createUserId", "startTime", "endTime", "removalTime", "executionStartTime",
}  # fmt: skip


def test_history_keeps_running_and_ended_batches(idle_server: LiveServer) -> None:
    ids = _instances(idle_server, 2)
    with _client(idle_server, "operator") as rest:
        ended = rest.post("/process-instance/delete", json={"processInstanceIds": ids[:1]})
        assert ended.status_code == 200, ended.text
        ended_id = ended.json()["id"]
        run_to_end(idle_server.engine, ended_id)
        running = rest.post("/job/retries", json={"jobIds": [ids[1]], "retries": 1})
        assert running.status_code == 200, running.text
        running_id = running.json()["id"]

        listed = {b["id"]: b for b in rest.get("/history/batch").json()}
        assert set(listed) == {ended_id, running_id}
        for batch in listed.values():
            assert set(batch) == HISTORIC_BATCH, batch
        assert listed[ended_id]["type"] == "instance-deletion"
        assert listed[ended_id]["endTime"] is not None
        assert listed[ended_id]["createUserId"] == "operator"
        assert listed[running_id]["endTime"] is None
        assert rest.get("/history/batch/count").json() == {"count": 2}
        done = rest.get("/history/batch", params={"completed": "true"}).json()
        assert [b["id"] for b in done] == [ended_id]
        undone = rest.get("/history/batch", params={"completed": "false"}).json()
        assert [b["id"] for b in undone] == [running_id]
        typed = rest.get("/history/batch/count", params={"type": "set-job-retries"}).json()
        assert typed == {"count": 1}
        assert rest.get(f"/history/batch/{ended_id}").json() == listed[ended_id]
        # The runtime resource no longer has it.
        assert rest.get(f"/batch/{ended_id}").status_code == 404
        missing = rest.get("/history/batch/01a24af7-0000-7000-8000-000000000000")
        assert missing.status_code == 404
        assert missing.json()["type"] == "InvalidRequestException"
        wrong = rest.get("/history/batch", params={"completed": "maybe"})
        assert wrong.status_code == 400 and "completed" in wrong.json()["message"]
