"""The comments and attachments of user tasks: written by engine/commands/task_notes.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg


def insert_comment(
    conn: psycopg.Connection[Any],
    comment_id: UUID,
    task_id: UUID,
    instance_id: UUID | None,
    user_id: str | None,
    at: datetime,
    message: str,
) -> None:
    conn.execute(
        "INSERT INTO task_comment (id, task_id, instance_id, user_id, at, message) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (comment_id, task_id, instance_id, user_id, at, message),
    )


def insert_attachment(
    conn: psycopg.Connection[Any],
    attachment_id: UUID,
    task_id: UUID,
    instance_id: UUID | None,
    user_id: str | None,
    at: datetime,
    fields: dict[str, Any],
) -> None:
    """`fields`: name, description, type, url and content (each may be None)."""
    conn.execute(
        "INSERT INTO task_attachment (id, task_id, instance_id, user_id, created_at, name, "
        "description, type, url, content) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            attachment_id,
            task_id,
            instance_id,
            user_id,
            at,
            fields.get("name"),
            fields.get("description"),
            fields.get("type"),
            fields.get("url"),
            fields.get("content"),
        ),
    )


def delete_attachment(conn: psycopg.Connection[Any], task_id: UUID, attachment_id: UUID) -> bool:
    """Whether the task had the attachment (it has it no longer)."""
    found = conn.execute(
        "DELETE FROM task_attachment WHERE id = %s AND task_id = %s RETURNING id",
        (attachment_id, task_id),
    )
    return found.fetchone() is not None
