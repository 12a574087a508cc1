"""The comments and attachments of a user task the request's principal may read (the task's
own grants and its definition's, as for the task)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, fetch_one, query
from engine.sql import covers
from engine.sql.filters import Where

# A note of a task `t` of an instance `p`.
_OF_TASK = (
    " JOIN user_task t ON t.id = n.task_id LEFT JOIN process_instance p ON p.id = t.instance_id"
)


def _readable(task_ids: UUID | Sequence[UUID], note_id: UUID | None = None) -> Where:
    """The notes of the task (or tasks) the principal may read; with `note_id`, only that
    one."""
    where = Where()
    if isinstance(task_ids, UUID):
        where.equals("n.task_id", task_ids)
    else:
        where.any_of("n.task_id", list(task_ids))
    where.equals("n.id", note_id)
    where.authorized(covers.task("p.definition_key", "t.id", tenant="t.tenant_id"))
    return where


@dataclass(frozen=True)
class CommentRow:
    id: UUID
    task_id: UUID
    instance_id: UUID | None
    user_id: str | None
    at: datetime
    message: str


@query
def comments(
    conn: Connection, task_id: UUID | Sequence[UUID], comment_id: UUID | None = None
) -> list[CommentRow]:
    """The task's comments (or the one `comment_id`; or those of several tasks, one statement
    for a page of them), oldest first."""
    where = _readable(task_id, comment_id)
    statement = (
        sql.SQL(
            "SELECT n.id, n.task_id, n.instance_id, n.user_id, n.at, n.message "
            "FROM task_comment n" + _OF_TASK
        )
        + where.sql()
        + sql.SQL(" ORDER BY n.at, n.id")
    )
    return fetch_all(conn, CommentRow, statement, where.params())


@dataclass(frozen=True)
class AttachmentRow:
    id: UUID
    task_id: UUID
    instance_id: UUID | None
    user_id: str | None
    created_at: datetime
    name: str | None
    description: str | None
    type: str | None
    url: str | None
    size: int | None


@query
def attachments(
    conn: Connection, task_id: UUID | Sequence[UUID], attachment_id: UUID | None = None
) -> list[AttachmentRow]:
    """The task's attachments (or the one `attachment_id`; or those of several tasks), oldest
    first, without their
    content (`size`: its length in bytes, None without content)."""
    where = _readable(task_id, attachment_id)
    statement = (
        sql.SQL(
            "SELECT n.id, n.task_id, n.instance_id, n.user_id, n.created_at, n.name, "
            "n.description, n.type, n.url, octet_length(n.content) AS size "
            "FROM task_attachment n" + _OF_TASK
        )
        + where.sql()
        + sql.SQL(" ORDER BY n.created_at, n.id")
    )
    return fetch_all(conn, AttachmentRow, statement, where.params())


@dataclass(frozen=True)
class AttachmentContent:
    name: str | None
    type: str | None
    content: bytes | None


@query
def attachment_content(
    conn: Connection, task_id: UUID, attachment_id: UUID
) -> AttachmentContent | None:
    """The attachment's bytes (None: no such attachment the principal may read)."""
    where = _readable(task_id, attachment_id)
    statement = (
        sql.SQL("SELECT n.name, n.type, n.content FROM task_attachment n" + _OF_TASK) + where.sql()
    )
    return fetch_one(conn, AttachmentContent, statement, where.params())
