"""Comments and attachments of an open user task, as Camunda's task comments and attachments:
add a comment, add an attachment (a file's bytes or a link), delete an attachment. Each is a row
of the task's instance (of none for a standalone task), written in the command's transaction with
its audit entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from uuid import UUID

from engine.commands import standalone_tasks
from engine.commands.common import persist
from engine.commands.standalone_tasks import StandaloneTaskRow
from engine.commands.tasks import load_open, task_check
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import UPDATE_TASK, WORK_ON_TASK, Permit
from engine.db.ids import new_id
from engine.errors import BadRequest, NotFound
from engine.states import AuditEntity, AuditOperation, OutboxEvent, TaskState
from engine.store import task_notes

__all__ = ["AddTaskAttachment", "AddTaskComment", "DeleteTaskAttachment", "NoteResult"]

# The longest comment kept (Camunda's column holds 4,000 characters of a comment's message).
MAX_COMMENT = 4000


@dataclass(frozen=True)
class NoteResult(Result):
    """The comment or attachment added (or deleted), its task and instance."""

    id: str
    task_id: str
    instance_id: str


def _standalone(tx: Tx, task_id: UUID, permit: Permit) -> StandaloneTaskRow | None:
    """The open standalone task `task_id`, locked and its permit checked; None when the id is not
    a standalone task's (a task of an instance, or none: load_open says which)."""
    alone = standalone_tasks.locked(tx, task_id)
    if alone is None:
        return None
    if alone.state != TaskState.OPEN:
        raise NotFound(f"user task {task_id} is not open", task_id=str(task_id))
    standalone_tasks.check_on(tx, permit, alone)
    return alone


def _audit_standalone(
    tx: Tx,
    operation: AuditOperation,
    task: StandaloneTaskRow,
    property: str,
    after: str | None,
    before: UUID | None = None,
) -> None:
    audit.record(
        tx,
        operation,
        AuditEntity.TASK,
        entity_id=str(task.id),
        property=property,
        before=None if before is None else str(before),
        after=after,
    )


@dataclass(frozen=True)
class AddTaskComment:
    """Camunda's createComment on a task: needs TASK_WORK (or being its assignee)."""

    name: ClassVar[str] = "AddTaskComment"
    result_type: ClassVar[type[Result]] = NoteResult
    permits: ClassVar[tuple[Permit, ...]] = (WORK_ON_TASK,)

    task_id: UUID
    message: str

    def execute(self, tx: Tx) -> NoteResult:
        if not self.message.strip():
            raise BadRequest("a comment needs a message", field="message")
        if len(self.message) > MAX_COMMENT:
            raise BadRequest(f"a comment holds at most {MAX_COMMENT} characters", field="message")
        comment_id = new_id()
        user = tx.actor.user if tx.actor is not None else None
        alone = _standalone(tx, self.task_id, WORK_ON_TASK)
        if alone is not None:
            task_notes.insert_comment(
                tx.conn, comment_id, alone.id, None, user, tx.now, self.message
            )
            _audit_standalone(tx, AuditOperation.ADD_COMMENT, alone, "comment", str(comment_id))
            return NoteResult(str(comment_id), str(alone.id), "")
        run, task = load_open(tx, self.task_id)
        task_check(tx, WORK_ON_TASK, run, task)
        task_notes.insert_comment(
            tx.conn, comment_id, task.id, run.instance.id, user, tx.now, self.message
        )
        run.emit(OutboxEvent.TASK_UPDATED, run.tokens.get(task.token_id))
        persist(tx, run)
        audit.record_on(
            tx,
            run,
            AuditOperation.ADD_COMMENT,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property="comment",
            after=str(comment_id),
        )
        return NoteResult(str(comment_id), str(task.id), str(run.instance.id))


@dataclass(frozen=True)
class AddTaskAttachment:
    """Camunda's createAttachment on a task: a file's `content` or a `url` (or neither, a note
    with a name), with a name, description and type. Needs UPDATE on the task."""

    name: ClassVar[str] = "AddTaskAttachment"
    result_type: ClassVar[type[Result]] = NoteResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_TASK,)

    task_id: UUID
    attachment_name: str | None = None
    description: str | None = None
    type: str | None = None
    url: str | None = None
    content: bytes | None = None

    def execute(self, tx: Tx) -> NoteResult:
        attachment_id = new_id()
        user = tx.actor.user if tx.actor is not None else None
        fields = {
            "name": self.attachment_name,
            "description": self.description,
            "type": self.type,
            "url": self.url,
            "content": self.content,
        }
        alone = _standalone(tx, self.task_id, UPDATE_TASK)
        if alone is not None:
            task_notes.insert_attachment(
                tx.conn, attachment_id, alone.id, None, user, tx.now, fields
            )
            _audit_standalone(
                tx, AuditOperation.ADD_ATTACHMENT, alone, "name", self.attachment_name
            )
            return NoteResult(str(attachment_id), str(alone.id), "")
        run, task = load_open(tx, self.task_id)
        task_check(tx, UPDATE_TASK, run, task)
        task_notes.insert_attachment(
            tx.conn, attachment_id, task.id, run.instance.id, user, tx.now, fields
        )
        run.emit(OutboxEvent.TASK_UPDATED, run.tokens.get(task.token_id))
        persist(tx, run)
        audit.record_on(
            tx,
            run,
            AuditOperation.ADD_ATTACHMENT,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property="name",
            after=self.attachment_name,
        )
        return NoteResult(str(attachment_id), str(task.id), str(run.instance.id))


@dataclass(frozen=True)
class DeleteTaskAttachment:
    """Camunda's deleteTaskAttachment: needs UPDATE on the task."""

    name: ClassVar[str] = "DeleteTaskAttachment"
    result_type: ClassVar[type[Result]] = NoteResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_TASK,)

    task_id: UUID
    attachment_id: UUID

    def execute(self, tx: Tx) -> NoteResult:
        alone = _standalone(tx, self.task_id, UPDATE_TASK)
        if alone is not None:
            if not task_notes.delete_attachment(tx.conn, alone.id, self.attachment_id):
                raise NotFound(
                    f"task {self.task_id} has no attachment {self.attachment_id}",
                    attachment_id=str(self.attachment_id),
                )
            _audit_standalone(
                tx, AuditOperation.DELETE_ATTACHMENT, alone, "attachment", None, self.attachment_id
            )
            return NoteResult(str(self.attachment_id), str(alone.id), "")
        run, task = load_open(tx, self.task_id)
        task_check(tx, UPDATE_TASK, run, task)
        if not task_notes.delete_attachment(tx.conn, task.id, self.attachment_id):
            raise NotFound(
                f"task {self.task_id} has no attachment {self.attachment_id}",
                attachment_id=str(self.attachment_id),
            )
        run.emit(OutboxEvent.TASK_UPDATED, run.tokens.get(task.token_id))
        persist(tx, run)
        audit.record_on(
            tx,
            run,
            AuditOperation.DELETE_ATTACHMENT,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property="attachment",
            before=str(self.attachment_id),
        )
        return NoteResult(str(self.attachment_id), str(task.id), str(run.instance.id))
