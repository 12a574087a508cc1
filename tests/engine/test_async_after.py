"""camunda:asyncAfter: the node's work commits, then the token waits Ready with a job that takes
the outgoing flows; a failure after the park retries only that job; the job is a row, so a new
engine on the same database continues it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.loops.jobs import JobExecutor
from engine.states import InstanceState, JobKind, JobOutcome, TokenView
from tests.engine.clock import ManualClock

DATA = Path(__file__).parent.parent / "data" / "bpmn"
START = datetime(2030, 3, 4, 8, 0, tzinfo=UTC)


class Calls:
    """Handlers that count their calls; `notify` fails while `broken`."""

    def __init__(self) -> None:
        self.reserved = 0
        self.notified = 0
        self.broken = False

    def reserve(self, ctx: TaskContext) -> dict[str, Any]:
        self.reserved += 1
        return {"reservation": "R-1"}

    def notify(self, ctx: TaskContext) -> dict[str, Any]:
        if self.broken:
            raise RuntimeError("warehouse offline")
        self.notified += 1
        return {"notified": True}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def calls() -> Calls:
    return Calls()


def open_engine(database_url: str, clock: ManualClock, calls: Calls) -> Engine:
    engine = Engine(database_url, migrate=False, pool_size=4, clock=clock)
    engine.register_handler("reserveStock", calls.reserve)
    engine.register_handler("com.acme.stock.NotifyWarehouse", calls.notify)
    return engine


@pytest.fixture
def engine(database_url: str, clock: ManualClock, calls: Calls) -> Iterator[Engine]:
    with open_engine(database_url, clock, calls) as engine:
        yield engine


def parked(engine: Engine, instance: InstanceHandle) -> tuple[str, str, Any]:
    """(node, token state, job) of an instance whose only token waits for its only job."""
    [token] = instance.tokens()
    [job] = engine.jobs(instance.id)
    return token.node_id, token.state, job


def test_a_service_task_and_a_user_task_continue_after_their_work(
    engine: Engine, calls: Calls
) -> None:
    engine.deploy(DATA / "stock_reservation.bpmn")
    instance = engine.start_latest("stock_reservation", business_key="mary")

    # The handler ran and its variables committed; the token waits after the task.
    assert calls.reserved == 1
    assert instance.variables() == {"reservation": "R-1"}
    node, state, job = parked(engine, instance)
    assert (node, state, job.kind, job.node_id) == (
        "Task_Reserve",
        TokenView.ALIVE,
        JobKind.ASYNC_AFTER,
        "Task_Reserve",
    )
    assert instance.user_tasks() == []
    [track] = instance.history()
    assert [(s.node_id, s.state) for s in track.steps][-1] == ("Task_Reserve", "Completed")

    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert calls.reserved == 1
    [task] = instance.user_tasks()
    # The task's expressions see the execution and the command's clock.
    assert (task.node_id, task.assignee) == ("Task_Approve", "mary")
    assert task.due_at == datetime(2030, 3, 11, 8, 0, tzinfo=UTC)
    assert engine.jobs(instance.id) == []

    engine.complete_task(task.id, {"approved": True})
    assert calls.notified == 0
    node, state, job = parked(engine, instance)
    assert (node, state, job.kind) == ("Task_Approve", TokenView.ALIVE, JobKind.ASYNC_AFTER)
    assert instance.user_tasks() == []

    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert calls.notified == 1
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"reservation": "R-1", "approved": True, "notified": True}


def test_a_failure_after_the_park_retries_only_the_continuation(
    engine: Engine, calls: Calls
) -> None:
    engine.deploy(DATA / "stock_reservation.bpmn")
    instance = engine.start_latest("stock_reservation", business_key="mary")
    engine.execute_job(parked(engine, instance)[2].id)
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    calls.broken = True
    job = parked(engine, instance)[2]

    assert engine.execute_job(job.id) == JobOutcome.FAILED
    node, state, failed = parked(engine, instance)
    assert (node, state, failed.id, failed.kind) == (
        "Task_Approve",
        TokenView.ALIVE,
        job.id,
        JobKind.ASYNC_AFTER,
    )
    assert failed.retries == job.retries - 1
    assert "warehouse offline" in (failed.error_message or "")
    # The task stays completed: nothing before the park runs again.
    assert instance.user_tasks() == []
    assert calls.reserved == 1

    calls.broken = False
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert (calls.reserved, calls.notified) == (1, 1)
    assert instance.state is InstanceState.COMPLETED


def test_spent_retries_open_an_incident_and_a_retry_continues_after_the_node(
    engine: Engine, calls: Calls
) -> None:
    model = (
        ProcessBuilder("after_retries")
        .start_event("start")
        .service_task("reserve", handler="reserveStock", async_after=True, retry_cycle="R1/PT1M")
        .service_task("notify", handler="com.acme.stock.NotifyWarehouse")
        .end_event("end")
        .chain("start", "reserve", "notify", "end")
        .build()
    )
    engine.deploy(model)
    calls.broken = True
    instance = engine.start_latest("after_retries")
    job = parked(engine, instance)[2]
    assert job.retries == 1

    assert engine.execute_job(job.id) == JobOutcome.FAILED
    [token] = instance.tokens()
    assert (token.node_id, token.state) == ("reserve", TokenView.FAILED)
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.job_id == job.id

    calls.broken = False
    engine.set_job_retries(job.id, 1)
    assert parked(engine, instance)[1] == TokenView.ALIVE
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert (calls.reserved, calls.notified) == (1, 1)
    assert instance.state is InstanceState.COMPLETED


def test_an_exclusive_gateway_parked_after_chooses_when_its_job_runs(engine: Engine) -> None:
    """The token parks before its flows are chosen: the job chooses them with the variables as
    they are when it runs. (Camunda chooses first and keeps the chosen flow in the job.)"""
    model = (
        ProcessBuilder("after_gateway")
        .start_event("start")
        .exclusive_gateway("choose", async_after=True, default="to_low")
        .user_task("high")
        .user_task("low")
        .flow("start", "choose")
        .flow("choose", "high", id="to_high", condition="${execution.getVariable('amount') > 100}")
        .flow("choose", "low", id="to_low")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("after_gateway", {"amount": 500})
    node, _, job = parked(engine, instance)
    assert (node, job.kind) == ("choose", JobKind.ASYNC_AFTER)
    instance.set_variables({"amount": 5})
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert [task.node_id for task in instance.user_tasks()] == ["low"]


def test_the_continuation_survives_a_new_engine_on_the_same_database(
    database_url: str, clock: ManualClock, calls: Calls
) -> None:
    with open_engine(database_url, clock, calls) as first:
        first.deploy(DATA / "stock_reservation.bpmn")
        instance_id = first.start_latest("stock_reservation", business_key="ann").id
    assert calls.reserved == 1

    with open_engine(database_url, clock, calls) as second:
        executor = JobExecutor(second)
        assert executor.run_once() == 1
        instance = second.instance(instance_id)
        [task] = instance.user_tasks()
        assert task.assignee == "ann"
        second.complete_task(task.id)
        assert executor.run_once() == 1
        assert instance.state is InstanceState.COMPLETED
    assert (calls.reserved, calls.notified) == (1, 1)
