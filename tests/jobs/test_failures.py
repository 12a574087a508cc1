"""A failing job is retried with backoff, stops its path with an incident when its retries are
spent, and runs again after an operator retry; the rest of the instance keeps going."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import psycopg.errors
import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.core.executor import Command
from engine.core.handlers import TaskContext
from engine.loops.jobs import JobExecutor, run_job
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState
from tests.jobs.conftest import ManualClock


def async_work(retry_cycle: str | None = None) -> ProcessModel:
    return (
        ProcessBuilder("async-work")
        .start_event("start")
        .service_task("work", handler="work", async_before=True, retry_cycle=retry_cycle)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


# The job that fails: an asynchronous continuation before `work`, or a timer whose firing runs
# `work` in the same command. Both count down the same way and end in a failedJob incident.
JOB_KINDS = ["async", "timer"]


def failing_job(kind: str, retry_cycle: str | None = None) -> tuple[ProcessModel, str]:
    """start -> work -> end with a job in front of `work`; the process and the job's node."""
    if kind == "async":
        return async_work(retry_cycle), "work"
    model = (
        ProcessBuilder("async-work")
        .start_event("start")
        .intermediate_catch_event(
            "wait", timer=TimerDefinition(kind="duration", text="PT1S"), retry_cycle=retry_cycle
        )
        .service_task("work", handler="work")
        .end_event("end")
        .chain("start", "wait", "work", "end")
        .build()
    )
    return model, "wait"


def start_failing(
    engine: Engine, clock: ManualClock, kind: str, retry_cycle: str | None = None
) -> tuple[InstanceHandle, str]:
    """Deploy and start a `failing_job` process; its job is due when this returns."""
    model, node_id = failing_job(kind, retry_cycle)
    engine.deploy(model)
    instance = engine.start_latest("async-work")
    clock.advance(seconds=1)
    return instance, node_id


class Flaky:
    """A handler that raises until it is fixed, counting its calls."""

    def __init__(self) -> None:
        self.attempts = 0
        self.fixed = False

    def __call__(self, ctx: TaskContext) -> dict[str, Any]:
        self.attempts += 1
        if not self.fixed:
            raise RuntimeError("card declined")
        return {"charged": True}


def only_job(engine: Engine, instance_id: UUID) -> Any:
    [job] = engine.jobs(instance_id)
    return job


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_failing_job_is_retried_with_backoff_then_stops_with_an_incident(
    engine: Engine, clock: ManualClock, kind: str
) -> None:
    handler = Flaky()
    engine.register_handler("work", handler)
    instance, node_id = start_failing(engine, clock, kind)
    executor = JobExecutor(engine)

    assert executor.run_once() == 1
    assert handler.attempts == 1
    for attempt in (2, 3):
        job = only_job(engine, instance.id)
        assert job.retries == 4 - attempt
        assert job.due_at > clock()
        assert job.lock_owner is None
        assert "RuntimeError: card declined" in (job.error_message or "")
        clock.set(job.due_at - timedelta(milliseconds=1))
        assert executor.run_once() == 0
        assert handler.attempts == attempt - 1
        clock.set(job.due_at)
        assert executor.run_once() == 1
        assert handler.attempts == attempt

    job = only_job(engine, instance.id)
    assert job.retries == 0
    clock.advance(days=1)
    assert executor.run_once() == 0
    assert handler.attempts == 3
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.type == "failedJob"
    assert incident.node_id == node_id
    assert incident.job_id == job.id
    assert "RuntimeError: card declined" in incident.message
    assert incident.message.startswith("HandlerError: ")
    assert instance.state is InstanceState.ACTIVE

    handler.fixed = True
    engine.retry_incident(incident.id)
    assert engine.incidents(instance_id=instance.id) == []
    assert executor.run_once() == 1
    assert handler.attempts == 4
    assert instance.info().state == InstanceState.COMPLETED
    assert instance.variables() == {"charged": True}


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_failure_details_hold_the_traceback(engine: Engine, clock: ManualClock, kind: str) -> None:
    handler = Flaky()
    engine.register_handler("work", handler)
    instance, _ = start_failing(engine, clock, kind, retry_cycle="R1/PT1M")
    assert JobExecutor(engine).run_once() == 1
    [incident] = engine.incidents(instance_id=instance.id)
    with engine.connection() as conn:
        row = conn.execute("SELECT details FROM incident WHERE id = %s", (incident.id,)).fetchone()
    assert row is not None
    assert "Traceback" in row[0] and "card declined" in row[0]


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_retry_cycle_gives_two_attempts_five_minutes_apart(
    engine: Engine, clock: ManualClock, kind: str
) -> None:
    handler = Flaky()
    engine.register_handler("work", handler)
    instance, _ = start_failing(engine, clock, kind, retry_cycle="R2/PT5M")
    executor = JobExecutor(engine)
    first = clock()
    assert executor.run_once() == 1
    job = only_job(engine, instance.id)
    assert (job.retries, job.due_at) == (1, first + timedelta(minutes=5))
    clock.advance(minutes=4, seconds=59)
    assert executor.run_once() == 0
    clock.advance(seconds=1)
    assert executor.run_once() == 1
    assert handler.attempts == 2
    assert only_job(engine, instance.id).retries == 0
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.type == "failedJob"
    clock.advance(hours=1)
    assert executor.run_once() == 0
    assert handler.attempts == 2


@pytest.mark.parametrize("kind", JOB_KINDS)
def test_a_failed_branch_does_not_block_the_other(
    engine: Engine, clock: ManualClock, kind: str
) -> None:
    handler = Flaky()
    engine.register_handler("work", handler)
    builder = ProcessBuilder("split").start_event("start").parallel_gateway("fork")
    builder.chain("start", "fork")
    if kind == "async":
        builder.service_task("work", handler="work", async_before=True, retry_cycle="R1/PT1M")
        builder.chain("fork", "work")
        stopped_at = "work"
    else:
        builder.intermediate_catch_event(
            "wait", timer=TimerDefinition(kind="duration", text="PT1S"), retry_cycle="R1/PT1M"
        )
        builder.service_task("work", handler="work").chain("fork", "wait", "work")
        stopped_at = "wait"
    model = (
        builder.user_task("review")
        .parallel_gateway("join")
        .end_event("end")
        .chain("work", "join", "end")
        .chain("fork", "review", "join")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("split")
    clock.advance(seconds=1)
    executor = JobExecutor(engine)
    assert executor.run_once() == 1
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.node_id == stopped_at

    [review] = instance.user_tasks()
    engine.complete_task(review.id)
    assert instance.state is InstanceState.ACTIVE
    assert sorted(t.node_id for t in instance.tokens()) == sorted(["join", stopped_at])

    handler.fixed = True
    engine.retry_incident(incident.id)
    assert executor.run_once() == 1
    assert instance.info().state == InstanceState.COMPLETED


def test_database_errors_propagate_without_counting_a_failure(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.register_handler("work", lambda ctx: None)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    job = only_job(engine, instance.id)
    run = engine.run

    def broken(command: Command[Any], idempotency_key: str | None = None) -> Any:
        if isinstance(command, ExecuteJob):
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return run(command, idempotency_key)

    monkeypatch.setattr(engine, "run", broken)
    with pytest.raises(psycopg.OperationalError):
        run_job(engine, job.id, None)
    monkeypatch.undo()
    after = only_job(engine, instance.id)
    assert (after.retries, after.error_message) == (3, None)
    assert engine.incidents() == []


def test_a_statement_timeout_counts_as_the_jobs_failure(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.register_handler("work", lambda ctx: None)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    job = only_job(engine, instance.id)
    run = engine.run

    def slow(command: Command[Any], idempotency_key: str | None = None) -> Any:
        # The job's own command times out; the command that counts the failure down does not.
        if isinstance(command, ExecuteJob) and command.failure is None:
            raise psycopg.errors.QueryCanceled("canceling statement due to statement timeout")
        return run(command, idempotency_key)

    monkeypatch.setattr(engine, "run", slow)
    assert run_job(engine, job.id, None) == "failed"
    monkeypatch.undo()
    after = only_job(engine, instance.id)
    assert after.retries == 2
    assert after.error_message == "QueryCanceled: canceling statement due to statement timeout"


def test_the_loop_survives_a_database_outage(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    done = threading.Event()
    engine.register_handler("work", lambda ctx: done.set())
    engine.deploy(async_work())
    run = engine.run
    outage = [3]

    def flaky(command: Command[Any], idempotency_key: str | None = None) -> Any:
        if isinstance(command, AcquireJobs) and outage[0] > 0:
            outage[0] -= 1
            raise psycopg.OperationalError("connection refused")
        return run(command, idempotency_key)

    monkeypatch.setattr(engine, "run", flaky)
    executor = JobExecutor(engine, poll_interval=0.2)
    executor.error_backoff_seconds = 0.02
    with caplog.at_level(logging.ERROR, logger="engine.jobs"):
        executor.start()
        try:
            instance = engine.start_latest("async-work")
            assert done.wait(5)
            assert instance.wait_completion(5) is InstanceState.COMPLETED
            assert executor.running
        finally:
            executor.stop()
    assert outage == [0]
    assert sum("loop failed" in r.getMessage() for r in caplog.records) == 3


def test_execute_job_api_runs_a_job_before_it_is_due(engine: Engine, clock: ManualClock) -> None:
    handler = Flaky()
    engine.register_handler("work", handler)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    job = only_job(engine, instance.id)
    assert engine.execute_job(job.id) == "failed"
    assert only_job(engine, instance.id).retries == 2
    handler.fixed = True
    assert engine.execute_job(job.id) == "executed"
    assert instance.state is InstanceState.COMPLETED
    assert engine.execute_job(job.id) == "gone"


def test_a_job_taken_over_is_not_run_by_its_former_owner(
    engine: Engine, clock: ManualClock
) -> None:
    calls: list[float] = []
    engine.register_handler("work", lambda ctx: calls.append(time.monotonic()))
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    first = JobExecutor(engine, owner="first", lock_seconds=10)
    second = JobExecutor(engine, owner="second", lock_seconds=10)
    [job_id] = engine.run(AcquireJobs("first", 10, 10)).job_ids
    assert second.run_once() == 0
    clock.advance(seconds=11)
    [taken] = engine.run(AcquireJobs("second", 10, 10)).job_ids
    assert taken == job_id
    assert run_job(engine, UUID(job_id), first.owner) == "not-owner"
    assert calls == []
    assert run_job(engine, UUID(job_id), second.owner) == "executed"
    assert len(calls) == 1
    assert instance.state is InstanceState.COMPLETED


def test_default_backoff_grows_from_one_second(engine: Engine, clock: ManualClock) -> None:
    engine.register_handler("work", Flaky())
    instance, _ = start_failing(engine, clock, "timer")
    executor = JobExecutor(engine)
    delays = []
    for _ in range(2):
        failed_at = clock()
        assert executor.run_once() == 1
        job = only_job(engine, instance.id)
        delays.append(job.due_at - failed_at)
        clock.set(job.due_at)
    assert delays == [timedelta(seconds=1), timedelta(seconds=2)]
