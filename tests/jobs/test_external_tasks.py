"""The external-task protocol under races and time: leases, failures, incidents, long polling,
and reports about tasks that were retired."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import Conflict, InvariantViolation, InvariantViolationKind
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState
from tests.jobs.conftest import ManualClock, snapshot
from tests.jobs.test_timers import count_commands

TOPIC = {"charge": 30_000}


def charge(*, boundary_timer: str | None = None) -> ProcessModel:
    """start -> charge (external, topic `charge`) -> end; optionally a timer that interrupts
    `charge` and leads to the user task `late`."""
    builder = (
        ProcessBuilder("charge")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
    )
    if boundary_timer is not None:
        builder.boundary_event(
            "timeout", "charge", timer=TimerDefinition(kind="duration", text=boundary_timer)
        ).user_task("late").chain("timeout", "late")
    return builder.build()


def test_four_workers_race_for_200_tasks(database_url: str, real_engine: Engine) -> None:
    real_engine.deploy(charge())
    instances = [real_engine.start_latest("charge", {"n": n}) for n in range(200)]
    engines = [Engine(database_url, migrate=False, pool_size=2) for _ in range(4)]
    fetched: dict[str, list[str]] = {f"worker-{n}": [] for n in range(4)}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(engine: Engine, worker_id: str) -> None:
        try:
            barrier.wait()
            while tasks := engine.fetch_and_lock(worker_id, TOPIC, max_tasks=5):
                for task in tasks:
                    fetched[worker_id].append(task["id"])
                    engine.complete_external_task(task["id"], worker_id, {"by": worker_id})
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(engine, worker_id))
        for engine, worker_id in zip(engines, fetched, strict=True)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for engine in engines:
            engine.close()
    assert errors == []
    every = [task_id for ids in fetched.values() for task_id in ids]
    assert len(every) == len(set(every)) == 200
    assert sum(1 for ids in fetched.values() if ids) >= 2
    assert real_engine.instance_counts() == {"Completed": 200}
    assert {i.variables()["by"] for i in instances} <= set(fetched)
    with real_engine.connection() as conn:
        rows = conn.execute(
            "SELECT count(*), count(DISTINCT instance_id) FROM history "
            "WHERE node_id = 'charge' AND state = 'Completed'"
        ).fetchone()
        events = conn.execute(
            "SELECT count(*) FROM outbox_event WHERE event = 'external_task.completed'"
        ).fetchone()
    assert rows == (200, 200)
    assert events == (200,)


def test_a_report_by_a_worker_without_the_lease_changes_nothing(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(charge())
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock("owner", TOPIC)
    before = snapshot(database_url)
    reports: list[Callable[[], object]] = [
        lambda: engine.complete_external_task(task["id"], "intruder", {"x": 1}),
        lambda: engine.fail_external_task(task["id"], "intruder", "no", retries=0),
        lambda: engine.external_task_bpmn_error(task["id"], "intruder", "E"),
        lambda: engine.extend_lock(task["id"], "intruder", 60_000),
    ]
    for report in reports:
        with pytest.raises(InvariantViolation) as caught:
            report()
        assert caught.value.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
        assert snapshot(database_url) == before
    engine.complete_external_task(task["id"], "owner")
    assert instance.state is InstanceState.COMPLETED


def test_an_expired_lease_returns_the_task_to_others(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(charge())
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock("slow", {"charge": 10_000})
    assert engine.fetch_and_lock("fast", TOPIC) == []
    clock.advance(seconds=9.999)
    assert engine.fetch_and_lock("fast", TOPIC) == []
    clock.advance(seconds=0.001)
    [again] = engine.fetch_and_lock("fast", TOPIC)
    assert again["id"] == task["id"]
    assert again["worker_id"] == "fast"
    with pytest.raises(InvariantViolation) as caught:
        engine.complete_external_task(task["id"], "slow")
    assert caught.value.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
    engine.complete_external_task(task["id"], "fast", {"done": "fast"})
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"done": "fast"}


def test_failures_count_down_to_exactly_one_incident_and_a_retry_completes(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(charge())
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock("w", TOPIC)
    assert task["retries"] is None
    engine.fail_external_task(task["id"], "w", "gateway down", retries=2, retry_timeout_ms=60_000)
    assert engine.fetch_and_lock("w", TOPIC) == []
    clock.advance(seconds=60)
    for retries_left in (2, 1):
        [task] = engine.fetch_and_lock("w", TOPIC)
        assert (task["retries"], task["error_message"]) == (retries_left, "gateway down")
        engine.fail_external_task(
            task["id"], "w", "gateway down", details="trace", retries=retries_left - 1
        )
        if retries_left > 1:
            assert engine.incidents(instance_id=instance.id) == []
    [incident] = engine.incidents(instance_id=instance.id)
    assert (incident.type, incident.message) == ("failedExternalTask", "gateway down")
    assert incident.external_task_id is not None and str(incident.external_task_id) == task["id"]
    clock.advance(days=1)
    assert engine.fetch_and_lock("w", TOPIC) == []

    engine.retry_incident(incident.id)
    assert engine.incidents(instance_id=instance.id) == []
    [task] = engine.fetch_and_lock("w", TOPIC)
    assert task["retries"] == 1
    engine.complete_external_task(task["id"], "w")
    assert instance.state is InstanceState.COMPLETED
    assert len(engine.incidents(instance_id=instance.id, state=None)) == 1


@pytest.fixture
def second_engine(database_url: str) -> Iterator[Engine]:
    """Another engine on the same database: its own pool, connections and notifier."""
    with Engine(database_url, migrate=False, pool_size=2) as engine:
        yield engine


def test_long_poll_returns_soon_after_a_task_appears(
    real_engine: Engine, second_engine: Engine, record_property: Callable[[str, Any], None]
) -> None:
    real_engine.deploy(charge())
    result: dict[str, Any] = {}

    def poll() -> None:
        result["tasks"] = real_engine.fetch_and_lock("w", TOPIC, timeout=60.0)
        result["returned"] = time.monotonic()

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.5)
    second_engine.start_latest("charge")
    committed = time.monotonic()
    poller.join(90)
    latency = result["returned"] - committed
    record_property("long_poll_latency_s", round(latency, 4))
    assert len(result["tasks"]) == 1
    # Woken by the commit, long before its 60 s ran out (the latency itself is benchmarked).
    assert latency < 30


def test_long_poll_returns_empty_after_its_timeout(real_engine: Engine) -> None:
    real_engine.deploy(charge())
    started = time.monotonic()
    assert real_engine.fetch_and_lock("w", TOPIC, timeout=1.0) == []
    assert time.monotonic() - started >= 1.0


def test_an_idle_long_poll_does_not_spin(real_engine: Engine) -> None:
    real_engine.deploy(charge())
    fetches = count_commands(real_engine, "FetchAndLock")
    assert real_engine.fetch_and_lock("w", TOPIC, timeout=1.0) == []
    assert fetches[0] <= 5


def test_reports_for_a_task_retired_by_a_boundary_timer_change_nothing(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    engine.deploy(charge(boundary_timer="PT1M"))
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock("w", TOPIC)
    clock.advance(minutes=1)
    assert JobExecutor(engine).run_once() == 1
    assert [t.node_id for t in instance.tokens()] == ["late"]
    assert engine.external_tasks(instance_id=instance.id) == []
    with engine.connection() as conn:
        state = conn.execute("SELECT state FROM external_task WHERE id = %s", (task["id"],))
        assert state.fetchone() == ("Retired",)
    assert engine.fetch_and_lock("w", TOPIC) == []
    before = snapshot(database_url)
    reports: list[Callable[[], object]] = [
        lambda: engine.complete_external_task(task["id"], "w"),
        lambda: engine.fail_external_task(task["id"], "w", "late", retries=0),
        lambda: engine.external_task_bpmn_error(task["id"], "w", "E"),
        lambda: engine.extend_lock(task["id"], "w", 1_000),
    ]
    for report in reports:
        with pytest.raises(Conflict, match="retired"):
            report()
        assert snapshot(database_url) == before


def test_reports_for_a_task_of_a_cancelled_instance_change_nothing(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(charge())
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock("w", TOPIC)
    instance.cancel()
    assert instance.state is InstanceState.TERMINATED
    before = snapshot(database_url)
    with pytest.raises(Conflict, match="retired"):
        engine.complete_external_task(task["id"], "w", {"paid": True})
    with pytest.raises(Conflict, match="retired"):
        engine.fail_external_task(task["id"], "w", "oops", retries=0)
    assert snapshot(database_url) == before
