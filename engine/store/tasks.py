"""User-task rows outside the instance run: look-ups by id and queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

import psycopg

from engine.sql import covers
from engine.sql.filters import Where
from engine.states import TaskState
from engine.store.columns import fetch_where, where_state

# The node id a read gives a standalone task, which has none (its column is null).
NODELESS = ""
NODE_ID: LiteralString = "coalesce(t.node_id, '')"
_COLUMNS = (
    "t.id, t.instance_id, t.token_id, coalesce(t.node_id, '') AS node_id, t.name, t.state, "
    "t.created_at, t.ended_at, t.assignee, t.candidate_users, t.candidate_groups, t.due_at, "
    "t.priority, p.definition_id, p.definition_key, p.business_key"
)
# A standalone task (no instance) has no instance row: its definition and business key are null.
_FROM = "user_task t LEFT JOIN process_instance p ON p.id = t.instance_id"

# A task `{}` (a user's id) is a candidate for: named among its candidate users, or one of its
# candidate groups is a group the user is a member of (joined in SQL). The one declaration of the
# condition: /engine-rest's `candidateUser` and the inbox's "my groups' tasks" both use it. The
# array operators match the partial GIN indexes on the open tasks' candidates.
CANDIDATE_OF: LiteralString = (
    "(t.candidate_users @> ARRAY[{}]::text[] OR t.candidate_groups && ARRAY("
    "SELECT m.group_id FROM group_membership m WHERE m.user_id = {}))"
)
# The tasks `{}` holds, and the unassigned ones they are a candidate for (the inbox's default).
HELD_OR_CANDIDATE_OF: LiteralString = (
    "(t.assignee = {} OR (t.assignee IS NULL AND " + CANDIDATE_OF + "))"
)


@dataclass(frozen=True)
class TaskRow:
    """A user task; a standalone task's instance, token and definition are None, its node id
    '' (NODELESS)."""

    id: UUID
    instance_id: UUID | None
    token_id: UUID | None
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
    definition_id: str | None
    definition_key: str | None
    business_key: str | None


# The tasks the request's principal may read.
READABLE = covers.task("p.definition_key", "t.id", tenant="t.tenant_id")


def get(conn: psycopg.Connection[Any], task_id: UUID, *, readable: bool = False) -> TaskRow | None:
    """The task; with `readable`, only if the request's principal may read it."""
    where = Where()
    where.equals("t.id", task_id)
    if readable:
        where.authorized(READABLE)
    found = fetch_where(conn, TaskRow, f"SELECT {_COLUMNS} FROM {_FROM}", where, "t.id", 1)
    return found[0] if found else None


def query(
    conn: psycopg.Connection[Any],
    *,
    instance_id: UUID | None = None,
    state: str | None = TaskState.OPEN,
    definition_key: str | None = None,
    assignee: str | None = None,
    candidate_user: str | None = None,
    candidate_group: str | None = None,
    candidate_of: str | None = None,
    held_or_candidate_of: str | None = None,
    limit: int = 1000,
    unassigned: bool = False,
    after: tuple[datetime, UUID] | None = None,
) -> list[TaskRow]:
    """Tasks matching the filters, oldest first; `candidate_of`: those the user is a candidate
    for (see CANDIDATE_OF); `held_or_candidate_of`: those the user holds or may claim;
    `unassigned`: only those nobody holds; with
    `after` (created_at, id), only those that come after it (the batches of an export)."""
    where = Where()
    where.equals("t.instance_id", instance_id)
    where_state(where, "t.state", state, TaskState.OPEN)
    where.equals("p.definition_key", definition_key)
    where.equals("t.assignee", assignee)
    where.when(candidate_user, "{} = ANY(t.candidate_users)")
    where.when(candidate_group, "{} = ANY(t.candidate_groups)")
    where.when(candidate_of, CANDIDATE_OF)
    where.when(held_or_candidate_of, HELD_OR_CANDIDATE_OF)
    if unassigned:
        where.fixed("t.assignee IS NULL")
    where.keyset("(t.created_at, t.id)", after, descending=False)
    where.authorized(READABLE)
    return fetch_where(
        conn, TaskRow, f"SELECT {_COLUMNS} FROM {_FROM}", where, "t.created_at, t.id", limit
    )
