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
from typing import Annotated, Any, LiteralString, TypedDict, Unpack
from uuid import UUID

from psycopg import sql

from engine.language.variables import VariableType
from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import RUNNING_STATES, CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import TaskState
from engine.store.columns import select_list


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
# A local whose owner is no token (the snapshot a compensation event subprocess will see, kept
# under its compensate row's id: engine/semantics/compensation.py) names that owner.
ACTIVITY_INSTANCE: LiteralString = (
    "CASE WHEN v.scope_key = '' THEN v.instance_id "
    "ELSE COALESCE(t.visit_id, t.id, CAST(v.scope_key AS uuid)) END"
)
# Every variable row with its instance (p) and, for a local, its owner token (t).
VARIABLE_SOURCE: LiteralString = (
    "variable v JOIN process_instance p ON p.id = v.instance_id "
    "LEFT JOIN token t ON v.scope_key <> '' AND t.id = CAST(NULLIF(v.scope_key, '') AS uuid)"
)
# The order of variable rows when none is asked, and what breaks ties.
VARIABLE_ORDER: LiteralString = "v.instance_id, v.scope_key, v.name"


def variable_columns(row: type[VariableInstanceRow]) -> str:
    """The select list of `row` (a `VariableInstanceRow` or a row that adds to it) over
    `VARIABLE_SOURCE`."""
    return select_list(
        row,
        [("v", "variable"), ("p", "process_instance")],
        {"execution_id": EXECUTION, "activity_instance_id": ACTIVITY_INSTANCE},
    )


class VariableFilters(TypedDict, total=False):
    """Camunda's filters of variable rows, runtime and historic (None: not filtered; a list
    matches any of its values, an empty one nothing)."""

    instance_ids: Annotated[Sequence[UUID] | None, Filter.any_of("v.instance_id")]
    execution_ids: Annotated[Sequence[UUID] | None, Filter.any_of(EXECUTION)]
    activity_instance_ids: Annotated[Sequence[UUID] | None, Filter.any_of(ACTIVITY_INSTANCE)]
    names: Annotated[Sequence[str] | None, Filter.any_of("v.name")]
    name: Annotated[str | None, Filter.equals("v.name")]
    name_like: Annotated[str | None, Filter.like("v.name")]


class VariableInstanceFilters(VariableFilters, total=False):
    """The runtime's filters of variable rows."""

    scope_ids: Annotated[Sequence[UUID] | None, Filter.any_of(EXECUTION)]
    definition_ids: Annotated[Sequence[str] | None, Filter.any_of("p.definition_id")]


_VARIABLE_INSTANCES = CamundaList(
    VariableInstanceRow,
    variable_columns(VariableInstanceRow),
    VARIABLE_SOURCE,
    VARIABLE_INSTANCE_SORT,
    VARIABLE_ORDER,
    filters_of(VariableInstanceFilters),
    covers=covers.instance("p.definition_key", "v.instance_id", tenant="p.tenant_id"),
)


@query
def variable_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[VariableInstanceFilters],
) -> list[VariableInstanceRow] | int:
    """Variable rows of every scope of running instances (Camunda's runtime forgets ended
    ones), with Camunda's filters."""
    where = Where()
    where.any_of("p.state", RUNNING_STATES)
    return _VARIABLE_INSTANCES.read(conn, page, filters, count=count, where=where)


# -- binary variables by key ----------------------------------------------------------------------


@dataclass(frozen=True)
class VariableKey:
    instance_id: UUID
    scope_key: str
    name: str


# The predicate of the partial index ix_variable_binary (engine/schema.py), spelled as it is so
# that the planner reads the keys from the index; the types are VariableType's BYTES and FILE.
_BINARY: LiteralString = "v.type IN ('bytes', 'file')"
assert {VariableType.BYTES.value, VariableType.FILE.value} == {"bytes", "file"}
_KEY_COLUMNS: LiteralString = "v.instance_id, v.scope_key, v.name"
_RUNTIME_KEYS = CamundaList(
    VariableKey,
    _KEY_COLUMNS,
    VARIABLE_SOURCE,
    {},
    VARIABLE_ORDER,
    filters_of(VariableFilters),
    covers=covers.instance("p.definition_key", "v.instance_id", tenant="p.tenant_id"),
)
_HISTORIC_KEYS = CamundaList(
    VariableKey,
    _KEY_COLUMNS,
    VARIABLE_SOURCE,
    {},
    VARIABLE_ORDER,
    filters_of(VariableFilters),
    covers=covers.history("p.definition_key", "v.instance_id", tenant="p.tenant_id"),
)


@query
def binary_variable_keys(conn: Connection, *, history: bool) -> list[VariableKey]:
    """The keys (never the values) of the Bytes and File variables the principal may read: of
    running instances, or with `history` of every instance as its history shows them. The
    `/data` endpoints find a variable instance's id among these (ids are derived from keys)."""
    where = Where()
    where.fixed(_BINARY)
    if not history:
        where.any_of("p.state", RUNNING_STATES)
    listing = _HISTORIC_KEYS if history else _RUNTIME_KEYS
    rows = listing.read(conn, CamundaPage(first=0, max=None, sort=()), {}, count=False, where=where)
    assert isinstance(rows, list)
    return rows


# -- an export's variable columns -----------------------------------------------------------------


@query
def root_values(
    conn: Connection, instance_ids: Sequence[UUID], names: Sequence[str]
) -> dict[UUID, dict[str, Any]]:
    """The values of the instance-level variables `names` of each of `instance_ids` that the
    principal may read (one statement, by the primary key); a variable an instance lacks is
    absent from its dict."""
    where = Where()
    where.any_of("v.instance_id", list(instance_ids))
    where.fixed("v.scope_key = ''")
    where.any_of("v.name", list(names))
    where.authorized(covers.instance("p.definition_key", "v.instance_id", tenant="p.tenant_id"))
    statement = (
        sql.SQL(
            "SELECT v.instance_id, v.name, v.value FROM variable v "
            "JOIN process_instance p ON p.id = v.instance_id"
        )
        + where.sql()
    )
    values: dict[UUID, dict[str, Any]] = {}
    for instance_id, name, value in conn.execute(statement, where.params()).fetchall():
        values.setdefault(instance_id, {})[name] = value
    return values
