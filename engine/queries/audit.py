"""Reads of the audit log (engine/core/audit.py): the audit page (newest first, a keyset page at a
time), an instance's entries (the inspector's timeline), and Camunda's user operation log
(offset pages and counts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql
from psycopg.rows import dict_row

from engine.db.paging import Key, Page, keyset
from engine.queries import Connection, query
from engine.sql import covers
from engine.sql.filters import Covers, Where
from engine.sql.filters import count as count_rows

__all__ = [
    "PAGE_SIZE",
    "AuditFilter",
    "AuditRow",
    "audit_page",
    "count",
    "entries",
    "instance_entries",
]

# How many entries the audit page shows at a time.
PAGE_SIZE = 100
# How many entries of one instance its timeline shows, the newest.
TIMELINE_SIZE = 200

_COLUMNS = (
    "id, at, user_id, channel, operation, entity, entity_id, instance_id, definition_id, "
    "definition_key, batch_id, property, before, after, annotation, details"
)


@dataclass(frozen=True)
class AuditRow:
    id: UUID
    at: datetime
    user_id: str
    channel: str
    operation: str
    entity: str
    entity_id: str | None
    instance_id: UUID | None
    definition_id: str | None
    definition_key: str | None
    batch_id: UUID | None
    property: str | None
    before: Any
    after: Any
    annotation: str | None
    details: Any


@dataclass(frozen=True)
class AuditFilter:
    """Entries by whom, of which operations and entities (empty: any), on which entity (its
    id), instance or definition, at or after `since` and before `until`."""

    user: str | None = None
    operations: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    entity_id: str | None = None
    instance_id: UUID | None = None
    definition_id: str | None = None
    definition_key: str | None = None
    entry_id: UUID | None = None
    since: datetime | None = None
    until: datetime | None = None


def _where(where: AuditFilter, after: Key | None = None) -> Where:
    """The conditions of `where` (and of rows before the key `after`, newest first)."""
    found = Where()
    found.equals("user_id", where.user)
    found.any_of("operation", where.operations or None)
    found.any_of("entity", where.entities or None)
    found.equals("entity_id", where.entity_id)
    found.equals("instance_id", where.instance_id)
    found.equals("definition_id", where.definition_id)
    found.equals("definition_key", where.definition_key)
    found.equals("id", where.entry_id)
    found.at_least("at", where.since)
    found.below("at", where.until)
    found.keyset("(at, id)", after, descending=True)
    # Only the entries of instances and definitions the request's principal may read.
    # Their tenant: the instance's, else the definition's (none for the entries of neither).
    tenant: LiteralString = (
        "coalesce("
        + covers.tenant_of("instance_id")
        + ", "
        + covers.tenant_of_definition("definition_id")
        + ")"
    )
    instance = covers.instance("definition_key", "instance_id", tenant=tenant)
    definition = covers.definition("definition_key", tenant=tenant)
    found.authorized(Covers(instance.covers + definition.covers, tenant))
    return found


def _rows(conn: Connection, statement: sql.Composed, where: Where) -> list[AuditRow]:
    cur = conn.cursor(row_factory=dict_row)
    return [AuditRow(**row) for row in cur.execute(statement, where.params()).fetchall()]


def _newest(conn: Connection, where: AuditFilter, limit: int, after: Key | None) -> list[AuditRow]:
    found = _where(where, after)
    statement = (
        sql.SQL("SELECT " + _COLUMNS + " FROM audit_entry")
        + found.sql()
        + sql.SQL(" ORDER BY at DESC, id DESC")
        + found.limit(limit)
    )
    return _rows(conn, statement, found)


@query
def audit_page(
    conn: Connection, where: AuditFilter, after: str | None, limit: int = PAGE_SIZE
) -> Page[AuditRow]:
    """The entries matching `where`, newest first, after the cursor `after` (a cursor that is
    not one is a BadRequest naming `after`)."""
    return keyset(
        lambda n, key: _newest(conn, where, n, key),
        lambda row: (row.at, row.id),
        limit=limit,
        after=after,
    )


@query
def instance_entries(
    conn: Connection, instance_id: UUID, limit: int = TIMELINE_SIZE
) -> list[AuditRow]:
    """The instance's newest `limit` entries, oldest first."""
    rows = _newest(conn, AuditFilter(instance_id=instance_id), limit, None)
    return rows[::-1]


@query
def entries(
    conn: Connection,
    where: AuditFilter,
    *,
    first: int = 0,
    limit: int | None = None,
    descending: bool = False,
) -> list[AuditRow]:
    """The entries matching `where` by time (oldest first unless `descending`), from the
    `first` on, at most `limit` (None: all)."""
    found = _where(where)
    order: LiteralString = " ORDER BY at DESC, id DESC" if descending else " ORDER BY at, id"
    statement = (
        sql.SQL("SELECT " + _COLUMNS + " FROM audit_entry")
        + found.sql()
        + sql.SQL(order)
        + found.offset_limit(first, limit)
    )
    return _rows(conn, statement, found)


@query
def count(conn: Connection, where: AuditFilter) -> int:
    return count_rows(conn, sql.SQL("FROM audit_entry"), _where(where))
