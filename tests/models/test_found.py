"""Reproducers of what the random models found, each with its minimal model."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import BpmnError
from engine.model import ProcessModel, TimerDefinition
from engine.semantics.modification import CancelToken
from tests.engine.clock import ManualClock
from tests.models.driver import Driver, register
from tests.models.strategies import EventSub, Spec, Sub, Task

HOUR = TimerDefinition(kind="duration", text="PT1H")


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine


def rows(engine: Engine, statement: str, instance: object) -> list[tuple[object, ...]]:
    with engine.connection() as conn:
        return conn.execute(statement, (instance,)).fetchall()


def test_a_boundary_timer_goes_when_its_external_task_completes_before_an_async_after(
    engine: Engine,
) -> None:
    """The sequential form of a finding of the random models: in a concurrent run, the job of
    an interrupting boundary timer on an external task with asynchronous continuations before
    and after (in a parallel branch) was seen waiting on a Completed token. One at a time, the
    completion retires the timer job and leaves only the continuation's."""
    model = (
        ProcessBuilder("boundary-after")
        .start_event("Start")
        .service_task("T", topic="fuzz", async_before=True, async_after=True)
        .boundary_event("B", "T", timer=HOUR)
        .end_event("End")
        .end_event("Late")
        .chain("Start", "T", "End")
        .flow("B", "Late")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("boundary-after")
    [before] = engine.jobs(instance.id)
    engine.run_job(before.id)
    [task] = engine.fetch_and_lock("w", {"fuzz": 60_000})
    engine.complete_external_task(task["id"], "w")
    tokens = rows(
        engine, "SELECT id, node_id, state FROM token WHERE instance_id = %s", instance.id
    )
    jobs = rows(
        engine, "SELECT node_id, kind, token_id FROM job WHERE instance_id = %s", instance.id
    )
    live = {t[0] for t in tokens if t[2] not in ("Completed", "Terminated")}
    assert [job for job in jobs if job[2] not in live] == [], (tokens, jobs)
    assert [(node, kind) for node, kind, _ in jobs] == [("T", "async-after")]


def _thrower(key: str, task: str) -> ProcessModel:
    """A task (an external one, or one whose handler throws) with an interrupting boundary timer
    and a non-interrupting boundary message, beside a user task in a parallel branch that keeps
    the instance running; no boundary catches the BPMN error E1."""
    builder = ProcessBuilder(key).start_event("Start").parallel_gateway("Split")
    if task == "external":
        builder.service_task("T", topic="fuzz")
    else:
        builder.service_task("T", handler="throwE1", async_before=True)
    return (
        builder.boundary_event("Bt", "T", timer=HOUR)
        .boundary_event("Bm", "T", message="msg_Bm", cancel_activity=False)
        .user_task("U")
        .end_event("End")
        .end_event("Late")
        .end_event("Noted")
        .end_event("Other")
        .chain("Start", "Split", "T", "End")
        .chain("Split", "U", "Other")
        .flow("Bt", "Late")
        .flow("Bm", "Noted")
        .build()
    )


def _throw_e1(ctx: TaskContext) -> dict[str, Any]:
    raise BpmnError("E1", "thrown by the handler")


@pytest.mark.parametrize("task", ["external", "handler"])
def test_an_uncaught_bpmn_error_ends_its_token_with_the_boundary_events_it_listened_to(
    engine: Engine, task: str
) -> None:
    """A finding of the random models, the cause of the one above (a concurrent run on a model
    with an external task with an interrupting boundary timer in a parallel branch): a worker
    reported a BPMN error that no boundary catches, and the job of the task's boundary timer
    was left waiting on the Completed token that threw it (due, it could only fail, its token
    gone from what a command loads, until no retries were left). An uncaught BPMN error ends
    the execution that threw it (Camunda 7's default), and with it what that activity listened
    to: its boundary timers' jobs and its boundary messages' subscriptions, whether a worker
    reported the error or a handler threw it."""
    engine.register_handler("throwE1", _throw_e1)
    engine.deploy(_thrower("uncaught", task))
    instance = engine.start_latest("uncaught")
    if task == "external":
        [fetched] = engine.fetch_and_lock("w", {"fuzz": 60_000})
        engine.external_task_bpmn_error(fetched["id"], "w", "E1")
    else:
        [job] = [job for job in engine.jobs(instance.id) if job.node_id == "T"]
        engine.run_job(job.id)
    [thrower] = rows(
        engine, "SELECT id, state FROM token WHERE instance_id = %s AND node_id = 'T'", instance.id
    )
    assert thrower[1] == "Completed"
    left = rows(
        engine,
        "WITH t AS (SELECT %s::uuid AS id) "
        "SELECT 'job', node_id FROM job, t WHERE token_id = t.id UNION ALL "
        "SELECT 'subscription', node_id FROM event_subscription, t WHERE token_id = t.id",
        thrower[0],
    )
    assert left == []
    assert engine.instance(instance.id).info().ended_at is None  # the other branch waits
    [user_task] = rows(
        engine, "SELECT id FROM user_task WHERE instance_id = %s AND state = 'Open'", instance.id
    )
    engine.complete_task(str(user_task[0]))
    assert engine.instance(instance.id).info().state == "Completed"
    assert rows(engine, "SELECT id FROM job WHERE instance_id = %s", instance.id) == []


def test_the_drain_ends_a_subprocess_whose_non_interrupting_event_subprocess_ran(
    database_url: str,
) -> None:
    """A finding of the slow run (seed 914): an instance with a non-interrupting event
    subprocess never ended in the drain. The drain served one message a pass, and each message
    to the event subprocess's start started one more run of it (its start listens while its
    scope lasts, as in BPMN), beside the one task a pass completes: the scope never ran out of
    runs. The drain now leaves such starts alone, and the instance ends once its tasks are
    done."""
    spec = Spec("found-non-interrupting", Sub(Task("user"), event_sub=EventSub("message", False)))
    clock = ManualClock()
    with Engine(database_url, migrate=False, pool_size=4, clock=clock) as engine:
        register(engine)
        engine.deploy(spec.model)
        driver = Driver(engine, clock, spec, seed=914)
        driver.start(random.Random(914))
        [instance] = driver.instances
        [start] = [n.id for n in spec.model.nodes if n.id.startswith("Ess")]
        engine.correlate_message(f"msg_{start}", instance_id=instance)
        driver.drain(random.Random(914))
        info = engine.instance(instance).info()
        assert (info.state, info.ended_at is not None) == ("Completed", True)
        served = [(d.action, d.node) for d in driver.decisions if d.action != "set_variables"]
        assert sorted(served) == [("complete_task", "T4"), ("complete_task", "T7"), ("start", None)]


def test_an_interrupting_event_subprocess_of_the_process_ends_its_waiting_joins(
    database_url: str,
) -> None:
    """A finding of the random models: an interrupting event subprocess at the process level
    ended every token, the one waiting at a parallel join too, but left the join's row holding
    that token's arrival, after the instance had completed."""
    clock = ManualClock()
    with Engine(database_url, migrate=False, pool_size=2, clock=clock) as engine:
        model = (
            ProcessBuilder("interrupted-join")
            .start_event("Start")
            .parallel_gateway("Fork")
            .user_task("Slow")
            .task("Quick")
            .parallel_gateway("Join")
            .end_event("End")
            .chain("Start", "Fork", "Slow", "Join", "End")
            .chain("Fork", "Quick", "Join")
            .sub_process("Handler", triggered_by_event=True)
            .start_event("Timeout", parent="Handler", timer=HOUR, interrupting=True)
            .end_event("TimedOut", parent="Handler")
            .chain("Timeout", "TimedOut")
            .build()
        )
        engine.deploy(model)
        instance = engine.start_latest("interrupted-join")
        query = "SELECT gateway_id FROM join_state WHERE instance_id = %s"
        assert rows(engine, query, instance.id) == [("Join",)]
        [job] = engine.jobs(instance.id)
        clock.advance(hours=1, seconds=1)
        engine.run_job(job.id)
        assert instance.info().state == "Completed"
        assert rows(engine, query, instance.id) == []


def test_cancelling_the_last_compensation_handler_cancels_the_throw_waiting_for_it(
    engine: Engine,
) -> None:
    """A finding of the random models: a modification cancelled the only handler a waiting
    compensation throw event had started, and the throw event's token went on waiting for
    nothing. As Camunda cancels an activity instance a cancellation leaves without children,
    the throw event is cancelled with its last handler (here the instance with it)."""
    model = (
        ProcessBuilder("cancelled-handler")
        .start_event("Start")
        .task("Book")
        .user_task("Unbook")
        .compensation_boundary("Booked", "Book", "Unbook")
        .compensation_throw("Undo")
        .end_event("End")
        .chain("Start", "Book", "Undo", "End")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cancelled-handler")
    query = "SELECT id, node_id, state FROM token WHERE instance_id = %s ORDER BY node_id"
    live = [t for t in rows(engine, query, instance.id) if t[2] == "Waiting"]
    assert [t[1] for t in live] == ["Unbook", "Undo"]
    engine.modify(instance.id, CancelToken(UUID(str(live[0][0]))))
    assert [t[1:] for t in rows(engine, query, instance.id) if t[1] in ("Undo", "Unbook")] == [
        ("Unbook", "Terminated"),
        ("Undo", "Terminated"),
    ]
    assert instance.info().state == "Terminated"


def test_cancelling_the_last_handler_a_cancel_end_event_waits_for_cancels_it(
    engine: Engine,
) -> None:
    """A finding of the slow run (seed 463): in a transaction, a cancel end event compensates
    the transaction's work and waits for the handlers; a modification cancelled the only one,
    and the cancel end event's token went on waiting for nothing. As a compensation throw
    event's (above), it is cancelled with its last handler, and the transaction and the
    instance with it."""
    model = (
        ProcessBuilder("cancelled-cancel")
        .start_event("Start")
        .transaction("Tx")
        .start_event("TxStart", parent="Tx")
        .task("Book", parent="Tx")
        .user_task("Unbook", parent="Tx")
        .compensation_boundary("Booked", "Book", "Unbook")
        .end_event("Abort", parent="Tx", cancel=True)
        .chain("TxStart", "Book", "Abort")
        .cancel_boundary("Cancelled", "Tx")
        .end_event("End")
        .end_event("Aborted")
        .chain("Start", "Tx", "End")
        .flow("Cancelled", "Aborted")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cancelled-cancel")
    query = "SELECT id, node_id, state FROM token WHERE instance_id = %s ORDER BY node_id"
    live = [t for t in rows(engine, query, instance.id) if t[2] == "Waiting"]
    assert [t[1] for t in live] == ["Abort", "Tx", "Unbook"]
    engine.modify(instance.id, CancelToken(UUID(str(live[2][0]))))
    assert [t[1:] for t in rows(engine, query, instance.id) if t[2] != "Completed"] == [
        ("Abort", "Terminated"),
        ("Tx", "Terminated"),
        ("Unbook", "Terminated"),
    ]
    assert instance.info().state == "Terminated"
