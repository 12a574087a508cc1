"""Deployments, and the definitions deployed: process definitions, and decision definitions
(`table=DECISIONS`), which share their columns and their versioning per key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from types import EllipsisType
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from engine.sql import covers
from engine.sql.filters import Covers, Where
from engine.states import DefinitionState
from engine.store.columns import fetch_all, fetch_one, fetch_where

PROCESSES = "process_definition"
DECISIONS = "decision_definition"

COLUMNS = (
    "id, key, version, name, version_tag, deployment_id, resource_name, content_hash, created_at, "
    "history_ttl_days, tenant_id"
)
# A process definition's also say whether it is suspended (decisions are never).
PROCESS_COLUMNS = f"{COLUMNS}, state"


def _columns(table: str) -> str:
    return PROCESS_COLUMNS if table == PROCESSES else COLUMNS


@dataclass(frozen=True)
class DefinitionRow:
    id: str
    key: str
    version: int
    name: str | None
    version_tag: str | None
    deployment_id: UUID
    resource_name: str
    content_hash: str
    created_at: datetime
    history_ttl_days: int | None = None
    tenant_id: str | None = None
    state: str = DefinitionState.ACTIVE

    @property
    def suspended(self) -> bool:
        return self.state == DefinitionState.SUSPENDED


def latest(conn: psycopg.Connection[Any], key: str, table: str = PROCESSES) -> DefinitionRow | None:
    """The highest version of `key` of any tenant (the last deployed of equal versions)."""
    return latest_for_tenant(conn, key, ..., table)


def _of_tenant(tenant_id: str | None | EllipsisType) -> tuple[str, tuple[str | None, ...]]:
    """The condition and parameters of a tenant: `...` any, None none, else that one."""
    if tenant_id is ...:
        return "", ()
    if tenant_id is None:
        return " AND tenant_id IS NULL", ()
    return " AND tenant_id = %s", (tenant_id,)


def latest_for_tenant(
    conn: psycopg.Connection[Any],
    key: str,
    tenant_id: str | None | EllipsisType,
    table: str = PROCESSES,
) -> DefinitionRow | None:
    """The latest version of `key` deployed for tenant `tenant_id` (None: without a tenant;
    `...`: for any)."""
    condition, params = _of_tenant(tenant_id)
    return fetch_one(
        conn,
        DefinitionRow,
        f"SELECT {_columns(table)} FROM {table} WHERE key = %s{condition} "
        "ORDER BY version DESC, created_at DESC LIMIT 1",
        (key, *params),
    )


def tenants_of(
    conn: psycopg.Connection[Any], key: str, table: str = PROCESSES, limit: int = 2
) -> list[str | None]:
    """Up to `limit` of the tenants `key` is deployed for (None: without a tenant), among
    those the current principal sees (see `Where.tenants`): a user of one tenant resolves a
    key deployed for several to their own."""
    where = Where()
    where.equals("key", key)
    where.tenants("tenant_id")
    query = sql.SQL(f"SELECT DISTINCT tenant_id FROM {table}") + where.sql() + where.limit(limit)
    return [row[0] for row in conn.execute(query, where.params()).fetchall()]


def latest_of_each_tenant(
    conn: psycopg.Connection[Any], key: str, table: str = PROCESSES, limit: int = 2
) -> list[DefinitionRow]:
    """The latest version of `key` for up to `limit` of the tenants it is deployed for (without
    a tenant counts as one), among those the current principal sees (see `Where.tenants`), in
    one statement: a start by key alone takes the one there is, or refuses several."""
    where = Where()
    where.equals("key", key)
    where.tenants("tenant_id")
    query = (
        sql.SQL(f"SELECT DISTINCT ON (tenant_id) {_columns(table)} FROM {table}")
        + where.sql()
        + sql.SQL(" ORDER BY tenant_id, version DESC, created_at DESC")
        + where.limit(limit)
    )
    return fetch_all(conn, DefinitionRow, query, where.params())


def by_version(
    conn: psycopg.Connection[Any],
    key: str,
    version: int,
    tenant_id: str | None | EllipsisType = ...,
) -> DefinitionRow | None:
    """Version `version` of `key`, of tenant `tenant_id` (`...`: of any tenant)."""
    condition, params = _of_tenant(tenant_id)
    return fetch_one(
        conn,
        DefinitionRow,
        f"SELECT {PROCESS_COLUMNS} FROM process_definition "
        f"WHERE key = %s AND version = %s{condition} "
        "ORDER BY tenant_id NULLS FIRST LIMIT 1",
        (key, version, *params),
    )


def latest_in_deployment(
    conn: psycopg.Connection[Any], key: str, deployment_id: UUID
) -> DefinitionRow | None:
    return _latest_where(conn, key, "deployment_id", deployment_id)


def latest_with_tag(
    conn: psycopg.Connection[Any],
    key: str,
    version_tag: str,
    tenant_id: str | None | EllipsisType = ...,
) -> DefinitionRow | None:
    return _latest_where(conn, key, "version_tag", version_tag, tenant_id)


def _latest_where(
    conn: psycopg.Connection[Any],
    key: str,
    column: str,
    value: object,
    tenant_id: str | None | EllipsisType = ...,
) -> DefinitionRow | None:
    """The latest version of the process `key` whose `column` (a name from this module) holds
    `value`, of tenant `tenant_id` (`...`: of any tenant)."""
    condition, params = _of_tenant(tenant_id)
    return fetch_one(
        conn,
        DefinitionRow,
        f"SELECT {PROCESS_COLUMNS} FROM process_definition "
        f"WHERE key = %s AND {column} = %s{condition} "
        "ORDER BY version DESC LIMIT 1",
        (key, value, *params),
    )


def by_id(
    conn: psycopg.Connection[Any], definition_id: str, table: str = PROCESSES
) -> DefinitionRow | None:
    return fetch_one(
        conn,
        DefinitionRow,
        f"SELECT {_columns(table)} FROM {table} WHERE id = %s",
        (definition_id,),
    )


def _readable(table: str) -> Covers:
    """The definitions of `table` the request's principal may read."""
    return (
        covers.definition("key", tenant="tenant_id")
        if table == PROCESSES
        else covers.decision("key", tenant="tenant_id")
    )


def readable(
    conn: psycopg.Connection[Any],
    *,
    definition_id: str | None = None,
    key: str | None = None,
    table: str = PROCESSES,
) -> DefinitionRow | None:
    """The definition `definition_id`, or the latest version of `key`, if the request's
    principal may read it."""
    where = Where()
    where.equals("id", definition_id)
    where.equals("key", key)
    where.authorized(_readable(table))
    select = f"SELECT {_columns(table)} FROM {table}"
    found = fetch_where(conn, DefinitionRow, select, where, "version DESC", 1)
    return found[0] if found else None


def _one(conn: psycopg.Connection[Any], columns: str, definition_id: str) -> Any:
    where = Where()
    where.equals("id", definition_id)
    where.authorized(_readable(PROCESSES))
    statement = sql.SQL(f"SELECT {columns} FROM process_definition") + where.sql()
    return conn.execute(statement, where.params()).fetchone()


def source_xml(conn: psycopg.Connection[Any], definition_id: str) -> tuple[str, str] | None:
    """(resource name, XML) of a definition (the request's principal may read)."""
    row = _one(conn, "resource_name, source_xml", definition_id)
    return (row[0], row[1]) if row else None


def diagram_xml(conn: psycopg.Connection[Any], definition_id: str) -> tuple[str, bool] | None:
    """The XML a diagram is drawn from, and whether its layout was generated: the generated
    diagram when there is one, else the source (of a definition the principal may read)."""
    row = _one(conn, "coalesce(diagram_xml, source_xml), diagram_xml IS NOT NULL", definition_id)
    return (row[0], row[1]) if row else None


def list_all(
    conn: psycopg.Connection[Any], key: str | None = None, table: str = PROCESSES
) -> list[DefinitionRow]:
    """Every version of every definition (of `key`) the request's principal may read."""
    where = Where()
    where.equals("key", key)
    where.authorized(_readable(table))
    query = sql.SQL(f"SELECT {_columns(table)} FROM {table}") + where.sql()
    return fetch_all(conn, DefinitionRow, query + sql.SQL(" ORDER BY key, version"), where.params())


def lock_key(
    conn: psycopg.Connection[Any], key: str, table: str = PROCESSES, tenant_id: str | None = None
) -> None:
    """Serialise deployments of one key (of one tenant) until the transaction ends, so versions
    never collide."""
    namespace = "definition:" if table == PROCESSES else f"{table}:"
    if tenant_id is not None:
        namespace = f"{namespace}{len(tenant_id)}:{tenant_id}:"
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s || %s, 0))", (namespace, key))


def insert_deployment(
    conn: psycopg.Connection[Any],
    deployment_id: UUID,
    name: str | None,
    source: str | None,
    now: datetime,
    tenant_id: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO deployment (id, name, source, created_at, tenant_id) "
        "VALUES (%s, %s, %s, %s, %s)",
        (deployment_id, name, source, now, tenant_id),
    )


def insert_definition(
    conn: psycopg.Connection[Any],
    row: DefinitionRow,
    xml: str,
    diagram: str | None = None,
    table: str = PROCESSES,
) -> None:
    """A definition with its source `xml` and, for a process whose layout was generated,
    `diagram`."""
    columns = f"{COLUMNS}, source_xml" + (", diagram_xml" if table == PROCESSES else "")
    values = ", ".join(["%s"] * columns.count(","))
    conn.execute(
        f"INSERT INTO {table} ({columns}) VALUES (%s, {values})",
        (
            row.id,
            row.key,
            row.version,
            row.name,
            row.version_tag,
            row.deployment_id,
            row.resource_name,
            row.content_hash,
            row.created_at,
            row.history_ttl_days,
            row.tenant_id,
            xml,
            *((diagram,) if table == PROCESSES else ()),
        ),
    )


def to_suspend(
    conn: psycopg.Connection[Any],
    *,
    definition_id: str | None = None,
    key: str | None = None,
    tenant_id: str | None = None,
    without_tenant: bool = False,
) -> list[DefinitionRow]:
    """The process definitions a suspension or activation acts on, locked until the transaction
    ends, in id order: the one `definition_id`, or every version of `key` (of tenant
    `tenant_id`, or `without_tenant` of none; neither: of every tenant the request's principal
    sees)."""
    where = Where()
    where.equals("id", definition_id)
    where.equals("key", key)
    where.tenant("tenant_id", tenant_id, without_tenant)
    where.tenants("tenant_id")
    query = (
        sql.SQL(f"SELECT {PROCESS_COLUMNS} FROM {PROCESSES}")
        + where.sql()
        + sql.SQL(" ORDER BY id FOR UPDATE")
    )
    return fetch_all(conn, DefinitionRow, query, where.params())


def set_state(conn: psycopg.Connection[Any], definition_ids: list[str], state: str) -> None:
    """Put the definitions `definition_ids` in `state` (Active or Suspended)."""
    conn.execute(f"UPDATE {PROCESSES} SET state = %s WHERE id = ANY(%s)", (state, definition_ids))
