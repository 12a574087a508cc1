"""`GET /metrics` over a real server: parsed with prometheus_client's text-format parser, its
counters move with the work done (commands, jobs, fetches, lock expiries, incidents); any role
may read it with a token, HTTP Basic or a console session, nobody without credentials; and a
database that does not answer makes `interlock_database_up` 0 while the scrape still answers."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg import sql

from engine.builder import ProcessBuilder
from engine.db.database import database_name
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel
from tests.conftest import AdminConnection
from tests.server import PASSWORD, LiveServer, console_login, live_server
from tests.waiting import wait_until

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def scrape(server: LiveServer, role: str = "viewer") -> Samples:
    answer = httpx.get(f"{server.url}/metrics", headers=server.bearer(role), timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return parse(answer.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def worked(model_key: str) -> ProcessModel:
    """start -> an external task (topic = the key) -> an asynchronous user task -> end."""
    return (
        ProcessBuilder(model_key)
        .start_event("start")
        .service_task("work", topic=model_key)
        .user_task("review", async_before=True)
        .end_event("end")
        .chain("start", "work", "review", "end")
        .build()
    )


@pytest.fixture
def api(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url) as server:
        yield server


def _fetch(http: httpx.Client, worker: str, topic: str, lock_ms: int = 60_000) -> list[str]:
    answer = http.post(
        "/api/v1/external-tasks/fetch-and-lock",
        json={"worker_id": worker, "topics": [{"topic": topic, "lock_duration_ms": lock_ms}]},
    )
    assert answer.status_code == 200, answer.text
    return [item["id"] for item in answer.json()["items"]]


def test_counters_move_with_the_work_done(api: LiveServer) -> None:
    key = f"metrics-{uuid.uuid4().hex[:8]}"
    api.engine.deploy(worked(key))
    before = scrape(api)
    assert value(before, "interlock_database_up") == 1
    assert value(before, "interlock_open_incidents") == 0
    assert value(before, "interlock_pool_max_connections", pool="read") >= 1
    assert value(before, "interlock_pool_max_connections", pool="command") >= 1

    with httpx.Client(base_url=api.url, headers=api.bearer("operator"), timeout=30) as http:
        started = [http.post(f"/api/v1/definitions/key/{key}/start", json={}) for _ in range(3)]
        assert all(answer.status_code == 201 for answer in started), started[0].text
        missing = http.post(
            f"/api/v1/external-tasks/{uuid.uuid4()}/complete", json={"worker_id": "w1"}
        )
        assert missing.status_code == 404
        # One task completes; its instance goes on to the job and then the user task.
        first = _fetch(http, "w1", key)
        assert len(first) == 1
        done = http.post(f"/api/v1/external-tasks/{first[0]}/complete", json={"worker_id": "w1"})
        assert done.status_code == 200, done.text
        # One task fails with no retries left: an incident.
        second = _fetch(http, "w1", key)
        failed = http.post(
            f"/api/v1/external-tasks/{second[0]}/failure",
            json={"worker_id": "w1", "error_message": "boom", "retries": 0},
        )
        assert failed.status_code == 200, failed.text
        # One task's lock expires and another worker takes it over.
        third = _fetch(http, "w1", key, lock_ms=50)
        time.sleep(0.2)
        assert _fetch(http, "w2", key) == third
        assert _fetch(http, "w2", key) == []
        # The job executor runs the asynchronous continuation of the completed instance.
        instance = done.json()["instance_id"]
        wait_until(
            lambda: http.get("/api/v1/user-tasks", params={"instance_id": instance}).json()["items"]
        )

    after = scrape(api)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("interlock_commands_total", command="StartInstance", outcome="ok") == 3
    assert moved("interlock_commands_total", command="CompleteExternalTask", outcome="ok") == 1
    assert (
        moved("interlock_commands_total", command="CompleteExternalTask", outcome="not_found") == 1
    )
    assert moved("interlock_commands_total", command="FailExternalTask", outcome="ok") == 1
    assert moved("interlock_commands_total", command="FetchAndLock", outcome="ok") == 4
    assert moved("interlock_commands_total", command="FetchAndLock", outcome="empty") >= 1
    assert moved("interlock_command_duration_seconds_count", command="StartInstance") == 3
    assert moved("interlock_command_duration_seconds_sum", command="StartInstance") > 0
    assert moved("interlock_jobs_total", outcome="executed") == 1
    assert moved("interlock_job_lag_seconds_count") == 1
    assert moved("interlock_external_task_fetches_total", result="locked") == 4
    assert moved("interlock_external_task_fetches_total", result="empty") == 1
    assert moved("interlock_external_tasks_locked_total") == 4
    assert moved("interlock_external_task_lock_expiries_total") == 1
    assert moved("interlock_pool_requests_total", pool="command") > 0
    assert value(after, "interlock_open_incidents") == 1
    # The event stream's tail handed the new outbox rows out, some milliseconds after they were
    # written.
    assert value(after, "interlock_outbox_tail_lag_seconds") > 0
    assert value(after, "interlock_database_up") == 1


def test_the_lag_of_due_jobs_nobody_runs_is_read_from_the_database(database_url: str) -> None:
    """The overdue gauge counts every process's executors: a server that runs no jobs sees a due
    job wait, and sees the wait end once an executor elsewhere has run it."""
    key = f"lag-{uuid.uuid4().hex[:8]}"
    with live_server(database_url, run_jobs=False) as server:
        server.engine.deploy(
            ProcessBuilder(key)
            .start_event("start")
            .user_task("review", async_before=True)
            .end_event("end")
            .chain("start", "review", "end")
            .build()
        )
        assert value(scrape(server), "interlock_jobs_overdue_seconds") == 0
        instance = server.engine.start_latest(key)
        time.sleep(0.3)
        waited = value(scrape(server), "interlock_jobs_overdue_seconds")
        assert 0.2 < waited < 60
        assert JobExecutor(server.engine).run_once() == 1
        assert [task.node_id for task in instance.user_tasks()] == ["review"]
        assert value(scrape(server), "interlock_jobs_overdue_seconds") == 0


def test_any_role_may_read_it_and_nobody_without_credentials(api: LiveServer) -> None:
    url = f"{api.url}/metrics"
    anonymous = httpx.get(url, timeout=30, follow_redirects=False)
    assert anonymous.status_code == 401
    assert "interlock_commands" not in anonymous.text
    wrong = httpx.get(url, headers={"Authorization": "Bearer nope"}, timeout=30)
    assert wrong.status_code == 401
    for role in ("viewer", "operator", "admin"):
        assert "interlock_database_up" in {f[0] for f in scrape(api, role)}
        basic = base64.b64encode(f"{role}:{PASSWORD}".encode()).decode()
        answer = httpx.get(url, headers={"Authorization": f"Basic {basic}"}, timeout=30)
        assert answer.status_code == 200, answer.text
    login = console_login(api.url, "viewer")
    assert login.status_code == 303
    cookie = login.cookies["interlock_session"]
    with httpx.Client(cookies={"interlock_session": cookie}, timeout=30) as browser:
        page = browser.get(url, follow_redirects=False)
    assert page.status_code == 200
    assert ("interlock_database_up", ()) in parse(page.text)


def test_a_database_that_does_not_answer_is_database_up_0_not_an_error(
    database_url: str, admin_connection: AdminConnection
) -> None:
    with live_server(database_url, auth=False, run_jobs=False) as server:
        up = parse(httpx.get(f"{server.url}/metrics", timeout=30).text)
        assert value(up, "interlock_database_up") == 1
        admin_connection.execute(
            sql.SQL("DROP DATABASE {} WITH (FORCE)").format(
                sql.Identifier(database_name(database_url))
            )
        )
        started = time.monotonic()
        answer = httpx.get(f"{server.url}/metrics", timeout=30)
        assert answer.status_code == 200, answer.text
        assert time.monotonic() - started < 5
        down = parse(answer.text)
        assert value(down, "interlock_database_up") == 0
        assert ("interlock_open_incidents", ()) not in down
        assert ("interlock_commands_total", ()) not in down  # labelled only
        assert any(name == "interlock_pool_connections" for name, _ in down)


def test_open_event_streams_are_counted(api: LiveServer) -> None:
    before = value(scrape(api), "interlock_sse_clients")
    with (
        httpx.Client(base_url=api.url, headers=api.bearer("viewer"), timeout=30) as http,
        http.stream("GET", "/api/v1/stream") as stream,
    ):
        # One iterator for the whole stream: dropping a half-read one closes the connection.
        lines = stream.iter_lines()
        for line in lines:
            if line.startswith("event: ready"):
                break
        assert value(scrape(api), "interlock_sse_clients") == before + 1
    wait_until(lambda: value(scrape(api), "interlock_sse_clients") == before)
