"""User-task rows outside the instance run: look-ups by id and queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

_COLUMNS = "id, instance_id, token_id, node_id, name, state, created_at, ended_at"


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


def instance_of(conn: psycopg.Connection[Any], task_id: UUID) -> UUID | None:
    row = conn.execute("SELECT instance_id FROM user_task WHERE id = %s", (task_id,)).fetchone()
    return row[0] if row else None


def get(conn: psycopg.Connection[Any], task_id: UUID) -> TaskRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM user_task WHERE id = %s", (task_id,)).fetchone()
    return TaskRow(*row) if row else None


def query(
    conn: psycopg.Connection[Any],
    *,
    instance_id: UUID | None = None,
    state: str | None = "Open",
    limit: int = 1000,
) -> list[TaskRow]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM user_task "
        "WHERE (%(instance)s::uuid IS NULL OR instance_id = %(instance)s) "
        "AND (%(state)s::text IS NULL OR state = %(state)s) "
        "ORDER BY created_at, id LIMIT %(limit)s",
        {"instance": instance_id, "state": state, "limit": limit},
    ).fetchall()
    return [TaskRow(*row) for row in rows]
