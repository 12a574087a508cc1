"""Timers fire when due and not before: catch events, boundary events, cycles, start events; and
asynchronous continuations run through the job executor."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.jobs import AcquireJobs
from engine.core.executor import Command, Idempotency, Result
from engine.core.handlers import TaskContext
from engine.errors import Conflict
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition, TimerKind
from engine.states import InstanceState
from engine.store.jobs import next_acquirable
from tests.jobs.conftest import ManualClock, snapshot

T = TypeVar("T", bound=Result)


def timer_catch(kind: TimerKind, text: str, key: str = "timer-catch") -> ProcessModel:
    """start -> wait (timer) -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind=kind, text=text))
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )


def review_with_boundary(*, cancel_activity: bool, kind: TimerKind, text: str) -> ProcessModel:
    """start -> review (user task) -> done; a timer on review leads to `late` (a user task)."""
    return (
        ProcessBuilder("review")
        .start_event("start")
        .user_task("review")
        .end_event("done")
        .boundary_event(
            "timeout",
            "review",
            cancel_activity=cancel_activity,
            timer=TimerDefinition(kind=kind, text=text),
        )
        .user_task("late")
        .end_event("late_done")
        .chain("start", "review", "done")
        .chain("timeout", "late", "late_done")
        .build()
    )


def positions(engine: Engine, instance_id: Any) -> list[str]:
    return sorted(t.node_id for t in engine.instance(instance_id).tokens())


@pytest.mark.parametrize(
    ("kind", "text", "variables", "due_in"),
    [
        ("duration", "PT10M", {}, timedelta(minutes=10)),
        ("date", "2030-01-01T10:00:00Z", {}, timedelta(hours=1)),
        ("duration", "${delay}", {"delay": "PT5M"}, timedelta(minutes=5)),
        (
            "date",
            "${due}",
            {"due": datetime(2030, 1, 2, 9, 0, tzinfo=UTC)},
            timedelta(days=1),
        ),
    ],
    ids=["duration", "date", "duration-expression", "date-expression"],
)
def test_catch_timer_fires_when_due_and_not_before(
    engine: Engine,
    clock: ManualClock,
    kind: TimerKind,
    text: str,
    variables: dict[str, Any],
    due_in: timedelta,
) -> None:
    engine.deploy(timer_catch(kind, text))
    instance = engine.start_latest("timer-catch", variables)
    [job] = engine.jobs(instance.id)
    assert job.kind == "timer"
    assert job.due_at == clock() + due_in
    executor = JobExecutor(engine)

    assert executor.run_once() == 0
    clock.advance(seconds=due_in.total_seconds() - 1)
    assert executor.run_once() == 0
    assert instance.state is InstanceState.ACTIVE
    assert positions(engine, instance.id) == ["wait"]

    clock.advance(seconds=1)
    assert executor.run_once() == 1
    assert instance.info().state == InstanceState.COMPLETED
    assert engine.jobs(instance.id) == []
    assert executor.run_once() == 0


def test_due_timers_of_suspended_instances_wait_for_their_resume(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(timer_catch("duration", "PT1M"))
    running = [engine.start_latest("timer-catch") for _ in range(3)]
    paused = [engine.start_latest("timer-catch") for _ in range(2)]
    for instance in paused:
        instance.suspend()
    clock.advance(minutes=2)
    executor = JobExecutor(engine)
    assert executor.run_once() == 3
    assert {i.state for i in running} == {InstanceState.COMPLETED}
    assert {i.state for i in paused} == {InstanceState.SUSPENDED}
    with engine.connection() as conn:
        assert next_acquirable(conn, clock(), horizon=3600) is None
    for instance in paused:
        instance.resume()
    with engine.connection() as conn:
        assert next_acquirable(conn, clock(), horizon=3600) is not None
    assert executor.run_once() == 2
    assert {i.state for i in paused} == {InstanceState.COMPLETED}


@pytest.mark.parametrize("timer", ["duration", "date"])
def test_real_timer_fires_on_the_system_clock(real_engine: Engine, timer: str) -> None:
    """A started executor sleeps until the timer is due (not until its poll interval)."""
    if timer == "duration":
        real_engine.deploy(timer_catch("duration", "PT0.5S"))
        variables: dict[str, Any] = {}
        delay = 0.5
    else:
        real_engine.deploy(timer_catch("date", "${due}"))
        variables = {"due": datetime.now(UTC) + timedelta(seconds=1)}
        delay = 1.0
    executor = JobExecutor(real_engine, poll_interval=30.0)
    executor.start()
    try:
        started = time.monotonic()
        instance = real_engine.start_latest("timer-catch", variables)
        assert instance.wait_completion(timeout=delay + 3) is InstanceState.COMPLETED
        elapsed = time.monotonic() - started
    finally:
        executor.stop()
    assert elapsed >= delay - 0.05
    [track] = instance.history()
    [wait] = [step for step in track.steps if step.node_id == "wait"]
    assert wait.ended_at is not None
    waited = (wait.ended_at - wait.started_at).total_seconds()
    assert waited < delay + 1.0
    if timer == "duration":
        assert waited >= delay
    else:
        # The date was taken before the start, so the wait began a little after it: the timer
        # fires at the date, not a full delay after the wait began.
        assert wait.ended_at >= variables["due"]


def test_interrupting_boundary_timer_retires_the_user_task(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    engine.deploy(review_with_boundary(cancel_activity=True, kind="duration", text="PT1H"))
    instance = engine.start_latest("review")
    [task] = instance.user_tasks()
    executor = JobExecutor(engine)
    clock.advance(minutes=59)
    assert executor.run_once() == 0
    clock.advance(minutes=1)
    assert executor.run_once() == 1

    assert positions(engine, instance.id) == ["late"]
    [retired] = [t for t in engine.user_tasks(instance.id, state=None) if t.id == task.id]
    assert retired.state == "Retired"
    before = snapshot(database_url)
    with pytest.raises(Conflict, match="retired"):
        engine.complete_task(task.id, {"approved": True})
    assert snapshot(database_url) == before
    assert positions(engine, instance.id) == ["late"]


def test_non_interrupting_cycle_boundary_fires_exactly_three_times(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(review_with_boundary(cancel_activity=False, kind="cycle", text="R3/PT1M"))
    instance = engine.start_latest("review")
    [review] = instance.user_tasks()
    executor = JobExecutor(engine)
    assert executor.run_once() == 0
    for firing in range(1, 4):
        clock.advance(minutes=1)
        assert executor.run_once() == 1
        assert executor.run_once() == 0
        assert positions(engine, instance.id) == ["late"] * firing + ["review"]
    clock.advance(minutes=10)
    assert executor.run_once() == 0
    assert engine.jobs(instance.id) == []
    open_tasks = instance.user_tasks()
    assert sorted(t.node_id for t in open_tasks) == ["late", "late", "late", "review"]
    assert review.id in {t.id for t in open_tasks}
    engine.complete_task(review.id)
    assert positions(engine, instance.id) == ["late", "late", "late"]


def test_timer_start_event_cycle_starts_instances_when_due(
    engine: Engine, clock: ManualClock
) -> None:
    model = (
        ProcessBuilder("ticker")
        .start_event("tick", timer=TimerDefinition(kind="cycle", text="R2/PT1M"))
        .user_task("look")
        .chain("tick", "look")
        .build()
    )
    engine.deploy(model)
    executor = JobExecutor(engine)
    assert executor.run_once() == 0
    assert engine.instance_counts() == {}
    clock.advance(seconds=59)
    assert executor.run_once() == 0
    clock.advance(seconds=1)
    assert executor.run_once() == 1
    assert engine.instance_counts() == {"Active": 1}
    clock.advance(minutes=1)
    assert executor.run_once() == 1
    assert engine.instance_counts() == {"Active": 2}
    clock.advance(minutes=5)
    assert executor.run_once() == 0
    assert engine.instance_counts() == {"Active": 2}
    assert engine.jobs() == []


def async_work() -> ProcessModel:
    return (
        ProcessBuilder("async-work")
        .start_event("start")
        .service_task("work", handler="work", async_before=True)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


def test_async_continuation_runs_through_the_executor(engine: Engine) -> None:
    calls: list[Any] = []

    def work(ctx: TaskContext) -> dict[str, Any]:
        calls.append(ctx.instance_id)
        return {"done": True}

    engine.register_handler("work", work)
    engine.deploy(async_work())
    instance = engine.start_latest("async-work")
    assert instance.state is InstanceState.ACTIVE
    assert calls == []
    [job] = engine.jobs(instance.id)
    assert job.kind == "async"
    assert JobExecutor(engine).run_once() == 1
    assert calls == [instance.id]
    assert instance.info().state == InstanceState.COMPLETED
    assert instance.variables() == {"done": True}


def test_started_executor_is_woken_by_new_work(engine: Engine) -> None:
    """With a poll interval far away, only the database's notification can wake it in time."""
    done = threading.Event()
    engine.register_handler("work", lambda ctx: done.set())
    engine.deploy(async_work())
    executor = JobExecutor(engine, poll_interval=60.0)
    executor.start()
    try:
        time.sleep(0.3)  # the executor has found nothing and sleeps
        started = time.monotonic()
        instance = engine.start_latest("async-work")
        assert done.wait(5)
        assert instance.wait_completion(5) is InstanceState.COMPLETED
        latency = time.monotonic() - started
    finally:
        executor.stop()
    assert latency < 1.0


def count_commands(engine: Engine, name: str) -> list[int]:
    """Count the commands named `name` the engine runs from now on."""
    counter = [0]
    run = engine.run

    def counting(command: Command[T], idempotency_key: str | Idempotency | None = None) -> T:
        if command.name == name:
            counter[0] += 1
        return run(command, idempotency_key)

    engine.run = counting  # type: ignore[method-assign]  # a counting wrapper, on this one engine
    return counter


def test_idle_executor_does_not_spin(engine: Engine) -> None:
    """An idle executor acquires once per poll interval at most while nothing is due, however
    often it is woken."""
    engine.deploy(timer_catch("duration", "PT1H"))
    engine.start_latest("timer-catch")
    acquisitions = count_commands(engine, AcquireJobs.name)
    executor = JobExecutor(engine, poll_interval=0.4)
    executor.start()
    try:
        time.sleep(1.0)
    finally:
        executor.stop()
    # One at start, then one per poll interval as a safety net.
    assert 1 <= acquisitions[0] <= 4


def test_stop_finishes_the_job_in_hand_and_gives_back_the_rest(
    engine: Engine, database_url: str
) -> None:
    entered = threading.Event()

    def slow(ctx: TaskContext) -> None:
        entered.set()
        time.sleep(0.4)

    engine.register_handler("work", slow)
    engine.deploy(async_work())
    instances = [engine.start_latest("async-work") for _ in range(3)]
    executor = JobExecutor(engine, owner="stopper", batch_size=10)
    executor.start()
    assert entered.wait(5)
    executor.stop(timeout=5)
    assert not executor.running
    states = sorted(i.state.value for i in instances)
    assert states == ["Active", "Active", "Completed"]
    jobs = engine.jobs()
    assert len(jobs) == 2
    assert all(job.lock_owner is None and job.lock_expires_at is None for job in jobs)
    assert all(job.retries == 3 for job in jobs)
