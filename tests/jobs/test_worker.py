"""The Python external-task `Worker`: handlers complete, throw BPMN errors, fail to incidents."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import BpmnError
from engine.loops.worker import ExternalTaskFailure, Task, Worker
from engine.model import ProcessModel
from engine.states import InstanceState
from tests.jobs.conftest import ManualClock
from tests.jobs.test_timers import count_commands


def shop() -> ProcessModel:
    """start -> charge (topic charge) -> ship (topic ship) -> end; a `DECLINED` error thrown at
    charge leads to the user task `declined`."""
    return (
        ProcessBuilder("shop")
        .start_event("start")
        .service_task("charge", topic="charge")
        .service_task("ship", topic="ship")
        .end_event("end")
        .boundary_event("on_declined", "charge", error_code="DECLINED")
        .user_task("declined")
        .chain("start", "charge", "ship", "end")
        .chain("on_declined", "declined")
        .build()
    )


@pytest.fixture
def worker(engine: Engine) -> Iterator[Worker]:
    engine.deploy(shop())
    yield Worker(engine, "test-worker", long_poll_seconds=0, retry_timeout_ms=0)


def drain(worker: Worker) -> int:
    handled = 0
    while n := worker.run_once():
        handled += n
    return handled


def test_handlers_complete_tasks_with_their_variables(engine: Engine, worker: Worker) -> None:
    seen: list[Task] = []

    @worker.topic("charge", variables=["amount"])
    def charge(task: Task) -> dict[str, Any]:
        seen.append(task)
        return {"receipt": f"r-{task.variables['amount']}"}

    @worker.topic("ship")
    def ship(task: Task) -> None:
        seen.append(task)

    instances = [
        engine.start_latest("shop", {"amount": n, "secret": "x"}, business_key=f"order-{n}")
        for n in range(3)
    ]
    assert drain(worker) == 6
    assert [i.state for i in instances] == [InstanceState.COMPLETED] * 3
    assert [i.variables()["receipt"] for i in instances] == ["r-0", "r-1", "r-2"]
    charges = [t for t in seen if t.topic == "charge"]
    assert [t.variables for t in charges] == [{"amount": n} for n in range(3)]
    assert [t.business_key for t in charges] == ["order-0", "order-1", "order-2"]
    assert all(t.worker_id == "test-worker" and t.retries is None for t in seen)
    ships = [t for t in seen if t.topic == "ship"]
    assert ships[0].variables == {"amount": 0, "secret": "x", "receipt": "r-0"}


def test_a_bpmn_error_is_caught_by_the_error_boundary_event(engine: Engine, worker: Worker) -> None:
    @worker.topic("charge")
    def charge(task: Task) -> None:
        raise BpmnError("DECLINED", "card declined")

    instance = engine.start_latest("shop")
    assert worker.run_once() == 1
    assert [t.node_id for t in instance.tokens()] == ["declined"]
    assert engine.external_tasks(instance_id=instance.id) == []
    assert engine.incidents(instance_id=instance.id) == []


def test_a_raising_handler_fails_with_one_retry_fewer_until_an_incident(
    engine: Engine, worker: Worker
) -> None:
    attempts: list[int | None] = []
    gateway_up = threading.Event()
    worker.default_retries = 2

    @worker.topic("charge")
    def charge(task: Task) -> dict[str, Any]:
        attempts.append(task.retries)
        if not gateway_up.is_set():
            raise ConnectionError("payment gateway unreachable")
        return {"charged": True}

    worker.topic("ship")(lambda task: None)

    instance = engine.start_latest("shop")
    assert drain(worker) == 3
    assert attempts == [None, 2, 1]
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.type == "failedExternalTask"
    assert incident.message == "ConnectionError: payment gateway unreachable"
    with engine.connection() as conn:
        row = conn.execute("SELECT details FROM incident WHERE id = %s", (incident.id,)).fetchone()
    assert row is not None and "Traceback" in row[0]
    assert drain(worker) == 0

    gateway_up.set()
    engine.retry_incident(incident.id)
    assert drain(worker) == 2
    assert attempts == [None, 2, 1, 1]
    assert instance.state is InstanceState.COMPLETED


def test_external_task_failure_sets_the_retries(engine: Engine, worker: Worker) -> None:
    @worker.topic("charge")
    def charge(task: Task) -> None:
        raise ExternalTaskFailure("card expired", details="expiry 01/29", retries=0)

    instance = engine.start_latest("shop")
    assert worker.run_once() == 1
    [incident] = engine.incidents(instance_id=instance.id)
    assert (incident.type, incident.message) == ("failedExternalTask", "card expired")
    assert drain(worker) == 0


def test_a_retry_timeout_delays_the_next_attempt(
    engine: Engine, worker: Worker, clock: ManualClock
) -> None:
    @worker.topic("charge")
    def charge(task: Task) -> None:
        raise ExternalTaskFailure("busy", retries=5, retry_timeout_ms=30_000)

    engine.start_latest("shop")
    assert worker.run_once() == 1
    assert worker.run_once() == 0
    clock.advance(seconds=30)
    assert worker.run_once() == 1


def test_a_handler_returning_something_else_fails_the_task(engine: Engine, worker: Worker) -> None:
    # A handler that breaks its contract, as an untyped one can.
    worker.topic("charge")(lambda task: ["not", "a", "mapping"])  # type: ignore[arg-type,return-value]
    instance = engine.start_latest("shop")
    assert worker.run_once() == 1
    [task] = engine.external_tasks(instance_id=instance.id)
    assert task.retries == worker.default_retries
    assert "TypeError" in (task.error_message or "")


def test_a_handler_extends_its_lock(engine: Engine, worker: Worker, clock: ManualClock) -> None:
    expiries: list[Any] = []

    @worker.topic("charge", lock_ms=1_000)
    def charge(task: Task) -> None:
        task.extend_lock(60_000)
        [info] = engine.external_tasks(instance_id=task.instance_id)
        expiries.append(info.lock_expires_at)
        raise ExternalTaskFailure("keep it", retries=1, retry_timeout_ms=1)

    engine.start_latest("shop")
    assert worker.run_once() == 1
    assert expiries == [clock() + timedelta(seconds=60)]


def test_a_report_after_the_lease_was_lost_is_logged_not_raised(
    engine: Engine, worker: Worker, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    other = Worker(engine, "other", long_poll_seconds=0)
    other.topic("charge")(lambda task: {"by": "other"})

    @worker.topic("charge", lock_ms=1_000)
    def slow(task: Task) -> dict[str, Any]:
        clock.advance(seconds=2)  # the lease runs out while the handler works
        assert other.run_once() == 1
        return {"by": "slow"}

    instance = engine.start_latest("shop")
    with caplog.at_level(logging.WARNING, logger="engine.worker"):
        assert worker.run_once() == 1
    assert instance.variables()["by"] == "other"
    assert [t.node_id for t in instance.tokens()] == ["ship"]
    assert any("rejected" in r.getMessage() for r in caplog.records)


def test_long_poll_wakes_when_a_task_appears(
    real_engine: Engine, database_url: str, record_property: Callable[[str, Any], None]
) -> None:
    real_engine.deploy(shop())
    worker = Worker(real_engine, "poller", long_poll_seconds=60.0)
    handled = threading.Event()
    worker.topic("charge")(lambda task: handled.set())
    with Engine(database_url, migrate=False, pool_size=2) as other:
        fetches = count_commands(real_engine, "FetchAndLock")
        result: list[int] = []
        poller = threading.Thread(target=lambda: result.append(worker.run_once()))
        poller.start()
        time.sleep(0.5)
        other.start_latest("shop")
        committed = time.monotonic()
        assert handled.wait(60)
        latency = time.monotonic() - committed
        poller.join(60)
    record_property("worker_long_poll_latency_s", round(latency, 4))
    assert result == [1]
    assert latency < 30  # woken by the commit, long before its 60 s long poll ran out
    # One fetch at the start, one when the task came: the wait in between fetched nothing.
    assert fetches[0] <= 3


def test_stop_ends_a_long_poll(real_engine: Engine) -> None:
    real_engine.deploy(shop())
    worker = Worker(real_engine, "stopper", long_poll_seconds=30.0)
    worker.topic("charge")(lambda task: None)
    thread = worker.start()
    time.sleep(0.3)
    started = time.monotonic()
    worker.stop(timeout=20)
    assert time.monotonic() - started < 15  # ended at once, not when its 30 s ran out
    thread.join(1)
    assert not thread.is_alive()


def test_run_forever_handles_work_until_stopped(real_engine: Engine) -> None:
    real_engine.deploy(shop())
    worker = Worker(real_engine, "forever", long_poll_seconds=1.0)
    worker.topic("charge")(lambda task: {"charged": True})
    worker.topic("ship")(lambda task: {"shipped": True})
    thread = threading.Thread(target=worker.run_forever)
    thread.start()
    try:
        instances = [real_engine.start_latest("shop") for _ in range(5)]
        states = [i.wait_completion(10) for i in instances]
    finally:
        worker.stop(timeout=5)
        thread.join(5)
    assert states == [InstanceState.COMPLETED] * 5
    assert not thread.is_alive()


def test_topic_registration_is_checked(engine: Engine) -> None:
    worker = Worker(engine)
    worker.topic("a")(lambda task: None)
    with pytest.raises(ValueError, match="already"):
        worker.topic("a")
    with pytest.raises(ValueError, match="non-empty"):
        worker.topic("")
    assert worker.topics == ["a"]
