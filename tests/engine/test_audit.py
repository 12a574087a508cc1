"""The audit log's foundation: an entry exactly when an operator's mutation commits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.errors import Conflict
from engine.states import AuditChannel, AuditEntity, AuditOperation
from engine.store import cleanup as cleanup_store


def _failing(engine: Engine) -> Any:
    model = (
        ProcessBuilder("audited")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("audited")
    [task] = engine.fetch_and_lock("w", {"charge": 1000})
    engine.fail_external_task(task["id"], "w", "card declined", retries=0)
    [incident] = engine.incidents(instance_id=instance.id)
    return instance, incident


def _entries(engine: Engine, instance_id: Any) -> list[tuple[Any, ...]]:
    with engine.pool.connection() as conn:
        return conn.execute(
            "SELECT user_id, channel, operation, entity, entity_id, definition_key "
            "FROM audit_entry WHERE instance_id = %s ORDER BY at, id",
            (instance_id,),
        ).fetchall()


def test_an_operator_mutation_leaves_one_entry_and_nobodys_none(engine: Engine) -> None:
    instance, incident = _failing(engine)
    assert _entries(engine, instance.id) == []  # the worker's failure: nobody's operation
    with audit.acting(audit.Actor("olga", AuditChannel.CONSOLE)):
        engine.retry_incident(incident.id)
    assert _entries(engine, instance.id) == [
        ("olga", "console", "Retry", "Incident", str(incident.id), "audited")
    ]


def test_resolving_an_incident_names_its_state_before_and_after(engine: Engine) -> None:
    instance, incident = _failing(engine)
    with audit.acting(audit.Actor("olga", AuditChannel.CONSOLE)):
        engine.resolve_incident(incident.id)
    assert _values(engine, instance.id) == [("Resolve", "Incident", "state", "Open", "Resolved")]


def test_a_refused_mutation_leaves_no_entry(engine: Engine) -> None:
    instance, incident = _failing(engine)
    with audit.acting(audit.Actor("olga", AuditChannel.API)):
        engine.retry_incident(incident.id)
        with pytest.raises(Conflict):
            engine.retry_incident(incident.id)  # already retried: refused, rolled back
    assert len(_entries(engine, instance.id)) == 1


def _values(engine: Engine, instance_id: Any) -> list[tuple[Any, ...]]:
    with engine.pool.connection() as conn:
        return conn.execute(
            "SELECT operation, entity, property, before, after FROM audit_entry "
            "WHERE instance_id = %s ORDER BY at, id",
            (instance_id,),
        ).fetchall()


def test_entries_hold_the_values_before_and_after(engine: Engine) -> None:
    model = (
        ProcessBuilder("valued")
        .start_event("start")
        .user_task("review")
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("valued", {"amount": 1, "note": "old", "gone": True})
    [task] = instance.user_tasks()
    with audit.acting(audit.Actor("olga", AuditChannel.API)):
        instance.set_variables({"amount": 2})
        instance.set_variables({"note": "new", "extra": [1]}, deletions=["gone"])
        instance.set_variables({}, deletions=["absent"])  # no change: no entry
        engine.claim_task(task.id, "ann")
        engine.set_assignee(task.id, "bob")
        instance.suspend()
        instance.resume()
    assert _values(engine, instance.id) == [
        ("ModifyVariable", "Variable", "amount", 1, 2),
        (
            "ModifyVariable",
            "Variable",
            None,
            {"note": "old", "gone": True},
            {"note": "new", "extra": [1]},
        ),
        ("Claim", "Task", "assignee", None, "ann"),
        ("Assign", "Task", "assignee", "ann", "bob"),
        ("Suspend", "ProcessInstance", "state", "Active", "Suspended"),
        ("Activate", "ProcessInstance", "state", "Suspended", "Active"),
    ]


def test_the_history_cleanup_deletes_an_instances_entries(engine: Engine) -> None:
    instance, incident = _failing(engine)
    with audit.acting(audit.Actor("olga", AuditChannel.CONSOLE)):
        engine.retry_incident(incident.id)
        instance.cancel()
    assert len(_entries(engine, instance.id)) == 2
    with engine.pool.connection() as conn, conn.transaction():
        assert cleanup_store.delete_instances(conn, [instance.id]) == 1
    assert _entries(engine, instance.id) == []


@dataclass(frozen=True)
class _RecordThenRefuse:
    """Writes its entry, then is refused: the entry must roll back with the command."""

    name: ClassVar[str] = "RecordThenRefuse"
    result_type: ClassVar[type[Result]] = Result

    instance_id: UUID

    def execute(self, tx: Tx) -> Result:
        audit.record(
            tx, AuditOperation.SUSPEND, AuditEntity.PROCESS_INSTANCE, instance_id=self.instance_id
        )
        raise Conflict("refused after the entry was written")


def test_an_entry_written_before_a_refusal_rolls_back_with_it(engine: Engine) -> None:
    instance, _ = _failing(engine)
    with audit.acting(audit.Actor("olga", AuditChannel.API)), pytest.raises(Conflict):
        engine.run(_RecordThenRefuse(instance.id))
    assert _entries(engine, instance.id) == []
