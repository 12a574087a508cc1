"""Reads of variables by scope: what a user task sees (its locals and every enclosing scope's),
and Camunda's variable-instance query over every scope of every instance.

A variable row's scope_key is '' for an instance's root scope, else the id of the token that
owns it (a token at a task, a subprocess's scope token). As the activity-instance tree shows
them, the root scope's execution and activity instance are the instance itself; an owner token's
execution is the token, its activity instance the token's open visit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import RUNNING_STATES, CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import TaskState


@dataclass(frozen=True)
class TaskVariable:
    name: str
    type: str
    value: Any
    # 0: the task's own activity instance; 1, 2, ...: enclosing scopes outwards; None: the root.
    depth: int | None


@query
def task_variables(
    conn: Connection, task_id: UUID, *, local: bool
) -> dict[str, tuple[str, Any]] | None:
    """The variables an open user task sees, inner names hiding outer ones (`local`: only its
    own), as {name: (type, stored value)}; None when the task is not open."""
    params = {"task": task_id, "open": TaskState.OPEN.value}
    if not conn.execute(
        "SELECT 1 FROM user_task WHERE id = %(task)s AND state = %(open)s", params
    ).fetchone():
        return None
    rows = fetch_all(
        conn,
        TaskVariable,
        "WITH RECURSIVE chain(id, scope_id, depth) AS ("
        "  SELECT t.id, t.scope_id, 0 FROM user_task u JOIN token t ON t.id = u.token_id"
        "  WHERE u.id = %(task)s AND u.state = %(open)s"
        "  UNION ALL"
        "  SELECT p.id, p.scope_id, c.depth + 1 FROM chain c JOIN token p ON p.id = c.scope_id"
        ") "
        "SELECT v.name, v.type, v.value, c.depth FROM user_task u "
        "JOIN variable v ON v.instance_id = u.instance_id "
        "LEFT JOIN chain c ON v.scope_key = c.id::text "
        "WHERE u.id = %(task)s AND u.state = %(open)s "
        "AND (v.scope_key = '' OR c.id IS NOT NULL) "
        "ORDER BY v.name",
        params,
    )
    seen: dict[str, tuple[int, tuple[str, Any]]] = {}
    for row in rows:
        if local and row.depth != 0:
            continue
        rank = row.depth if row.depth is not None else 1 << 30
        if row.name not in seen or rank < seen[row.name][0]:
            seen[row.name] = (rank, (row.type, row.value))
    return {name: found for name, (_, found) in sorted(seen.items())}


@dataclass(frozen=True)
class VariableInstanceRow:
    instance_id: UUID
    definition_id: str
    scope_key: str
    name: str
    type: str
    value: Any
    execution_id: UUID
    activity_instance_id: UUID


VARIABLE_INSTANCE_SORT: dict[str, LiteralString] = {
    "variableName": "v.name",
    "variableType": "v.type",
    "activityInstanceId": "activity_instance_id",
}

EXECUTION: LiteralString = "COALESCE(t.id, v.instance_id)"
ACTIVITY_INSTANCE: LiteralString = (
    "CASE WHEN v.scope_key = '' THEN v.instance_id ELSE COALESCE(t.visit_id, t.id) END"
)
# Every variable row with its instance (p) and, for a local, its owner token (t).
VARIABLE_SOURCE: LiteralString = (
    "FROM variable v JOIN process_instance p ON p.id = v.instance_id "
    "LEFT JOIN token t ON v.scope_key <> '' AND t.id = CAST(NULLIF(v.scope_key, '') AS uuid)"
)


@query
def variable_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    instance_ids: Sequence[UUID] | None = None,
    execution_ids: Sequence[UUID] | None = None,
    activity_instance_ids: Sequence[UUID] | None = None,
    scope_ids: Sequence[UUID] | None = None,
    names: Sequence[str] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    definition_ids: Sequence[str] | None = None,
    count: bool = False,
) -> list[VariableInstanceRow] | int:
    """Variable rows of every scope of running instances (Camunda's runtime forgets ended
    ones), with Camunda's filters (a list filter matches any of its values; an empty list
    matches nothing)."""
    where = Where()
    where.any_of("p.state", RUNNING_STATES)
    where.any_of("v.instance_id", instance_ids)
    where.any_of(EXECUTION, execution_ids)
    where.any_of(EXECUTION, scope_ids)
    where.any_of(ACTIVITY_INSTANCE, activity_instance_ids)
    where.any_of("v.name", names)
    where.any_of("p.definition_id", definition_ids)
    where.equals("v.name", name)
    where.like("v.name", name_like)
    source = sql.SQL(VARIABLE_SOURCE)
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT v.instance_id, p.definition_id, v.scope_key, v.name, v.type, v.value, "
            f"{EXECUTION} AS execution_id, {ACTIVITY_INSTANCE} AS activity_instance_id "
        )
        + source
        + where.sql()
        + order_by(page.sort, VARIABLE_INSTANCE_SORT, "v.instance_id, v.scope_key, v.name")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, VariableInstanceRow, statement, where.params())
