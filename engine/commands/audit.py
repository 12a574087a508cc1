"""An operator's note on an audit entry (Camunda's annotation of a user operation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from uuid import UUID

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import ADMINISTER, ANNOTATE_ENTRY, Permit, check
from engine.errors import BadRequest, NotFound
from engine.language.json_input import text_problem
from engine.states import AuditEntity, AuditOperation
from engine.store import audit as store

MAX_ANNOTATION = 4000


@dataclass(frozen=True)
class AnnotationResult(Result):
    entry_id: str


@dataclass(frozen=True)
class AnnotateEntry:
    """Set (None: clear) the annotation of the audit entry `entry_id`. The change is itself an
    entry: SetAnnotation, on the annotated entry's entity and instance, with the annotation
    before and after (the log has no entity of its own for its entries)."""

    name: ClassVar[str] = "AnnotateEntry"
    permits: ClassVar[tuple[Permit, ...]] = (ANNOTATE_ENTRY, ADMINISTER)
    result_type: ClassVar[type[Result]] = AnnotationResult

    entry_id: UUID
    annotation: str | None

    def execute(self, tx: Tx) -> AnnotationResult:
        text = self.annotation
        if text is not None and (len(text) > MAX_ANNOTATION or text_problem(text)):
            raise BadRequest(
                f"an annotation is at most {MAX_ANNOTATION} printable characters",
                field="annotation",
            )
        entry = store.lock_entry(tx.conn, self.entry_id)
        if entry is None:
            raise NotFound(f"audit entry {self.entry_id} does not exist")
        # Camunda's: UPDATE_HISTORY on the entry's process definition; an entry of none (a
        # deployment's, an account's) is an administrator's to annotate.
        if entry.definition_key is not None:
            check(tx, ANNOTATE_ENTRY, definition=entry.definition_key)
        else:
            check(tx, ADMINISTER)
        store.set_annotation(tx.conn, self.entry_id, text)
        audit.record(
            tx,
            AuditOperation.SET_ANNOTATION,
            AuditEntity(entry.entity),
            entity_id=entry.entity_id,
            instance_id=entry.instance_id,
            definition_id=entry.definition_id,
            definition_key=entry.definition_key,
            property="annotation",
            before=entry.annotation,
            after=text,
            details={"entry": str(self.entry_id)},
        )
        return AnnotationResult(str(self.entry_id))
