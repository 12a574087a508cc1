"""tests/data/bpmn/order_watch.bpmn, as Camunda Modeler saves it: a timer event subprocess inside
the fulfilment subprocess (interrupting, `${packTimeout}`), a non-interrupting message event
subprocess and an interrupting signal event subprocess at process level."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.api import Engine
from engine.loops.jobs import JobExecutor
from engine.states import InstanceState
from tests.engine.clock import ManualClock
from tests.engine.test_event_subprocesses import open_tasks, waits
from tests.engine.test_waits import fire_due_jobs

ORDER_WATCH = Path(__file__).parent.parent / "data" / "bpmn" / "order_watch.bpmn"
LISTENING = [
    ("job", "StartEvent_PackLate", "scope"),
    ("subscription", "StartEvent_AddressChanged", "instance"),
    ("subscription", "StartEvent_Cancelled", "instance"),
]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as engine:
        engine.deploy(ORDER_WATCH)
        yield engine


def test_the_whole_order_with_address_changes(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    order = timed.start_latest("order_watch", {"packTimeout": "PT2H"}, business_key="O-7")
    other = timed.start_latest("order_watch", {"packTimeout": "PT2H"}, business_key="O-8")
    assert waits(database_url, order.id) == LISTENING
    for street in ("Elm Street 1", "Oak Road 2"):
        timed.correlate_message("AddressChanged", business_key="O-7", variables={"street": street})
    assert open_tasks(order) == ["Task_Pack", "Task_UpdateAddress", "Task_UpdateAddress"]
    assert order.variables()["street"] == "Oak Road 2"
    assert open_tasks(other) == ["Task_Pack"]
    timed.complete_task(next(t.id for t in order.user_tasks() if t.node_id == "Task_Pack"))
    # The fulfilment scope ended before its timer: its job went with it.
    assert open_tasks(order) == ["Task_Ship", "Task_UpdateAddress", "Task_UpdateAddress"]
    assert waits(database_url, order.id) == LISTENING[1:]
    clock.advance(hours=3)
    assert fire_due_jobs(timed) == 1  # the other order's timer, not this one's
    assert open_tasks(other) == ["Task_Escalate"]
    assert open_tasks(order) == ["Task_Ship", "Task_UpdateAddress", "Task_UpdateAddress"]
    for task in order.user_tasks():
        timed.complete_task(task.id)
    assert order.state is InstanceState.COMPLETED
    assert waits(database_url, order.id) == []
    assert waits(database_url, other.id) == LISTENING[1:]


def test_a_cancellation_signal_ends_every_listening_order(timed: Engine, database_url: str) -> None:
    orders = [timed.start_latest("order_watch", {"packTimeout": "P1D"}) for _ in range(3)]
    timed.correlate_message("AddressChanged", instance_id=orders[0].id)
    result = timed.signal("OrdersCancelled", {"reason": "closed"})
    assert sorted(d["instance_id"] for d in result.deliveries) == sorted(str(o.id) for o in orders)
    for order in orders:
        assert order.info().state == InstanceState.COMPLETED
        assert order.user_tasks() == []
        assert waits(database_url, order.id) == []
        assert order.variables()["reason"] == "closed"
        visited = [s.node_id for p in order.history() for s in p.steps]
        assert visited[-2:] == ["StartEvent_Cancelled", "EndEvent_Cancelled"]
    assert timed.signal("OrdersCancelled").deliveries == []


def test_a_real_short_timer_fires_through_the_job_executor(database_url: str) -> None:
    with Engine(database_url, migrate=False) as engine:
        engine.deploy(ORDER_WATCH)
        executor = JobExecutor(engine, poll_interval=30.0)
        executor.start()
        try:
            started = time.monotonic()
            order = engine.start_latest("order_watch", {"packTimeout": "PT0.5S"})
            [pack] = order.user_tasks()
            deadline = started + 5
            while open_tasks(order) != ["Task_Escalate"] and time.monotonic() < deadline:
                time.sleep(0.05)
            elapsed = time.monotonic() - started
        finally:
            executor.stop()
        assert open_tasks(order) == ["Task_Escalate"]
        assert 0.45 <= elapsed < 5
        assert engine.user_task(pack.id).state == "Retired"
        assert waits(database_url, order.id) == LISTENING[1:]
        engine.complete_task(order.user_tasks()[0].id)
        assert open_tasks(order) == ["Task_Ship"]
        assert waits(database_url, order.id) == LISTENING[1:]
