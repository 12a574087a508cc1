"""Read models: what callers see of instances. Plain committed reads, no locks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString, TypeVar
from uuid import UUID

import psycopg
from psycopg import sql

from engine.queries.summaries import state_counts
from engine.sql import covers
from engine.sql.filters import Where
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


def _readable(instance_id: UUID) -> Where:
    """The instance `instance_id`, if the request's principal may read it."""
    where = Where()
    where.equals("id", instance_id)
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    return where


def instance(conn: psycopg.Connection[Any], instance_id: UUID) -> InstanceInfo | None:
    """The instance (None: there is none the principal may read)."""
    where = _readable(instance_id)
    statement = sql.SQL(f"SELECT {_INSTANCE_COLUMNS} FROM process_instance") + where.sql()
    return fetch_one(conn, InstanceInfo, statement, where.params())


def _rows_of(instance_id: UUID) -> Where:
    """The rows of the instance `instance_id` (their column `instance_id`), if the request's
    principal may read it."""
    where = Where()
    where.equals("instance_id", instance_id)
    where.authorized(
        covers.instance(
            covers.key_of("instance_id"), "instance_id", tenant=covers.tenant_of("instance_id")
        )
    )
    return where


def _select(
    conn: psycopg.Connection[Any], cls: type[T], select: LiteralString, where: Where, order: str
) -> list[T]:
    statement = sql.SQL(select) + where.sql() + sql.SQL(" ORDER BY " + order)
    return fetch_all(conn, cls, statement, where.params())


def called_instances(conn: psycopg.Connection[Any], instance_id: UUID) -> list[InstanceInfo]:
    """The instances `instance_id` called (that the principal may read), in the order they
    started."""
    where = Where()
    where.equals("super_instance_id", instance_id)
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    select = f"SELECT {_INSTANCE_COLUMNS} FROM process_instance"
    return _select(conn, InstanceInfo, select, where, "started_at, id")


def family(conn: psycopg.Connection[Any], root_instance_id: UUID) -> list[InstanceInfo]:
    """The root instance and every instance called below it (that the principal may read), in
    the order they started."""
    where = Where()
    where.add(
        "(id = {} OR (root_instance_id = {} AND super_instance_id IS NOT NULL))",
        root_instance_id,
        root_instance_id,
    )
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    select = f"SELECT {_INSTANCE_COLUMNS} FROM process_instance"
    return _select(conn, InstanceInfo, select, where, "started_at, id")


def exists(conn: psycopg.Connection[Any], instance_id: UUID) -> bool:
    """Whether the instance exists, whoever asks: what a command on it may do is the command's
    own check (engine/core/executor.py), not a read's."""
    row = conn.execute("SELECT 1 FROM process_instance WHERE id = %s", (instance_id,)).fetchone()
    return row is not None


def instance_state(conn: psycopg.Connection[Any], instance_id: UUID) -> str | None:
    """The instance's state (None: there is no instance the principal may read)."""
    where = _readable(instance_id)
    statement = sql.SQL("SELECT state FROM process_instance") + where.sql()
    row = conn.execute(statement, where.params()).fetchone()
    return row[0] if row else None


# Each read of an instance's rows reads none of an instance the principal may not read.
def tokens(conn: psycopg.Connection[Any], instance_id: UUID) -> list[TokenRow]:
    select = f"SELECT {_TOKEN_COLUMNS} FROM token"
    return _select(conn, TokenRow, select, _rows_of(instance_id), "created_at, id")


def visits(conn: psycopg.Connection[Any], instance_id: UUID) -> list[VisitRow]:
    select = f"SELECT {_VISIT_COLUMNS} FROM history"
    return _select(conn, VisitRow, select, _rows_of(instance_id), "started_at, id")


def variables(conn: psycopg.Connection[Any], instance_id: UUID) -> list[tuple[str, str, Any]]:
    where = _rows_of(instance_id)
    where.fixed("scope_key = ''")
    statement = sql.SQL("SELECT name, type, value FROM variable") + where.sql()
    rows = conn.execute(statement + sql.SQL(" ORDER BY name"), where.params()).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


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
    select = "SELECT scope_key, name, type, value, updated_at FROM variable"
    return _select(conn, VariableRow, select, _rows_of(instance_id), "scope_key, name")


def instance_counts(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Instances by state, from the summary rows (engine/db/summaries.py)."""
    return state_counts(conn)
