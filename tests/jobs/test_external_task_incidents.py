"""An external task whose failure opened an incident: the worker that still holds the lock may
complete it or report a BPMN error (the incident resolves in the same transaction), as in
Camunda 7; another worker, or the holder once its lock expired, is refused."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import InvariantViolation, InvariantViolationKind
from engine.queries import console
from engine.states import IncidentState, InstanceState
from tests.jobs.conftest import ManualClock, snapshot
from tests.jobs.test_external_tasks import charge

LOCK = {"charge": 30_000}


def failed(engine: Engine, worker: str = "w") -> tuple[Any, dict[str, Any]]:
    """A `charge` instance whose task `worker` fetched (30 s lock) and failed without retries."""
    engine.deploy(charge())
    instance = engine.start_latest("charge")
    [task] = engine.fetch_and_lock(worker, LOCK)
    engine.fail_external_task(task["id"], worker, "card declined", retries=0)
    [incident] = engine.incidents(instance_id=instance.id)
    assert incident.external_task_id == UUID(task["id"])
    return instance, task


def outbox(database_url: str, instance_id: UUID) -> list[tuple[str, str | None]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT event, node_id FROM outbox_event WHERE instance_id = %s ORDER BY seq",
            (instance_id,),
        ).fetchall()
    return [(event, node) for event, node in rows]


def refused(report: Any) -> str:
    with pytest.raises(InvariantViolation) as caught:
        report()
    assert caught.value.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
    return caught.value.message


def test_the_lock_holder_completes_the_task_and_its_incident_resolves(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    instance, task = failed(engine)
    clock.advance(seconds=29.999)
    result = engine.complete_external_task(task["id"], "w", {"paid": True})
    assert result.instance_state == InstanceState.COMPLETED
    assert instance.variables() == {"paid": True}
    assert engine.incidents(instance_id=instance.id) == []
    [incident] = engine.incidents(instance_id=instance.id, state=None)
    assert incident.state == IncidentState.RESOLVED
    assert incident.resolved_at == clock()
    assert outbox(database_url, instance.id) == [
        ("visit.completed", "start"),
        ("visit.active", "charge"),
        ("instance.started", None),
        ("incident.created", "charge"),
        ("visit.completed", "charge"),
        ("visit.completed", "end"),
        ("incident.resolved", "charge"),
        ("external_task.completed", "charge"),
        ("instance.completed", None),
        ("variables.updated", None),
    ]
    with psycopg.connect(database_url) as conn:
        history = conn.execute(
            "SELECT node_id, state FROM history WHERE instance_id = %s ORDER BY node_id",
            (instance.id,),
        ).fetchall()
        state = conn.execute("SELECT state FROM external_task WHERE id = %s", (task["id"],))
        assert state.fetchone() == ("Completed",)
    assert history == [("charge", "Completed"), ("end", "Completed"), ("start", "Completed")]


def test_another_worker_cannot_complete_the_failed_task(engine: Engine, database_url: str) -> None:
    instance, task = failed(engine)
    before = snapshot(database_url)
    message = refused(lambda: engine.complete_external_task(task["id"], "intruder"))
    assert message == f"external task {task['id']} is locked by worker 'w', not by 'intruder'"
    refused(lambda: engine.external_task_bpmn_error(task["id"], "intruder", "E"))
    assert snapshot(database_url) == before
    assert [i.state for i in engine.incidents(instance_id=instance.id)] == [IncidentState.OPEN]


def test_the_holder_cannot_complete_once_its_lock_expired(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    instance, task = failed(engine)
    clock.advance(seconds=30)
    before = snapshot(database_url)
    message = refused(lambda: engine.complete_external_task(task["id"], "w"))
    assert message == (
        f"external task {task['id']} has an open incident and the lock of worker 'w' on it "
        "has expired"
    )
    refused(lambda: engine.external_task_bpmn_error(task["id"], "w", "E"))
    refused(lambda: engine.extend_lock(task["id"], "w", 60_000))
    refused(lambda: engine.fail_external_task(task["id"], "w", "again", retries=2))
    assert snapshot(database_url) == before
    assert engine.fetch_and_lock("w", LOCK) == []
    # The operator's way out still works: one more retry, fetched and completed anew.
    engine.set_external_task_retries(task["id"], 1)
    [again] = engine.fetch_and_lock("w2", LOCK)
    engine.complete_external_task(again["id"], "w2")
    assert instance.info().state == InstanceState.COMPLETED


def test_the_failed_task_is_not_fetchable_while_its_holder_keeps_the_lock(
    engine: Engine, clock: ManualClock
) -> None:
    instance, task = failed(engine)
    [view] = engine.external_tasks(instance_id=instance.id)
    assert (view.worker_id, view.retries) == ("w", 0)
    assert engine.fetch_and_lock("other", LOCK) == []
    clock.advance(minutes=5)
    assert engine.fetch_and_lock("other", LOCK) == []


def test_the_holder_reports_a_bpmn_error_after_the_incident(
    engine: Engine, database_url: str
) -> None:
    model = (
        ProcessBuilder("pay")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .boundary_event("declined", "charge", error=True, error_code="DECLINED")
        .user_task("call")
        .chain("start", "charge", "end")
        .chain("declined", "call")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("pay")
    [task] = engine.fetch_and_lock("w", LOCK)
    engine.fail_external_task(task["id"], "w", "card declined", retries=0)
    engine.external_task_bpmn_error(task["id"], "w", "DECLINED", "no funds", {"reason": "funds"})
    assert engine.incidents(instance_id=instance.id) == []
    [incident] = engine.incidents(instance_id=instance.id, state=None)
    assert incident.state == IncidentState.RESOLVED
    assert [t.node_id for t in instance.user_tasks()] == ["call"]
    assert instance.variables() == {"reason": "funds"}
    events = [event for event, _ in outbox(database_url, instance.id)]
    assert events.count("incident.created") == events.count("incident.resolved") == 1


def test_a_failure_with_retries_from_the_holder_resolves_the_incident(
    engine: Engine, clock: ManualClock
) -> None:
    instance, task = failed(engine)
    engine.fail_external_task(task["id"], "w", "try later", retries=2, retry_timeout_ms=5_000)
    assert engine.incidents(instance_id=instance.id) == []
    assert engine.fetch_and_lock("w2", LOCK) == []
    clock.advance(seconds=5)
    [again] = engine.fetch_and_lock("w2", LOCK)
    assert (again["retries"], again["error_message"]) == (2, "try later")
    engine.complete_external_task(again["id"], "w2")
    assert instance.info().state == InstanceState.COMPLETED


def test_the_holder_may_extend_its_lock_before_it_expires(
    engine: Engine, clock: ManualClock
) -> None:
    instance, task = failed(engine)
    clock.advance(seconds=29)
    engine.extend_lock(task["id"], "w", 60_000)
    clock.advance(seconds=59.999)
    engine.complete_external_task(task["id"], "w")
    assert instance.info().state == InstanceState.COMPLETED
    assert [i.state for i in engine.incidents(instance_id=instance.id, state=None)] == [
        IncidentState.RESOLVED
    ]


def test_an_operator_retry_takes_the_lock_from_the_holder(
    engine: Engine, database_url: str
) -> None:
    instance, task = failed(engine)
    [incident] = engine.incidents(instance_id=instance.id)
    engine.retry_incident(incident.id)
    before = snapshot(database_url)
    message = refused(lambda: engine.complete_external_task(task["id"], "w"))
    assert message == f"external task {task['id']} is locked by no worker, not by 'w'"
    assert snapshot(database_url) == before
    [again] = engine.fetch_and_lock("w2", LOCK)
    engine.complete_external_task(again["id"], "w2")
    assert instance.info().state == InstanceState.COMPLETED


def test_the_workers_page_shows_the_kept_lock_then_only_the_incident(
    engine: Engine, clock: ManualClock
) -> None:
    _, task = failed(engine)
    [locked] = console.leases(engine, clock(), expired=False)
    assert (str(locked.id), locked.worker_id, locked.retries) == (task["id"], "w", 0)
    [topic] = console.topics(engine, clock())
    assert (topic.open, topic.available, topic.locked, topic.expired) == (1, 0, 1, 0)
    assert topic.without_retries == 1
    clock.advance(seconds=30)
    assert console.leases(engine, clock(), expired=False) == []
    assert console.leases(engine, clock(), expired=True) == []
    [topic] = console.topics(engine, clock())
    assert (topic.open, topic.available, topic.locked, topic.expired) == (1, 0, 0, 0)
