"""Standalone user tasks (Camunda's POST /task/create): rows of `user_task` with no instance,
token nor node, written and changed by engine/commands/standalone_tasks.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.states import TaskState
from engine.store.columns import fetch_one


@dataclass(frozen=True)
class StandaloneTaskRow:
    id: UUID
    state: str
    assignee: str | None
    owner: str | None
    delegation_state: str | None
    candidate_users: list[str]
    candidate_groups: list[str]
    tenant_id: str | None
    name: str | None
    description: str | None
    priority: int
    due_at: datetime | None
    follow_up_at: datetime | None
    parent_task_id: UUID | None


_COLUMNS = (
    "id, state, assignee, owner, delegation_state, candidate_users, candidate_groups, tenant_id, "
    "name, description, priority, due_at, follow_up_at, parent_task_id"
)
# The details a change writes (Camunda's saveTask, a delegation, a resolution).
DETAILS = (
    "name",
    "description",
    "priority",
    "assignee",
    "owner",
    "delegation_state",
    "due_at",
    "follow_up_at",
    "parent_task_id",
)


def exists(conn: psycopg.Connection[Any], task_id: UUID) -> bool:
    """Whether a user task (of an instance or not) has the id."""
    return conn.execute("SELECT 1 FROM user_task WHERE id = %s", (task_id,)).fetchone() is not None


def insert(
    conn: psycopg.Connection[Any], task_id: UUID, now: datetime, fields: dict[str, Any]
) -> None:
    """A new open standalone task; `fields`: name, description, assignee, owner,
    delegation_state, due_at, follow_up_at, priority, parent_task_id, tenant_id."""
    conn.execute(
        "INSERT INTO user_task (id, instance_id, token_id, node_id, name, state, assignee, "
        "description, owner, delegation_state, follow_up_at, parent_task_id, due_at, priority, "
        "created_at, ended_at, tenant_id) VALUES (%s, NULL, NULL, NULL, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s, %s, %s, NULL, %s)",
        (
            task_id,
            fields["name"],
            TaskState.OPEN,
            fields["assignee"],
            fields["description"],
            fields["owner"],
            fields["delegation_state"],
            fields["follow_up_at"],
            fields["parent_task_id"],
            fields["due_at"],
            fields["priority"],
            now,
            fields["tenant_id"],
        ),
    )


def lock(conn: psycopg.Connection[Any], task_id: UUID) -> StandaloneTaskRow | None:
    """The standalone task, locked until the transaction ends; None when no task of no instance
    has the id."""
    return fetch_one(
        conn,
        StandaloneTaskRow,
        f"SELECT {_COLUMNS} FROM user_task WHERE id = %s AND instance_id IS NULL FOR UPDATE",
        (task_id,),
    )


def set_assignee(conn: psycopg.Connection[Any], task_id: UUID, assignee: str | None) -> None:
    conn.execute("UPDATE user_task SET assignee = %s WHERE id = %s", (assignee, task_id))


def complete(conn: psycopg.Connection[Any], task_id: UUID, now: datetime) -> None:
    conn.execute(
        "UPDATE user_task SET state = %s, ended_at = %s WHERE id = %s",
        (TaskState.COMPLETED, now, task_id),
    )


def set_details(conn: psycopg.Connection[Any], task_id: UUID, details: dict[str, Any]) -> None:
    """Write `details` (names of DETAILS, each to its value) on the standalone task."""
    names = [name for name in DETAILS if name in details]
    if not names:
        return
    sets = ", ".join(f"{name} = %s" for name in names)
    conn.execute(
        f"UPDATE user_task SET {sets} WHERE id = %s",  # names are DETAILS' own
        (*(details[name] for name in names), task_id),
    )
