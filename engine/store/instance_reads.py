"""Read models: what callers see of instances. Plain committed reads, no locks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import psycopg

from engine.queries.summaries import state_counts
from engine.states import TokenMode
from engine.store.columns import fetch_all, fetch_one, select_list

T = TypeVar("T")


@dataclass(frozen=True)
class InstanceInfo:
    id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str
    started_at: datetime
    ended_at: datetime | None
    # Its caller (instance and token at the call activity), and its family's root (itself when
    # nobody called it).
    super_instance_id: UUID | None = None
    super_token_id: UUID | None = None
    root_instance_id: UUID | None = None
    tenant_id: str | None = None


_INSTANCE_COLUMNS = select_list(InstanceInfo, [("", "process_instance")])


@dataclass(frozen=True)
class TokenRow:
    id: UUID
    node_id: str
    state: str
    parent_id: UUID | None
    merged_into: UUID | None
    parallel_group: str | None
    version: int
    created_at: datetime
    scope_id: UUID | None = None
    mode: str = TokenMode.FORWARD


@dataclass(frozen=True)
class StepVisit:
    """A token's visit to one node: a history row's node and times."""

    node_id: str
    node_name: str | None
    node_type: str
    state: str
    started_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class VisitRow(StepVisit):
    id: UUID
    token_id: UUID
    # The visiting token's mode: a compensation handler's visit is in Compensation mode.
    mode: str = TokenMode.FORWARD


_TOKEN_COLUMNS = select_list(TokenRow, [("", "token")])
_VISIT_COLUMNS = select_list(VisitRow, [("", "history")])


def instance(conn: psycopg.Connection[Any], instance_id: UUID) -> InstanceInfo | None:
    return fetch_one(
        conn,
        InstanceInfo,
        f"SELECT {_INSTANCE_COLUMNS} FROM process_instance WHERE id = %s",
        (instance_id,),
    )


def called_instances(conn: psycopg.Connection[Any], instance_id: UUID) -> list[InstanceInfo]:
    """The instances `instance_id` called, in the order they started."""
    return _rows(
        conn, InstanceInfo, "process_instance", "super_instance_id", "started_at", instance_id
    )


def family(conn: psycopg.Connection[Any], root_instance_id: UUID) -> list[InstanceInfo]:
    """The root instance and every instance called below it, in the order they started."""
    return fetch_all(
        conn,
        InstanceInfo,
        f"SELECT {_INSTANCE_COLUMNS} FROM process_instance WHERE id = %(root)s "
        f"UNION ALL SELECT {_INSTANCE_COLUMNS} FROM process_instance "
        "WHERE root_instance_id = %(root)s AND super_instance_id IS NOT NULL "
        "ORDER BY started_at, id",
        {"root": root_instance_id},
    )


def instance_state(conn: psycopg.Connection[Any], instance_id: UUID) -> str | None:
    row = conn.execute(
        "SELECT state FROM process_instance WHERE id = %s", (instance_id,)
    ).fetchone()
    return row[0] if row else None


def tokens(conn: psycopg.Connection[Any], instance_id: UUID) -> list[TokenRow]:
    return _rows(conn, TokenRow, "token", "instance_id", "created_at", instance_id)


def visits(conn: psycopg.Connection[Any], instance_id: UUID) -> list[VisitRow]:
    return _rows(conn, VisitRow, "history", "instance_id", "started_at", instance_id)


# The columns each read model selects.
_COLUMNS: dict[type[Any], str] = {
    InstanceInfo: _INSTANCE_COLUMNS,
    TokenRow: _TOKEN_COLUMNS,
    VisitRow: _VISIT_COLUMNS,
}


def _rows(
    conn: psycopg.Connection[Any],
    kind: type[T],
    table: str,
    column: str,
    order: str,
    instance_id: UUID,
) -> list[T]:
    """The rows of `table` whose `column` is `instance_id`, as `kind`, in `order` (then id)."""
    return fetch_all(
        conn,
        kind,
        f"SELECT {_COLUMNS[kind]} FROM {table} WHERE {column} = %s ORDER BY {order}, id",
        (instance_id,),
    )


def variables(conn: psycopg.Connection[Any], instance_id: UUID) -> list[tuple[str, str, Any]]:
    return [
        (row[0], row[1], row[2])
        for row in conn.execute(
            "SELECT name, type, value FROM variable WHERE instance_id = %s AND scope_key = '' "
            "ORDER BY name",
            (instance_id,),
        ).fetchall()
    ]


@dataclass(frozen=True)
class VariableRow:
    """A variable of any scope: scope_key '' is the instance's root scope, any other the id of
    the token whose activity instance owns it."""

    scope_key: str
    name: str
    type: str
    value: Any
    updated_at: datetime


def variables_in_scopes(conn: psycopg.Connection[Any], instance_id: UUID) -> list[VariableRow]:
    """Every variable of the instance, the root scope's first, then by owner and name."""
    return fetch_all(
        conn,
        VariableRow,
        "SELECT scope_key, name, type, value, updated_at FROM variable WHERE instance_id = %s "
        "ORDER BY scope_key, name",
        (instance_id,),
    )


def instance_counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Instances by state, from the summary rows (engine/db/summaries.py)."""
    return state_counts(conn)
