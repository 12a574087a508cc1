"""Starting the history cleanup by hand: Camunda's POST /engine-rest/history/cleanup (answering
the cleanup job as a JobDto), its job and configuration, and the console's page and button
(a POST with the CSRF token, for operators; viewers only look)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from engine.commands.cleanup import CLEANUP_JOB_ID
from engine.core.settings import EngineSettings
from engine.db.retention import CleanupWindow, RetentionSettings
from tests.api.test_sessions import Browser
from tests.jobs.retention_data import check_families, deploy, expected_gone, insert_instances
from tests.server import PASSWORD, LiveServer, live_server

N = 200
JOB_FIELDS = {
    "id", "jobDefinitionId", "processInstanceId", "processDefinitionId", "processDefinitionKey",
    "executionId", "exceptionMessage", "failedActivityId", "retries", "dueDate", "suspended",
    "priority", "tenantId", "createTime", "batchId",
}  # fmt: skip


def serve(database_url: str, window: CleanupWindow | None) -> Iterator[LiveServer]:
    retention = RetentionSettings(history_ttl_days=60, window=window, batch_size=40)
    with live_server(database_url, settings=EngineSettings(retention=retention)) as server:
        yield server


@pytest.fixture
def api(database_url: str) -> Iterator[LiveServer]:
    yield from serve(database_url, None)


def rest(server: LiveServer, role: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(role, PASSWORD), timeout=30)


def with_ended_instances(server: LiveServer, database_url: str) -> None:
    insert_instances(database_url, deploy(server.engine), N, datetime.now(UTC))


def finished_runs(database_url: str, count: int, timeout: float = 60) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + timeout
    with psycopg.connect(database_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            runs = conn.execute(
                "SELECT state, manual, instances FROM history_cleanup_run "
                "WHERE state = 'Finished' ORDER BY id"
            ).fetchall()
            if len(runs) >= count:
                return runs
            time.sleep(0.1)
    raise AssertionError("the cleanup did not finish")


def test_post_history_cleanup_starts_a_run_and_answers_its_job(
    api: LiveServer, database_url: str
) -> None:
    with_ended_instances(api, database_url)
    with rest(api, "viewer") as viewer, rest(api, "operator") as operator:
        refused = viewer.post("/history/cleanup")
        assert refused.status_code == 403, refused.text
        assert viewer.get("/history/cleanup/jobs").json() == []
        answer = operator.post("/history/cleanup")
        assert answer.status_code == 200, answer.text
        job = answer.json()
        assert set(job) == JOB_FIELDS
        assert job["id"] == str(CLEANUP_JOB_ID)
        assert (job["processInstanceId"], job["processDefinitionId"]) == (None, None)
        assert (job["retries"], job["suspended"]) == (3, False)
        assert finished_runs(database_url, 1) == [("Finished", True, expected_gone(N))]
        with psycopg.connect(database_url) as conn:
            check_families(conn, N, finished=True)
        # With no daily window the job is gone once its run finished.
        missing = viewer.get("/history/cleanup/job")
        assert missing.status_code == 404, missing.text
        assert missing.json()["message"] == "History cleanup job does not exist"
        assert viewer.get("/history/cleanup/jobs").json() == []
        assert viewer.get("/history/cleanup/configuration").json() == {
            "batchWindowStartTime": None,
            "batchWindowEndTime": None,
            "enabled": False,
        }
        for value, problem in (("false", "immediatelyDue"), ("maybe", "immediatelyDue")):
            bad = operator.post("/history/cleanup", params={"immediatelyDue": value})
            assert bad.status_code == 400, bad.text
            assert problem in bad.json()["message"]


def test_immediately_due_false_waits_for_the_window(database_url: str) -> None:
    for server in serve(database_url, CleanupWindow.parse("03:00-04:00")):
        with rest(server, "operator") as operator:
            job = operator.post("/history/cleanup", params={"immediatelyDue": "false"}).json()
            configuration = operator.get("/history/cleanup/configuration").json()
            assert configuration["enabled"] is True
            starts = configuration["batchWindowStartTime"]
            assert starts.endswith("T03:00:00.000+0000")
            assert configuration["batchWindowEndTime"].endswith("T04:00:00.000+0000")
            now = datetime.now(UTC)
            if not 3 <= now.hour < 4:  # outside the window, the job waits for its start
                assert job["dueDate"] == starts
            assert operator.get("/history/cleanup/job").json()["id"] == str(CLEANUP_JOB_ID)
            listed = operator.get("/job", params={"jobIds": str(CLEANUP_JOB_ID)}).json()
            assert [found["id"] for found in listed] == [str(CLEANUP_JOB_ID)]


def test_the_console_button_starts_a_run_for_operators_only(
    api: LiveServer, database_url: str
) -> None:
    with_ended_instances(api, database_url)
    viewer, operator = Browser(api.url, "viewer"), Browser(api.url, "operator")
    try:
        page = viewer.get("/cleanup")
        assert page.status_code == 200
        assert 'id="start-cleanup"' not in page.text and "No run yet." in page.text
        refused = viewer.post("/cleanup/start")
        assert refused.status_code == 403, refused.text
        forged = operator.post("/cleanup/start", headers={"X-CSRF-Token": "forged"})
        assert forged.status_code == 403, forged.text
        assert operator.get("/cleanup").text.count('id="start-cleanup"') == 1
        with psycopg.connect(database_url) as conn:
            assert conn.execute("SELECT count(*) FROM history_cleanup_run").fetchone() == (0,)
        started = operator.post("/cleanup/start")
        assert started.status_code == 200, started.text
        assert "History cleanup started" in started.text
        finished_runs(database_url, 1)
        shown = viewer.get("/cleanup?fragment=1").text
        assert "Last run: Finished" in shown and f"{expected_gone(N)} instances," in shown
    finally:
        viewer.close()
        operator.close()
