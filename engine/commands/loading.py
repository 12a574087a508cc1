"""How a command loads an instance: the locked (or snapshotted) run, its model, and the advance
that moves its tokens. engine/commands/family.py loads the other instances of a family with these,
and engine/commands/common.py builds on them."""

from __future__ import annotations

from uuid import UUID

from engine.commands import decisions
from engine.core.executor import Tx
from engine.core.runtime import InstanceRun
from engine.model import ProcessModel
from engine.scripting import ScriptLimits
from engine.semantics import Advance
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
