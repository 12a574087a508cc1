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
from engine.queries.camunda import (
    LIKE_ESCAPE,
    RUNNING_STATES,
    Page,
    _count,
    _limit,
    _order,
    _Where,
    like_pattern,
)
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

_EXECUTION: LiteralString = "COALESCE(t.id, v.instance_id)"
_ACTIVITY_INSTANCE: LiteralString = (
    "CASE WHEN v.scope_key = '' THEN v.instance_id ELSE COALESCE(t.visit_id, t.id) END"
)
# Every variable row with its instance (p) and, for a local, its owner token (t).
_VARIABLE_SOURCE: LiteralString = (
    "FROM variable v JOIN process_instance p ON p.id = v.instance_id "
    "LEFT JOIN token t ON v.scope_key <> '' AND t.id = CAST(NULLIF(v.scope_key, '') AS uuid)"
)


@query
def variable_instances(
    conn: Connection,
    page: Page,
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
    where = _Where()
    where.add("p.state = ANY({})", list(RUNNING_STATES))
    where.when(_listed(instance_ids), "v.instance_id = ANY({})")
    where.when(_listed(execution_ids), f"{_EXECUTION} = ANY({{}})")
    where.when(_listed(scope_ids), f"{_EXECUTION} = ANY({{}})")
    where.when(_listed(activity_instance_ids), f"{_ACTIVITY_INSTANCE} = ANY({{}})")
    where.when(_listed(names), "v.name = ANY({})")
    where.when(_listed(definition_ids), "p.definition_id = ANY({})")
    where.when(name, "v.name = {}")
    if name_like is not None:
        where.add(f"v.name LIKE {{}} {LIKE_ESCAPE}", like_pattern(name_like))
    source = sql.SQL(_VARIABLE_SOURCE)
    if count:
        return _count(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT v.instance_id, p.definition_id, v.scope_key, v.name, v.type, v.value, "
            f"{_EXECUTION} AS execution_id, {_ACTIVITY_INSTANCE} AS activity_instance_id "
        )
        + source
        + where.clause()
        + _order(page, VARIABLE_INSTANCE_SORT, "v.instance_id, v.scope_key, v.name")
        + _limit(where, page)
    )
    return fetch_all(conn, VariableInstanceRow, statement, where.params)


def _listed(values: Sequence[Any] | None) -> list[Any] | None:
    return None if values is None else list(values)
