"""Instance modification: cancel tokens and start new ones, in one transaction under the
instance's lock, audited (engine/semantics/modification.py says what each instruction does).

`PreviewModification` runs the same checks and moves and answers where the tokens would be,
writing nothing: the instance is not persisted and whatever a handler wrote on the way is rolled
back to a savepoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import advance, persist_audited, require_running
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.permits import UPDATE_INSTANCE, Permit, check
from engine.core.runtime import InstanceRun
from engine.errors import Conflict
from engine.semantics import modification
from engine.semantics.modification import Instruction, Modification, positions
from engine.states import AuditEntity, AuditOperation
from engine.store import savepoints

PREVIEW_SAVEPOINT = "modification_preview"


@dataclass(frozen=True)
class ModificationResult(Result):
    instance_id: str
    state: str
    # Live tokens per node once the instructions applied.
    tokens: dict[str, int]


@dataclass(frozen=True)
class _Modification:
    result_type: ClassVar[type[Result]] = ModificationResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    instance_id: UUID
    instructions: tuple[Instruction, ...]
    skip_custom_listeners: bool = False
    skip_io_mappings: bool = False
    # The definition the instance must be an instance of (Camunda's processDefinitionId).
    definition_id: str | None = field(default=None, kw_only=True)

    def _apply(self, tx: Tx) -> tuple[InstanceRun, ModificationResult]:
        run = load(tx, self.instance_id)
        check(tx, UPDATE_INSTANCE, instance=run.instance.id, definition=run.instance.definition_key)
        if self.definition_id is not None and run.instance.definition_id != self.definition_id:
            raise Conflict(
                f"process instance {self.instance_id} is an instance of "
                f"{run.instance.definition_id}, not of the modification's process definition "
                f"{self.definition_id}"
            )
        require_running(run)
        run.skip_io_mappings = self.skip_io_mappings
        moves = advance(tx, run)
        moves.scripts.skip_listeners = self.skip_custom_listeners
        Modification(moves).apply(self.instructions)
        result = ModificationResult(
            str(run.instance.id), run.instance.state.value, positions(moves)
        )
        return run, result

    def details(self) -> dict[str, Any]:
        return {
            "instructions": [instruction.describe() for instruction in self.instructions],
            "skipCustomListeners": self.skip_custom_listeners,
            "skipIoMappings": self.skip_io_mappings,
        }


@dataclass(frozen=True)
class ModifyInstance(_Modification):
    """Apply `instructions` in order; refused whole (nothing written) if any cannot apply."""

    name: ClassVar[str] = "ModifyInstance"

    annotation: str | None = None

    def execute(self, tx: Tx) -> ModificationResult:
        run, result = self._apply(tx)
        persist_audited(
            tx,
            run,
            AuditOperation.MODIFY_INSTANCE,
            AuditEntity.PROCESS_INSTANCE,
            entity_id=str(run.instance.id),
            annotation=self.annotation,
            details=self.details(),
        )
        return result


def to_spec(command: ModifyInstance) -> dict[str, Any]:
    """`command` but its instance as JSON: what a batch stores to modify each of its instances
    alike (`from_spec` makes the command for one)."""
    return {
        "instructions": [modification.to_spec(i) for i in command.instructions],
        "skipCustomListeners": command.skip_custom_listeners,
        "skipIoMappings": command.skip_io_mappings,
        "annotation": command.annotation,
        "processDefinitionId": command.definition_id,
    }


def from_spec(instance_id: UUID, spec: dict[str, Any]) -> ModifyInstance:
    """The modification `to_spec` stored, for the instance `instance_id`."""
    return ModifyInstance(
        instance_id,
        tuple(modification.from_spec(entry) for entry in spec["instructions"]),
        bool(spec.get("skipCustomListeners", False)),
        bool(spec.get("skipIoMappings", False)),
        annotation=spec.get("annotation"),
        definition_id=spec.get("processDefinitionId"),
    )


@dataclass(frozen=True)
class PreviewModification(_Modification):
    """Where the tokens would be after `instructions`, with nothing written."""

    name: ClassVar[str] = "PreviewModification"

    def execute(self, tx: Tx) -> ModificationResult:
        savepoints.begin(tx.conn, PREVIEW_SAVEPOINT)
        _, result = self._apply(tx)
        savepoints.roll_back(tx.conn, PREVIEW_SAVEPOINT)
        return result
