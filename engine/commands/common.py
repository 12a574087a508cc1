"""What most instance commands share besides loading (engine/commands/loading.py): advance the
loaded instance, check that it runs, check an operator's retries, and persist what the command
changed (with the operator's audit entry)."""

from __future__ import annotations

from typing import Any

from engine.commands.family import Family, settle_and_save
from engine.commands.loading import model_of, new_advance
from engine.core import audit
from engine.core.executor import Tx
from engine.core.runtime import InstanceRun
from engine.errors import BadRequest, Conflict, InterlockError, Suspended
from engine.semantics import Advance, waits
from engine.states import AuditEntity, AuditOperation, InstanceState


def advance(tx: Tx, run: InstanceRun) -> Advance:
    return new_advance(tx, run, model_of(tx, run))


def require_running(run: InstanceRun) -> None:
    """Commands that move tokens need an active instance."""
    state = run.instance.state
    if state is InstanceState.SUSPENDED:
        raise Suspended(
            f"process instance {run.instance.id} is suspended", instance_id=str(run.instance.id)
        )
    if state.is_final:
        raise Conflict(
            f"process instance {run.instance.id} is already {state.value}",
            instance_id=str(run.instance.id),
            state=state.value,
        )


def persist(tx: Tx, *runs: InstanceRun) -> None:
    """Apply what the advances asked of other instances (engine/commands/family.py), then queue
    the write of the changes to every instance the command touched; it travels with the
    commit."""
    settle_and_save(tx, Family(tx, runs))


def persist_audited(
    tx: Tx, run: InstanceRun, operation: AuditOperation, entity: AuditEntity, **fields: Any
) -> None:
    """`persist`, then record the operator's action on the instance (engine/core/audit.py)."""
    persist(tx, run)
    audit.record_on(tx, run, operation, entity, **fields)


def check_retries(retries: int, negative: type[InterlockError] = BadRequest) -> None:
    """Retries a caller sets: not negative (a `negative` error otherwise), at most
    MAX_RETRIES."""
    if retries < 0:
        raise negative("retries cannot be negative")
    if retries > waits.MAX_RETRIES:
        raise BadRequest(f"retries must be at most {waits.MAX_RETRIES}", field="retries")
