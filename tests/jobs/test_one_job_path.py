"""A job runs one way, whoever runs it: the job executor and `POST /api/v1/jobs/{id}/execute`
treat a failure of the same kind the same way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest

from engine.core.handlers import TaskContext
from engine.loops.jobs import JobExecutor
from tests.engine.processes import async_work
from tests.server import LiveServer, live_server


@pytest.fixture
def server(database_url: str) -> Iterator[LiveServer]:
    with live_server(database_url, run_jobs=False) as live:
        yield live


@pytest.fixture
def operator(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{server.url}/api/v1", headers=server.bearer("operator"), timeout=30
    ) as client:
        yield client


def raising(ctx: TaskContext) -> None:
    raise RuntimeError("the card was declined")


def timing_out(ctx: TaskContext) -> None:
    ctx.connection.execute("SET LOCAL statement_timeout = '50ms'")
    ctx.connection.execute("SELECT pg_sleep(2)")


def a_job(server: LiveServer, key: str) -> UUID:
    instance = server.engine.start_latest(key)
    [job] = server.engine.jobs(instance.id)
    return job.id


def through_the_executor(server: LiveServer, job_id: UUID) -> None:
    assert JobExecutor(server.engine, batch_size=10).run_once() == 1


def through_the_api(operator: httpx.Client) -> Callable[[LiveServer, UUID], None]:
    def execute(server: LiveServer, job_id: UUID) -> None:
        answer = operator.post(f"/jobs/{job_id}/execute")
        assert answer.status_code == 200, answer.text
        assert answer.json()["outcome"] == "failed"

    return execute


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (raising, "raised RuntimeError: the card was declined"),
        (timing_out, "QueryCanceled: canceling statement due to statement timeout"),
    ],
    ids=["handler-raises", "statement-timeout"],
)
def test_a_failure_counts_down_a_retry_through_the_executor_and_the_api(
    server: LiveServer, operator: httpx.Client, handler: Callable[..., Any], message: str
) -> None:
    engine = server.engine
    key = f"job-{handler.__name__}"
    engine.register_handler("work", handler)
    engine.deploy(async_work(key))
    seen: dict[str, tuple[int, str | None, int]] = {}
    for name, run in (
        ("executor", through_the_executor),
        ("api", through_the_api(operator)),
    ):
        job_id = a_job(server, key)
        run(server, job_id)
        job = engine.job(job_id)
        seen[name] = (job.retries, job.error_message, len(engine.incidents()))
    assert seen["executor"] == seen["api"]
    retries, error, incidents = seen["api"]
    assert (retries, incidents) == (2, 0)
    assert error is not None and error.endswith(message)


def test_a_repeated_execute_request_replays_its_failure(
    server: LiveServer, operator: httpx.Client
) -> None:
    engine = server.engine
    calls: list[UUID] = []

    def counted(ctx: TaskContext) -> None:
        calls.append(ctx.instance_id)
        raise RuntimeError("once")

    engine.register_handler("work", counted)
    engine.deploy(async_work("job-replayed"))
    job_id = a_job(server, "job-replayed")
    headers = {"Idempotency-Key": "execute-once"}
    first = operator.post(f"/jobs/{job_id}/execute", headers=headers)
    again = operator.post(f"/jobs/{job_id}/execute", headers=headers)
    assert first.status_code == again.status_code == 200, again.text
    assert first.json() == again.json()
    assert first.json()["outcome"] == "failed"
    assert len(calls) == 1
    assert engine.job(job_id).retries == 2
    assert engine.run_job(job_id, idempotency_key="py-key").outcome == "failed"
    assert engine.run_job(job_id, idempotency_key="py-key").outcome == "failed"
    assert len(calls) == 2
    assert engine.job(job_id).retries == 1
