"""The audit log: one `audit_entry` row per operator mutation, in the mutation's transaction.

Who acts is the request's authenticated caller: the web layer binds an `Actor` around each
request (`acting`, engine/core/actors.py), the executor hands it to the command's transaction
(`Tx.actor`), and an audited command calls `record` once it knows what it changed; the row is
written by engine/store/audit.py. A command run with no actor (the engine's own loops, the Python
API of a hosting program) writes no entry: the audit log is of people and their tokens, as
Camunda's user operation log is. A batch's items run as the operator who created the batch, with
the batch's id on each entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from engine.core.actors import Actor, acting, current
from engine.errors import NeedsTransaction
from engine.states import AuditEntity, AuditOperation
from engine.store import audit as audit_store

if TYPE_CHECKING:
    from engine.core.executor import Tx
    from engine.core.runtime import InstanceRun
    from engine.language.variables import TypedValue

__all__ = [
    "Actor",
    "acting",
    "current",
    "record",
    "record_on",
    "record_variables",
    "require_transaction",
    "variable_values",
]


def record(
    tx: Tx,
    operation: AuditOperation,
    entity: AuditEntity,
    *,
    entity_id: str | None = None,
    instance_id: UUID | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    property: str | None = None,
    before: Any = None,
    after: Any = None,
    annotation: str | None = None,
    details: Any = None,
) -> UUID | None:
    """Write one audit entry for the transaction's actor; the entry's id, or None when nobody
    acts (nothing is written). Values are JSON-native (before/after of a variable, details)."""
    require_transaction(tx)
    actor = tx.actor
    if actor is None:
        return None
    return audit_store.insert_entry(
        tx.conn,
        tx.now,
        actor,
        operation=operation,
        entity=entity,
        entity_id=entity_id,
        instance_id=instance_id,
        definition_id=definition_id,
        definition_key=definition_key,
        property=property,
        before=before,
        after=after,
        annotation=annotation,
        details=details,
    )


def require_transaction(tx: Tx) -> None:
    """An optimistic command that is audited calls this before it writes: with an actor, its
    entry needs the command's own transaction, so the attempt runs again under the lock."""
    if tx.actor is not None and tx.optimistic:
        raise NeedsTransaction()


def record_on(
    tx: Tx,
    run: InstanceRun,
    operation: AuditOperation,
    entity: AuditEntity,
    **fields: Any,
) -> UUID | None:
    """`record` for a mutation of the instance `run`: its id, definition and key filled in."""
    return record(
        tx,
        operation,
        entity,
        instance_id=run.instance.id,
        definition_id=run.instance.definition_id,
        definition_key=run.instance.definition_key,
        **fields,
    )


def variable_values(scope: Mapping[str, TypedValue], names: Iterable[str]) -> dict[str, Any]:
    """The JSON values of those of `names` that `scope` holds (a name it lacks is left out)."""
    return {name: scope[name].to_json() for name in names if name in scope}


def record_variables(
    tx: Tx,
    run: InstanceRun,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    entity_id: str | None = None,
    details: Any = None,
) -> UUID | None:
    """One entry for a change of variables: `before` holds the values the changed names had
    (a name that did not exist is left out), `after` the values they have now (a removed one is
    left out). One name: `property` is the name and before/after are its values; several: the
    two maps. Removals only: RemoveVariable; no name existed before: SetVariable; else
    ModifyVariable."""
    names = list(dict.fromkeys([*before, *after]))
    if not names:
        return None
    if not after:
        operation = AuditOperation.REMOVE_VARIABLE
    elif not before:
        operation = AuditOperation.SET_VARIABLE
    else:
        operation = AuditOperation.MODIFY_VARIABLE
    if len(names) == 1:
        [name] = names
        return record_on(
            tx,
            run,
            operation,
            AuditEntity.VARIABLE,
            entity_id=entity_id,
            property=name,
            before=before.get(name),
            after=after.get(name),
            details=details,
        )
    return record_on(
        tx,
        run,
        operation,
        AuditEntity.VARIABLE,
        entity_id=entity_id,
        before=dict(before),
        after=dict(after),
        details=details,
    )
