"""Call activities under real races: commands on a called instance and on its caller run at the
same moment from threads with their own connections. Both lock the family's root first, so they
queue instead of deadlocking, and every round ends in exactly one of the outcomes a serial order
gives: the caller goes on once, or the whole family ends; never both, never a caller waiting for
an instance that ended, never a called instance left running alone."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg import errors as pg_errors

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.job_retries import JobResult
from engine.commands.jobs import AcquireJobs, ExecuteJob, ExecuteJobs, JobOutcomes
from engine.commands.messages import DeliveryResult
from engine.commands.tasks import TaskResult
from engine.errors import Conflict, NotFound
from engine.model import CallMapping, ProcessModel, TimerDefinition
from engine.states import InstanceState, JobOutcome
from tests.engine.clock import ManualClock
from tests.engine.test_concurrency import race

ROUNDS = 100


def head_start(round_: int, racer: int) -> None:
    """Half the rounds race from the same instant; in the others one racer waits 20 ms, each racer
    in turn, so both orders happen on any machine while the simultaneous rounds stay real races."""
    if round_ % 4 == 1 + 2 * racer:
        time.sleep(0.02)


def worker_process() -> ProcessModel:
    return (
        ProcessBuilder("race_child")
        .start_event("Start")
        .user_task("Work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build()
    )


def calling(key: str, *, then_task: bool, boundary: bool = False) -> ProcessModel:
    """Start -> Call(race_child) -> After (a user task, or nothing) -> End; with `boundary`, an
    interrupting message boundary event `Stop` on the call activity leads to `Stopped`."""
    builder = (
        ProcessBuilder(key)
        .start_event("Start")
        .call_activity("Call", called_element="race_child")
        .end_event("End")
    )
    if then_task:
        builder.user_task("After").chain("Start", "Call", "After", "End")
    else:
        builder.chain("Start", "Call", "End")
    if boundary:
        builder.boundary_event("Stop", "Call", message="stop").user_task("Stopped")
        builder.end_event("StoppedEnd").chain("Stop", "Stopped", "StoppedEnd")
    return builder.build()


def family(conn: psycopg.Connection[Any], root: UUID) -> dict[UUID, tuple[str, UUID | None]]:
    """Every instance whose root is `root`: (state, super instance)."""
    rows = conn.execute(
        "SELECT id, state, super_instance_id FROM process_instance WHERE root_instance_id = %s",
        (root,),
    ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def open_work(conn: psycopg.Connection[Any], root: UUID) -> dict[str, int]:
    """Live tokens and open work of every instance of the family, by kind (zeros left out)."""
    found = {}
    for kind, where in (
        ("tokens", "token WHERE state NOT IN ('Completed', 'Terminated')"),
        ("user tasks", "user_task WHERE state = 'Open'"),
        ("external tasks", "external_task WHERE state = 'Open'"),
        ("jobs", "job WHERE true"),
        ("subscriptions", "event_subscription WHERE true"),
    ):
        [(count,)] = conn.execute(
            f"SELECT count(*) FROM {where} AND instance_id IN "  # noqa: S608 (constants)
            "(SELECT id FROM process_instance WHERE root_instance_id = %s)",
            (root,),
        ).fetchall()
        if count:
            found[kind] = count
    return found


def visits(conn: psycopg.Connection[Any], instance_id: UUID, node_id: str) -> int:
    [(count,)] = conn.execute(
        "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = %s",
        (instance_id, node_id),
    ).fetchall()
    return int(count)


def assert_clean_refusal(outcome: object) -> None:
    """A racer that lost may only be refused over the state it found, never fail otherwise (a
    deadlock in particular must have been retried by the executor)."""
    assert isinstance(outcome, Conflict | NotFound), repr(outcome)
    assert not isinstance(outcome, pg_errors.DeadlockDetected)


def deadlocks(conn: psycopg.Connection[Any]) -> int:
    [(count,)] = conn.execute(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
    ).fetchall()
    return int(count)


def test_a_child_completing_while_its_root_is_cancelled(engine: Engine) -> None:
    engine.deploy(
        worker_process(),
        calling("race_then_task", then_task=True),
        calling("race_then_end", then_task=False),
    )
    outcomes: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        then_task = round_ % 2 == 0
        root = engine.start_latest("race_then_task" if then_task else "race_then_end")
        [child] = root.children()
        [task] = child.user_tasks()

        def act(
            i: int, task_id: UUID = task.id, root_id: UUID = root.id, round_: int = round_
        ) -> object:
            head_start(round_, i)
            if i == 0:
                return engine.complete_task(task_id)
            return engine.instance(root_id).cancel()

        completed, cancelled = race(2, act)
        with engine.connection() as conn:
            states = family(conn, root.id)
            left = open_work(conn, root.id)
            after = visits(conn, root.id, "After")
            ends = visits(conn, root.id, "End")
        assert set(states) == {root.id, child.id}, states
        assert states[child.id] == (states[child.id][0], root.id)
        child_state = InstanceState(states[child.id][0])
        root_state = InstanceState(states[root.id][0])
        # Whatever the order, nothing of the family is left open.
        assert left == {}, (round_, left, completed, cancelled)
        if child_state is InstanceState.COMPLETED:
            # The child's task won: the caller went on exactly once.
            assert isinstance(completed, TaskResult), completed
            if then_task:
                # ... to After, then the cancel ended it there.
                assert after == 1 and ends == 0, (after, ends)
                assert cancelled is InstanceState.TERMINATED
                assert root_state is InstanceState.TERMINATED
            else:
                assert ends == 1, ends
                assert root_state is InstanceState.COMPLETED
                assert_clean_refusal(cancelled)
            outcomes["continued"] += 1
        else:
            # The cancel won: the whole family ended, and the task was refused.
            assert child_state is InstanceState.TERMINATED, states
            assert root_state is InstanceState.TERMINATED, states
            assert cancelled is InstanceState.TERMINATED
            assert_clean_refusal(completed)
            assert after == 0 and ends == 0
            outcomes["ended"] += 1
    assert sum(outcomes.values()) == ROUNDS
    # Both orders happened (the race is real), over all rounds.
    assert outcomes["continued"] > 0 and outcomes["ended"] > 0, outcomes


def fan_out() -> ProcessModel:
    return (
        ProcessBuilder("race_fan")
        .start_event("Start")
        .call_activity(
            "Call", called_element="race_child", inputs=[CallMapping(source="item", target="item")]
        )
        .multi_instance("Call", collection="items", element_variable="item")
        .service_task("After", handler="after")
        .end_event("End")
        .chain("Start", "Call", "After", "End")
        .build()
    )


def test_three_called_instances_of_a_parallel_multi_instance_complete_at_once(
    engine: Engine,
) -> None:
    seen: Counter[UUID] = Counter()

    @engine.handler("after")
    def after(ctx: Any) -> dict[str, Any]:
        seen[ctx.instance_id] += 1
        variables = ctx.variables
        return {"counted": [variables.get(n) for n in ("nrOfInstances", "nrOfCompletedInstances")]}

    engine.deploy(worker_process(), fan_out())
    for round_ in range(ROUNDS):
        root = engine.start_latest("race_fan", {"items": ["a", "b", "c"]})
        children = root.children()
        assert len(children) == 3
        tasks = [task for child in children for task in child.user_tasks()]
        assert len(tasks) == 3
        with engine.connection() as conn:
            counters = dict(
                conn.execute(
                    "SELECT v.name, v.value FROM variable v JOIN token t "
                    "ON v.scope_key = t.id::text WHERE v.instance_id = %s "
                    "AND t.node_id = 'Call' AND t.scope_id IS NULL",
                    (root.id,),
                ).fetchall()
            )
        assert counters == {
            "nrOfInstances": 3,
            "nrOfActiveInstances": 3,
            "nrOfCompletedInstances": 0,
        }, counters

        def complete(i: int, tasks: list[Any] = tasks) -> object:
            return engine.complete_task(tasks[i].id, {f"done_{i}": True})

        results = race(3, complete)
        assert all(isinstance(r, TaskResult) for r in results), (round_, results)
        assert root.state is InstanceState.COMPLETED, round_
        assert {c.state for c in children} == {InstanceState.COMPLETED}
        with engine.connection() as conn:
            # The body left once; each iteration's visit of the call activity ended once.
            assert visits(conn, root.id, "After") == 1
            assert visits(conn, root.id, "End") == 1
            [(iterations,)] = conn.execute(
                "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = 'Call' "
                "AND called_instance_id IS NOT NULL AND state = 'Completed'",
                (root.id,),
            ).fetchall()
            assert iterations == 3
            assert open_work(conn, root.id) == {}
        assert seen[root.id] == 1
    assert len(seen) == ROUNDS


def test_a_child_completing_while_a_message_interrupts_its_call_activity(
    engine: Engine,
) -> None:
    engine.deploy(worker_process(), calling("race_stop", then_task=True, boundary=True))
    outcomes: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        key = f"stop-{round_}"
        root = engine.start_latest("race_stop", business_key=key)
        [child] = root.children()
        [task] = child.user_tasks()

        def act(i: int, task_id: UUID = task.id, key: str = key, round_: int = round_) -> object:
            head_start(round_, i)
            if i == 0:
                return engine.complete_task(task_id)
            return engine.correlate_message("stop", business_key=key)

        completed, correlated = race(2, act)
        with engine.connection() as conn:
            states = family(conn, root.id)
            after = visits(conn, root.id, "After")
            stopped = visits(conn, root.id, "Stopped")
            left = open_work(conn, root.id)
        child_state = InstanceState(states[child.id][0])
        assert InstanceState(states[root.id][0]) is InstanceState.ACTIVE
        # One open task left in the parent, whichever won, and nothing else anywhere.
        assert left == {"tokens": 1, "user tasks": 1}, (round_, left)
        if child_state is InstanceState.COMPLETED:
            assert isinstance(completed, TaskResult), completed
            assert (after, stopped) == (1, 0)
            # The boundary's subscription went with the call activity: the message found none.
            assert isinstance(correlated, NotFound), correlated
            outcomes["completed"] += 1
        else:
            assert child_state is InstanceState.TERMINATED, states
            assert isinstance(correlated, DeliveryResult), correlated
            assert correlated.deliveries == [{"kind": "instance", "instance_id": str(root.id)}]
            assert (after, stopped) == (0, 1)
            assert_clean_refusal(completed)
            outcomes["interrupted"] += 1
    assert sum(outcomes.values()) == ROUNDS
    assert outcomes["completed"] > 0 and outcomes["interrupted"] > 0, outcomes


@pytest.fixture(autouse=True)
def _no_deadlocks(engine: Engine) -> Any:
    """No race of this module may deadlock: every command locks its family's root first."""
    with engine.connection() as conn:
        before = deadlocks(conn)
    yield
    time.sleep(1.5)  # a backend reports its statistics at most once a second
    with engine.connection() as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        assert deadlocks(conn) == before


def crossed() -> list[ProcessModel]:
    """A root whose call activity comes after a user task, beside a timer of its own; the
    called instance waits for the signal `go`."""
    child = (
        ProcessBuilder("crossed_child")
        .start_event("Start")
        .intermediate_catch_event("Wait", signal="go")
        .end_event("End")
        .chain("Start", "Wait", "End")
        .build()
    )
    root = (
        ProcessBuilder("crossed_root")
        .start_event("Start")
        .parallel_gateway("Fork")
        .user_task("Before")
        .call_activity("Call", called_element="crossed_child")
        .end_event("CallEnd")
        .intermediate_catch_event("Nap", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("NapEnd")
        .chain("Start", "Fork", "Before", "Call", "CallEnd")
        .chain("Fork", "Nap", "NapEnd")
        .build()
    )
    return [child, root]


def test_a_signal_and_a_batch_of_timers_lock_the_families_roots_in_one_order(
    database_url: str, engine: Engine
) -> None:
    """Two families whose called instances were started in the other order than their roots:
    a broadcast reaching both called instances and a batch of the roots' timers lock the roots
    in the same (id) order, so they queue instead of deadlocking."""
    clock = ManualClock()
    with Engine(database_url, migrate=False, clock=clock, pool_size=4) as timed:
        timed.deploy(*crossed())
        for round_ in range(ROUNDS):
            first, second = (timed.start_latest("crossed_root") for _ in range(2))
            for root in (second, first):  # the second root's child is the older one
                [before] = root.user_tasks()
                timed.complete_task(before.id)
            clock.advance(hours=1)
            acquired = timed.run(AcquireJobs("crossed", 10, 60)).timers
            jobs = tuple((UUID(job), UUID(instance)) for job, instance in acquired)
            assert sorted(i for _, i in jobs) == sorted([first.id, second.id])

            def act(
                i: int, jobs: tuple[tuple[UUID, UUID], ...] = jobs, round_: int = round_
            ) -> object:
                head_start(round_, i)
                if i == 0:
                    return timed.signal("go")
                return timed.run(ExecuteJobs(jobs, "crossed"))

            signalled, fired = race(2, act)
            assert isinstance(signalled, DeliveryResult), signalled
            assert len(signalled.deliveries) == 2
            assert isinstance(fired, JobOutcomes), fired
            assert set(fired.outcomes.values()) == {JobOutcome.EXECUTED}
            for root in (first, second):
                assert root.state is InstanceState.COMPLETED, round_
                assert [c.state for c in root.children()] == [InstanceState.COMPLETED]


def test_a_workers_report_three_levels_down_while_the_root_is_cancelled(engine: Engine) -> None:
    """The report runs optimistically, finds that it reaches the caller and runs again under the
    lock of the family's root, which the cancel holds or waits for."""
    engine.deploy(
        ProcessBuilder("deep_leaf")
        .start_event("Start")
        .service_task("Remote", topic="deep")
        .end_event("End")
        .chain("Start", "Remote", "End")
        .build(),
        ProcessBuilder("deep_middle")
        .start_event("Start")
        .call_activity("Call", called_element="deep_leaf")
        .end_event("End")
        .chain("Start", "Call", "End")
        .build(),
        ProcessBuilder("deep_root")
        .start_event("Start")
        .call_activity("Call", called_element="deep_middle")
        .user_task("After")
        .end_event("End")
        .chain("Start", "Call", "After", "End")
        .build(),
    )
    outcomes: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        root = engine.start_latest("deep_root")
        [task] = engine.fetch_and_lock("deep-worker", {"deep": 60_000})

        def act(
            i: int, task_id: str = task["id"], root_id: UUID = root.id, round_: int = round_
        ) -> object:
            head_start(round_, i)
            if i == 0:
                return engine.complete_external_task(task_id, "deep-worker", {"r": i})
            return engine.instance(root_id).cancel()

        completed, cancelled = race(2, act)
        assert cancelled is InstanceState.TERMINATED, cancelled
        with engine.connection() as conn:
            found = {
                key: state
                for key, state in conn.execute(
                    "SELECT definition_key, state FROM process_instance "
                    "WHERE root_instance_id = %s",
                    (root.id,),
                ).fetchall()
            }
            assert open_work(conn, root.id) == {}, round_
            after = visits(conn, root.id, "After")
        if found["deep_leaf"] == "Completed":
            assert not isinstance(completed, Exception), completed
            assert found == {
                "deep_root": "Terminated",
                "deep_middle": "Completed",
                "deep_leaf": "Completed",
            }
            assert after == 1
            outcomes["continued"] += 1
        else:
            assert found == dict.fromkeys(("deep_root", "deep_middle", "deep_leaf"), "Terminated")
            assert_clean_refusal(completed)
            assert after == 0
            outcomes["ended"] += 1
    assert outcomes["continued"] > 0 and outcomes["ended"] > 0, outcomes


def test_a_child_completing_while_the_call_activitys_timer_fires(
    database_url: str, engine: Engine
) -> None:
    """The job of an interrupting timer boundary event on the call activity, run by its
    executor, races the called instance's last task: one wins, whole."""
    clock = ManualClock()
    timed_out = (
        ProcessBuilder("race_timed")
        .start_event("Start")
        .call_activity("Call", called_element="race_child")
        .user_task("After")
        .end_event("End")
        .boundary_event("Late", "Call", timer=TimerDefinition(kind="duration", text="PT1H"))
        .user_task("Chase")
        .end_event("Chased")
        .chain("Start", "Call", "After", "End")
        .chain("Late", "Chase", "Chased")
        .build()
    )
    outcomes: Counter[str] = Counter()
    with Engine(database_url, migrate=False, clock=clock, pool_size=4) as timed:
        timed.deploy(worker_process(), timed_out)
        for round_ in range(ROUNDS):
            root = timed.start_latest("race_timed")
            [child] = root.children()
            [task] = child.user_tasks()
            clock.advance(hours=1)
            [job_id] = timed.run(AcquireJobs("late", 10, 60)).job_ids

            def act(
                i: int, task_id: UUID = task.id, job_id: str = job_id, round_: int = round_
            ) -> object:
                head_start(round_, i)
                if i == 0:
                    return timed.complete_task(task_id)
                return timed.run(ExecuteJob(UUID(job_id), "late"))

            completed, fired = race(2, act)
            assert isinstance(fired, JobResult), fired
            with timed.connection() as conn:
                child_state = InstanceState(family(conn, root.id)[child.id][0])
                after = visits(conn, root.id, "After")
                chase = visits(conn, root.id, "Chase")
                assert open_work(conn, root.id) == {"tokens": 1, "user tasks": 1}, round_
            if child_state is InstanceState.COMPLETED:
                assert isinstance(completed, TaskResult), completed
                assert fired.outcome == JobOutcome.GONE  # the timer left with the call activity
                assert (after, chase) == (1, 0)
                outcomes["completed"] += 1
            else:
                assert child_state is InstanceState.TERMINATED
                assert fired.outcome == JobOutcome.EXECUTED
                assert_clean_refusal(completed)
                assert (after, chase) == (0, 1)
                outcomes["timed out"] += 1
    assert outcomes["completed"] > 0 and outcomes["timed out"] > 0, outcomes
