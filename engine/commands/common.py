"""What most instance commands share: load the locked instance with its model, and persist."""

from __future__ import annotations

from uuid import UUID

from engine.commands import decisions
from engine.errors import Conflict
from engine.executor import Tx
from engine.model import ProcessModel
from engine.runtime import InstanceRun
from engine.scripting import ScriptLimits
from engine.semantics import Advance
from engine.states import InstanceState
from engine.store import runs


def load(
    tx: Tx, key: UUID, extra_token_ids: list[UUID] | None = None, locate: str = runs.BY_ID
) -> InstanceRun:
    """The instance `key` locates (see `runs.load_run`), locked unless the attempt is optimistic.
    An optimistic report on an external task first tries the snapshot its fetch loaded."""
    if tx.optimistic and locate == runs.BY_EXTERNAL_TASK:
        run = tx.snapshots.take(key, tx.now)
        if run is not None:
            tx.from_snapshot = True
            return run
    return runs.load_run(
        tx.conn, key, tx.now, extra_token_ids=extra_token_ids, locate=locate, lock=not tx.optimistic
    )


def model_of(tx: Tx, run: InstanceRun) -> ProcessModel:
    return tx.definitions.get(tx.conn, run.instance.definition_id, run.instance.definition_key)


def advance(tx: Tx, run: InstanceRun) -> Advance:
    return new_advance(tx, run, model_of(tx, run))


def new_advance(tx: Tx, run: InstanceRun, model: ProcessModel) -> Advance:
    return Advance(
        run,
        model,
        tx.handlers,
        tx.conn,
        optimistic=tx.optimistic,
        default_retries=tx.settings.default_retries,
        unhandled_error=tx.settings.unhandled_bpmn_error,
        timer_limits=tx.settings.timer_limits,
        script_limits=ScriptLimits(
            tx.settings.script_timeout_ms / 1000, tx.settings.script_max_memory_bytes
        ),
        decisions=None if tx.optimistic else decisions.evaluator(tx),
    )


def require_running(run: InstanceRun) -> None:
    """Commands that move tokens need an active instance."""
    state = run.instance.state
    if state is InstanceState.SUSPENDED:
        raise Conflict(
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
    from engine.commands.family import Family, settle_and_save  # it loads with this module

    settle_and_save(tx, Family(tx, runs))
