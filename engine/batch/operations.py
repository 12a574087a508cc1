"""The built-in batch operations: each item is one existing operator command, run in the chunk's
transaction (engine/commands/batches.py), so it is audited like the command run by hand, with the
batch's id on its entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from engine.batch.registry import BatchOperation, ItemRun, register
from engine.commands.external_tasks import SetExternalTaskRetries
from engine.commands.incidents import RetryIncident
from engine.commands.instances import (
    CancelInstance,
    ResumeInstance,
    SetVariables,
    SuspendInstance,
)
from engine.commands.job_retries import SetJobRetries
from engine.core import audit
from engine.core.executor import Command, Tx
from engine.core.permits import DELETE_HISTORY, check
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.variables import TypedValue, check_name, infer, typed
from engine.semantics import waits
from engine.states import AuditEntity, AuditOperation, BatchType, InstanceState
from engine.store import cleanup
from engine.store import instance_reads as queries


def _retries(payload: Mapping[str, Any]) -> dict[str, Any]:
    retries = payload.get("retries")
    if isinstance(retries, bool) or not isinstance(retries, int):
        raise BadRequest("retries must be a whole number", field="retries")
    if not 0 <= retries <= waits.MAX_RETRIES:
        raise BadRequest(f"retries must be between 0 and {waits.MAX_RETRIES}", field="retries")
    return {"retries": retries}


def _reason(payload: Mapping[str, Any]) -> dict[str, Any]:
    """An optional `deleteReason`, kept with the batch for the record."""
    reason = payload.get("deleteReason")
    if reason is None:
        return {}
    if not isinstance(reason, str):
        raise BadRequest("deleteReason must be a string", field="deleteReason")
    return {"deleteReason": reason[:2000]}


def _variable(name: str, given: Any) -> TypedValue:
    """A variable as a batch keeps it: {"value": ..., "type": ...} (type optional)."""
    if not isinstance(given, Mapping) or "value" not in given:
        raise BadRequest(
            f"variable {name!r} must be an object with a value (and optionally a type)",
            field="variables",
        )
    kind = given.get("type")
    if kind is not None and not isinstance(kind, str):
        raise BadRequest(f"the type of variable {name!r} must be a string", field="variables")
    try:
        return typed(kind, given["value"]) if kind else infer(given["value"])
    except BadRequest as exc:
        raise BadRequest(f"variable {name!r}: {exc.message}", field="variables") from exc


def _named(name: Any, field: str) -> str:
    try:
        check_name(name)
    except BadRequest as exc:
        raise BadRequest(exc.message, field=field) from exc
    return str(name)


def _variables(payload: Mapping[str, Any]) -> dict[str, Any]:
    """`variables` to set ({name: {"value", "type"?}}) and `remove`, names to delete; at least
    one of them. Every value is checked against its type now, not item after item."""
    given = payload.get("variables") or {}
    removals = payload.get("remove") or []
    if not isinstance(given, Mapping):
        raise BadRequest("variables must be a non-empty object", field="variables")
    if not isinstance(removals, list):
        raise BadRequest("remove must be a list of variable names", field="remove")
    if not given and not removals:
        raise BadRequest(
            "variables must be a non-empty object (or name variables to remove)",
            field="variables",
        )
    kept: dict[str, Any] = {}
    for name, value in given.items():
        _named(name, "variables")
        checked = _variable(name, value)
        kept[name] = {"value": value["value"], "type": value.get("type") or checked.type}
    removed = list(dict.fromkeys(_named(name, "remove") for name in removals))
    for name in removed:
        if name in kept:
            raise BadRequest(f"variable {name!r} is both set and removed", field="remove")
    return {"variables": kept, **({"remove": removed} if removed else {})}


def _set_variables(tx: Tx, item: str, payload: Mapping[str, Any]) -> None:
    """Set and remove the variables in the instance's root scope: one SetVariables, audited
    with the values before and after."""
    variables = {name: _variable(name, v) for name, v in payload["variables"].items()}
    removals = tuple(payload.get("remove", ()))
    SetVariables(UUID(item), variables, removals).execute(tx)


def _delete_history(tx: Tx, item: str, payload: Mapping[str, Any]) -> None:
    """Delete an ended root instance and everything it called, with every row of theirs, as the
    history cleanup deletes a family past its time to live."""
    instance_id = UUID(item)
    row = queries.instance(tx.conn, instance_id)
    if row is None:
        raise NotFound(f"process instance {instance_id} does not exist")
    if row.super_instance_id is not None:
        raise Conflict(
            f"process instance {instance_id} was called by {row.super_instance_id}: "
            "delete its root's history"
        )
    if not InstanceState(row.state).is_final:
        raise Conflict(f"process instance {instance_id} has not ended ({row.state})")
    check(tx, DELETE_HISTORY, definition=row.definition_key)
    family = cleanup.lock_family(tx.conn, instance_id)
    if family is None:
        raise Conflict(f"an instance called by process instance {instance_id} has not ended")
    cleanup.delete_instances(tx.conn, family)
    audit.record(
        tx,
        AuditOperation.DELETE_HISTORY,
        AuditEntity.HISTORY,
        entity_id=str(instance_id),
        instance_id=instance_id,
        definition_id=row.definition_id,
        definition_key=row.definition_key,
        details={"instances": len(family)},
    )


def _each(make: Callable[[UUID, Mapping[str, Any]], Command[Any]]) -> ItemRun:
    """Run the command `make` gives for each item, in the chunk's transaction."""

    def run(tx: Tx, item: str, payload: Mapping[str, Any]) -> None:
        make(UUID(item), payload).execute(tx)

    return run


register(
    BatchOperation(
        BatchType.RETRY_INCIDENTS,
        "Retry incidents",
        "incident",
        _each(lambda item, payload: RetryIncident(item)),
    )
)
register(
    BatchOperation(
        BatchType.SET_JOB_RETRIES,
        "Set job retries",
        "job",
        _each(lambda item, payload: SetJobRetries(item, payload["retries"])),
        _retries,
    )
)
register(
    BatchOperation(
        BatchType.SET_EXTERNAL_TASK_RETRIES,
        "Set external task retries",
        "external task",
        _each(lambda item, payload: SetExternalTaskRetries(item, payload["retries"])),
        _retries,
    )
)
register(
    BatchOperation(
        BatchType.CANCEL_INSTANCES,
        "Cancel instances",
        "process instance",
        _each(lambda item, payload: CancelInstance(item)),
        _reason,
    )
)
register(
    BatchOperation(
        BatchType.SUSPEND_INSTANCES,
        "Suspend instances",
        "process instance",
        _each(lambda item, payload: SuspendInstance(item)),
    )
)
register(
    BatchOperation(
        BatchType.RESUME_INSTANCES,
        "Resume instances",
        "process instance",
        _each(lambda item, payload: ResumeInstance(item)),
    )
)
register(
    BatchOperation(
        BatchType.SET_VARIABLES,
        "Set variables",
        "process instance",
        _set_variables,
        _variables,
    )
)
register(
    BatchOperation(
        BatchType.DELETE_HISTORY,
        "Delete history",
        "ended process instance",
        _delete_history,
        _reason,
    )
)

from engine.batch import instance_changes  # noqa: E402, F401  (registers modify and migrate)
