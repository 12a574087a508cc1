"""Suspension as Camunda has it: a suspended instance keeps its tokens where they are (its user
task is not completed, its job not acquired, its external task not fetched, no message reaches
it) and everything resumes once it is activated; a suspended definition starts nothing (by id,
by key, by its timer start event); suspending an instance racing the job executor on it leaves
the job run whole before the suspension or not run at all."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.instances import SuspendInstance
from engine.commands.suspension import (
    ActivateDefinition,
    SetInstancesSuspension,
    SuspendDefinition,
)
from engine.core.handlers import TaskContext
from engine.errors import BadRequest, Conflict, InterlockError, NotFound, Suspended
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState, JobOutcome
from tests.engine.clock import ManualClock


def waits_everywhere(key: str = "waits") -> ProcessModel:
    """start -> split -> a user task, an external task, a message catch, an async handler ->
    join -> end: one instance waiting for each kind of work."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .parallel_gateway("split")
        .user_task("review", "Review")
        .service_task("remote", topic="remote-work")
        .intermediate_catch_event("signal_in", message="go")
        .service_task("local", handler="local", async_before=True)
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "review", "join")
        .chain("split", "remote", "join")
        .chain("split", "signal_in", "join")
        .chain("split", "local", "join")
        .chain("join", "end")
        .build()
    )


def plain(key: str = "plain") -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("s")
        .user_task("t", "T")
        .end_event("e")
        .chain("s", "t", "e")
        .build()
    )


def ticking(key: str = "ticking") -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("tick", timer=TimerDefinition(kind="cycle", text="R3/PT1M"))
        .user_task("t", "T")
        .end_event("e")
        .chain("tick", "t", "e")
        .build()
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=6) as engine:
        yield engine


def _handled(engine: Engine, runs: list[UUID]) -> None:
    def local(ctx: TaskContext) -> None:
        runs.append(UUID(str(ctx.instance_id)))
        ctx.set("handled", True)

    engine.register_handler("local", local)


def test_a_suspended_instance_refuses_or_keeps_every_wait_and_resumes(engine: Engine) -> None:
    runs: list[UUID] = []
    _handled(engine, runs)
    engine.deploy(waits_everywhere())
    instance = engine.start_latest("waits", business_key="b-1")
    other = engine.start_latest("waits", business_key="b-2")
    engine.run(SetInstancesSuspension((instance.id,), suspended=True))
    assert instance.state is InstanceState.SUSPENDED
    (task,) = instance.user_tasks()
    # The user task: neither completed nor claimed.
    with pytest.raises(Suspended, match="suspended"):
        engine.complete_task(task.id)
    with pytest.raises(Suspended, match="suspended"):
        engine.claim_task(task.id, "anna")
    # The job: not acquired; the other instance's is.
    executor = JobExecutor(engine)
    assert executor.run_once() == 1
    assert runs == [other.id]
    # The external task: not fetched; the other instance's is.
    fetched = engine.fetch_and_lock("w", {"remote-work": 60_000}, max_tasks=10)
    assert [f["instance_id"] for f in fetched] == [str(other.id)]
    # A task locked before the suspension cannot be completed while it lasts.
    engine.run(SetInstancesSuspension((instance.id,), suspended=False))
    (locked,) = engine.fetch_and_lock("w2", {"remote-work": 60_000})
    engine.run(SetInstancesSuspension((instance.id,), suspended=True))
    with pytest.raises(Suspended):
        engine.complete_external_task(locked["id"], "w2")
    # The message finds no instance to correlate with.
    with pytest.raises(InterlockError):
        engine.correlate_message("go", business_key="b-1")
    assert [t.node_id for t in instance.tokens()] != []
    positions = sorted(t.node_id for t in instance.tokens())
    assert positions == ["local", "remote", "review", "signal_in"]
    # Activated: everything resumes, the due job without waiting for a poll interval.
    engine.run(SetInstancesSuspension((instance.id,), suspended=False))
    assert executor.run_once() == 1
    assert runs == [other.id, instance.id]
    engine.complete_external_task(locked["id"], "w2")
    engine.correlate_message("go", business_key="b-1")
    engine.complete_task(task.id)
    assert engine.instance(instance.id).state is InstanceState.COMPLETED


def test_a_suspended_definition_starts_nothing_until_activated(engine: Engine) -> None:
    engine.deploy(plain())
    first = engine.latest_definition("plain")
    engine.deploy(plain2())
    latest = engine.latest_definition("plain")
    assert latest.version == 2
    running = engine.start_definition(first.id)
    result = engine.run(SuspendDefinition(key="plain"))
    assert sorted(result.definition_ids) == sorted([first.id, latest.id])
    assert engine.definition(first.id).suspended and engine.definition(latest.id).suspended
    # Its instances keep their own state unless asked.
    assert running.state is InstanceState.ACTIVE
    with pytest.raises(Suspended, match=r"is suspended"):
        engine.start_latest("plain")
    with pytest.raises(Suspended, match=r"is suspended"):
        engine.start_definition(first.id)
    # Suspending again changes nothing and refuses nothing.
    assert engine.run(SuspendDefinition(definition_id=first.id)).definition_ids == []
    engine.run(ActivateDefinition(definition_id=latest.id))
    assert engine.start_latest("plain").state is InstanceState.ACTIVE
    with pytest.raises(Suspended):
        engine.start_definition(first.id)


def plain2() -> ProcessModel:
    return (
        ProcessBuilder("plain")
        .start_event("s")
        .user_task("t2", "T2")
        .end_event("e")
        .chain("s", "t2", "e")
        .build()
    )


def test_including_instances_suspends_and_activates_them_in_the_same_transaction(
    engine: Engine,
) -> None:
    engine.deploy(plain())
    instances = [engine.start_latest("plain") for _ in range(3)]
    instances[0].suspend()
    result = engine.run(SuspendDefinition(key="plain", include_instances=True))
    assert sorted(result.instance_ids) == sorted(str(i.id) for i in instances[1:])
    assert {i.state for i in instances} == {InstanceState.SUSPENDED}
    engine.run(ActivateDefinition(key="plain", include_instances=True))
    assert {i.state for i in instances} == {InstanceState.ACTIVE}
    assert not engine.latest_definition("plain").suspended


def test_naming_nothing_or_an_unknown_definition_is_refused(engine: Engine) -> None:
    with pytest.raises(BadRequest):
        engine.run(SuspendDefinition())
    with pytest.raises(BadRequest):
        engine.run(SuspendDefinition(definition_id="x", key="y"))
    with pytest.raises(NotFound):
        engine.run(SuspendDefinition(key="nobody-deployed-this"))
    with pytest.raises(NotFound):
        engine.run(SetInstancesSuspension((UUID(int=7),), suspended=True))


def test_a_suspended_definitions_timer_start_event_waits(timed: Engine, clock: ManualClock) -> None:
    timed.deploy(ticking())
    executor = JobExecutor(timed)
    timed.run(SuspendDefinition(key="ticking"))
    clock.advance(minutes=2)
    assert executor.run_once() == 0
    (job,) = timed.jobs()
    assert job.due_at < clock() and timed.user_tasks() == []
    # Run by hand, it waits too, its retries untouched.
    assert timed.execute_job(job.id) == JobOutcome.INSTANCE_NOT_ACTIVE
    assert timed.job(job.id).retries == job.retries and timed.user_tasks() == []
    timed.run(ActivateDefinition(key="ticking"))
    assert executor.run_once() == 1
    assert len(timed.user_tasks()) == 1


def race_process() -> ProcessModel:
    """start -> (async) step, which sets a variable -> after (user task) -> end."""
    return (
        ProcessBuilder("race")
        .start_event("start")
        .service_task("step", handler="step", async_before=True)
        .user_task("after", "After")
        .end_event("end")
        .chain("start", "step", "after", "end")
        .build()
    )


def test_suspension_racing_the_job_executor_never_leaves_half_a_job(engine: Engine) -> None:
    def step(ctx: TaskContext) -> None:
        ctx.set("stepped", True)

    engine.register_handler("step", step)
    engine.deploy(race_process())
    executor = JobExecutor(engine)
    for _ in range(30):
        instance = engine.start_latest("race")
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def suspend(
            instance_id: UUID = instance.id,
            barrier: threading.Barrier = barrier,
            errors: list[BaseException] = errors,
        ) -> None:
            barrier.wait()
            try:
                engine.run(SuspendInstance(instance_id))
            except Conflict as exc:  # only if the instance ended, which it cannot here
                errors.append(exc)

        def run_jobs(barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            executor.run_once()

        threads = [threading.Thread(target=suspend), threading.Thread(target=run_jobs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert instance.state is InstanceState.SUSPENDED
        jobs = engine.jobs(instance_id=instance.id)
        ran = "stepped" in instance.variables()
        positions = [t.node_id for t in instance.tokens()]
        if ran:
            # The job committed whole before the suspension: its effects, and no job left.
            assert jobs == [] and positions == ["after"]
            assert [t.node_id for t in instance.user_tasks()] == ["after"]
        else:
            # Not run: its job waits with the token, and the executor leaves it while suspended.
            assert len(jobs) == 1 and positions == ["step"] and instance.user_tasks() == []
            assert executor.run_once() == 0
            assert "stepped" not in instance.variables()
        instance.resume()
        executor.run_once()
        assert instance.variables()["stepped"] is True
        assert [t.node_id for t in instance.tokens()] == ["after"]


def test_signals_skip_a_suspended_instance_and_a_suspended_definitions_start_event(
    engine: Engine,
) -> None:
    engine.deploy(
        ProcessBuilder("listening")
        .start_event("s")
        .intermediate_catch_event("hear", signal="alarm")
        .end_event("e")
        .chain("s", "hear", "e")
        .build()
    )
    engine.deploy(
        ProcessBuilder("alarmed")
        .start_event("on_alarm", signal="alarm")
        .user_task("t", "T")
        .end_event("e")
        .chain("on_alarm", "t", "e")
        .build()
    )
    held, free = engine.start_latest("listening"), engine.start_latest("listening")
    held.suspend()
    engine.run(SuspendDefinition(key="alarmed"))
    delivered = engine.signal("alarm").deliveries
    assert delivered == [{"kind": "instance", "instance_id": str(free.id)}]
    assert [t.node_id for t in held.tokens()] == ["hear"]
    held.resume()
    engine.run(ActivateDefinition(key="alarmed"))
    kinds = sorted(d["kind"] for d in engine.signal("alarm").deliveries)
    assert kinds == ["instance", "start"]
    assert engine.instance(held.id).state is InstanceState.COMPLETED


def test_a_call_activity_cannot_start_a_suspended_definition(engine: Engine) -> None:
    engine.deploy(plain())
    engine.deploy(
        ProcessBuilder("caller")
        .start_event("s")
        .call_activity("call", called_element="plain")
        .end_event("e")
        .chain("s", "call", "e")
        .build()
    )
    engine.run(SuspendDefinition(key="plain"))
    with pytest.raises(Suspended, match="is suspended"):
        engine.start_latest("caller")
    engine.run(ActivateDefinition(key="plain"))
    caller = engine.start_latest("caller")
    assert len(caller.children()) == 1
