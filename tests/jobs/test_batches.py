"""Due timers of different instances run together in one transaction, exactly as each would run
alone; a batch in which one job fails runs again one job at a time."""

from __future__ import annotations

import logging
import re
from typing import TypeVar

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.jobs import ExecuteJobs, JobOutcomes
from engine.core.executor import Command, Idempotency, Result
from engine.core.handlers import TaskContext
from engine.errors import BadRequest
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition
from tests.jobs.conftest import ManualClock

T = TypeVar("T", bound=Result)


def timer_then_work() -> ProcessModel:
    """start -> wait (timer, PT1M) -> work (handler) -> end."""
    return (
        ProcessBuilder("timer-work")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT1M"))
        .service_task("work", handler="work")
        .end_event("end")
        .chain("start", "wait", "work", "end")
        .build()
    )


def test_due_timers_of_many_instances_fire_in_one_command(
    engine: Engine, clock: ManualClock
) -> None:
    fired: list[int] = []
    engine.register_handler("work", lambda ctx: fired.append(ctx.get("n")))
    engine.deploy(timer_then_work())
    instances = [engine.start_latest("timer-work", {"n": n}) for n in range(20)]
    clock.advance(minutes=2)
    batches: list[int] = []
    run = engine.run

    def counting(command: Command[T], idempotency_key: str | Idempotency | None = None) -> T:
        result = run(command, idempotency_key)
        if isinstance(result, JobOutcomes):  # reached only when the batch committed
            batches.append(list(result.outcomes.values()).count("executed"))
        return result

    engine.run = counting  # type: ignore[method-assign]  # a counting wrapper, on this one engine
    assert JobExecutor(engine).run_once() == 20
    assert batches == [20]
    assert sorted(fired) == list(range(20))
    assert {i.state.value for i in instances} == {"Completed"}
    assert engine.jobs() == []
    visits = [step.node_id for i in instances for path in i.history() for step in path.steps]
    assert visits.count("wait") == 20 and visits.count("end") == 20


def test_a_failing_job_in_a_batch_fails_alone(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS batch_effect (n int NOT NULL)")
        conn.execute("TRUNCATE batch_effect")

    def work(ctx: TaskContext) -> None:
        if ctx.get("n") == 3:
            raise RuntimeError("no luck for three")
        ctx.connection.execute("INSERT INTO batch_effect (n) VALUES (%s)", (ctx.get("n"),))

    engine.register_handler("work", work)
    engine.deploy(timer_then_work())
    instances = [engine.start_latest("timer-work", {"n": n}) for n in range(6)]
    clock.advance(minutes=2)
    assert JobExecutor(engine).run_once() == 6
    # The batch rolled back; then each job ran in its own transaction: every other job's effect
    # committed exactly once, the failing one counted a failure on its own job.
    with psycopg.connect(database_url, autocommit=True) as conn:
        effects = [row[0] for row in conn.execute("SELECT n FROM batch_effect ORDER BY n")]
        conn.execute("DROP TABLE batch_effect")
    assert effects == [0, 1, 2, 4, 5]
    states = [i.state.value for i in instances]
    assert states == ["Completed"] * 3 + ["Active"] + ["Completed"] * 2
    (job,) = engine.jobs()
    assert job.instance_id == instances[3].id
    assert job.retries == 2 and "no luck for three" in (job.error_message or "")


def test_a_failed_batch_is_logged_as_a_warning_naming_its_jobs(
    engine: Engine, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    def work(ctx: TaskContext) -> None:
        if ctx.get("n") == 1:
            raise RuntimeError("no luck for one")

    engine.register_handler("work", work)
    engine.deploy(timer_then_work())
    instances = [engine.start_latest("timer-work", {"n": n}) for n in range(3)]
    job_ids = {str(job.id) for job in engine.jobs()}
    assert len(job_ids) == 3
    clock.advance(minutes=2)
    with caplog.at_level(logging.WARNING, logger="engine.jobs"):
        assert JobExecutor(engine).run_once() == 3
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = warning.getMessage()
    assert warning.name == "engine.jobs"
    assert "failed together" in message and "no luck for one" in message
    assert set(re.findall(r"[0-9a-f]{8}-[0-9a-f-]{27}", message)) == job_ids
    assert [i.state.value for i in instances] == ["Completed", "Active", "Completed"]


def test_jobs_of_one_instance_are_not_batched_together(engine: Engine) -> None:
    engine.deploy(timer_then_work())
    instance = engine.start_latest("timer-work", {"n": 1})
    (job,) = engine.jobs()
    with pytest.raises(BadRequest, match="one job per instance"):
        engine.run(ExecuteJobs(((job.id, instance.id), (job.id, instance.id))))
