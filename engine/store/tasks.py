"""User-task rows outside the instance run: look-ups by id and queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.states import TaskState
from engine.store.columns import fetch_all, fetch_one

_COLUMNS = (
    "t.id, t.instance_id, t.token_id, t.node_id, t.name, t.state, t.created_at, t.ended_at, "
    "t.assignee, t.candidate_users, t.candidate_groups, t.due_at, t.priority, "
    "p.definition_id, p.definition_key, p.business_key"
)
_FROM = "user_task t JOIN process_instance p ON p.id = t.instance_id"


@dataclass(frozen=True)
class TaskRow:
    id: UUID
    instance_id: UUID
    token_id: UUID
    node_id: str
    name: str | None
    state: str
    created_at: datetime
    ended_at: datetime | None
    assignee: str | None
    candidate_users: list[str]
    candidate_groups: list[str]
    due_at: datetime | None
    priority: int
    definition_id: str
    definition_key: str
    business_key: str | None


def get(conn: psycopg.Connection[Any], task_id: UUID) -> TaskRow | None:
    return fetch_one(conn, TaskRow, f"SELECT {_COLUMNS} FROM {_FROM} WHERE t.id = %s", (task_id,))


def query(
    conn: psycopg.Connection[Any],
    *,
    instance_id: UUID | None = None,
    state: str | None = TaskState.OPEN,
    definition_key: str | None = None,
    assignee: str | None = None,
    candidate_user: str | None = None,
    candidate_group: str | None = None,
    limit: int = 1000,
    unassigned: bool = False,
    after: tuple[datetime, UUID] | None = None,
) -> list[TaskRow]:
    """Tasks matching the filters, oldest first; `unassigned`: only those nobody holds; with
    `after` (created_at, id), only those that come after it (the batches of an export)."""
    after_at, after_id = after or (None, None)
    return fetch_all(
        conn,
        TaskRow,
        f"SELECT {_COLUMNS} FROM {_FROM} "
        "WHERE (%(instance)s::uuid IS NULL OR t.instance_id = %(instance)s) "
        "AND (%(state)s::text IS NULL OR t.state = %(state)s) "
        "AND (%(key)s::text IS NULL OR p.definition_key = %(key)s) "
        "AND (%(assignee)s::text IS NULL OR t.assignee = %(assignee)s) "
        "AND (%(user)s::text IS NULL OR %(user)s = ANY(t.candidate_users)) "
        "AND (%(group)s::text IS NULL OR %(group)s = ANY(t.candidate_groups)) "
        "AND (NOT %(unassigned)s OR t.assignee IS NULL) "
        "AND (%(after_at)s::timestamptz IS NULL "
        "  OR (t.created_at, t.id) > (%(after_at)s, %(after_id)s::uuid)) "
        "ORDER BY t.created_at, t.id LIMIT %(limit)s",
        {
            "instance": instance_id,
            "state": state,
            "key": definition_key,
            "assignee": assignee,
            "user": candidate_user,
            "group": candidate_group,
            "limit": limit,
            "unassigned": unassigned,
            "after_at": after_at,
            "after_id": after_id,
        },
    )
