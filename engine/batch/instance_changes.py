"""The batch operations that change instances the way an operator's single command does:
`modify` (one modification, the same for every instance) and `migrate` (one migration plan).
Registered on import by engine/batch/operations.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from engine.batch.registry import BatchOperation, register
from engine.commands.migration import MigrateInstance, check_plan
from engine.commands.modification import from_spec, to_spec
from engine.core.executor import Tx
from engine.errors import BadRequest
from engine.semantics import modification
from engine.semantics.migration import MigrationPlan
from engine.states import BatchType
from engine.store.migration import models_of

# An instance id no instance has: the spec is read once, for no instance, to check it.
_NO_INSTANCE = UUID(int=0)


def _modification(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The modification spec (engine/commands/modification.py `to_spec`), each part checked."""
    instructions = payload.get("instructions")
    if not isinstance(instructions, list) or not instructions:
        raise BadRequest("instructions must be a non-empty list", field="instructions")
    for index, entry in enumerate(instructions):
        if not isinstance(entry, Mapping):
            raise BadRequest(f"instructions[{index}] must be an object", field="instructions")
        try:
            modification.from_spec(dict(entry))
        except BadRequest as exc:
            raise BadRequest(f"instructions[{index}]: {exc.message}", field="instructions") from exc
    for flag in ("skipCustomListeners", "skipIoMappings"):
        if not isinstance(payload.get(flag, False), bool):
            raise BadRequest(f"{flag} must be a boolean", field=flag)
    annotation = payload.get("annotation")
    if annotation is not None and not isinstance(annotation, str):
        raise BadRequest("annotation must be a string", field="annotation")
    definition_id = payload.get("processDefinitionId")
    if definition_id is not None and (not isinstance(definition_id, str) or not definition_id):
        raise BadRequest("processDefinitionId must be a definition id", field="processDefinitionId")
    return to_spec(from_spec(_NO_INSTANCE, dict(payload)))


def _modify(tx: Tx, item: str, payload: Mapping[str, Any]) -> None:
    """The modification, of an instance of `processDefinitionId` when the payload names one."""
    from_spec(UUID(item), dict(payload)).execute(tx)


def _plan(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The migration plan (Camunda's MigrationPlanDto), read as `MigrationPlan.from_json`."""
    return MigrationPlan.from_json(payload).to_json()


def _plan_valid(tx: Tx, payload: Mapping[str, Any]) -> None:
    """The plan's definitions exist and its instructions can apply (MigrationInvalid naming the
    failures): a plan no instance could follow makes no batch."""
    plan = MigrationPlan.from_json(payload)
    check_plan(plan, models_of(tx.conn, tx.definitions, plan))


def _migrate(tx: Tx, item: str, payload: Mapping[str, Any]) -> None:
    MigrateInstance(UUID(item), MigrationPlan.from_json(payload)).execute(tx)


register(
    BatchOperation(
        BatchType.MODIFY,
        "Modify instances",
        "process instance",
        _modify,
        _modification,
    )
)
register(
    BatchOperation(
        BatchType.MIGRATE,
        "Migrate instances",
        "process instance",
        _migrate,
        _plan,
        validate=_plan_valid,
    )
)
