"""Reads of the audit log (engine/audit.py): the audit page (newest first, a keyset page at a
time), an instance's entries (the inspector's timeline), and Camunda's user operation log
(offset pages and counts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql
from psycopg.rows import dict_row

from engine.paging import Key, Page, keyset
from engine.queries import Connection, query

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


def _where(where: AuditFilter, params: dict[str, Any], after: Key | None = None) -> sql.Composable:
    """The WHERE clause of `where` (and of rows before the key `after`, newest first); its
    values go to `params`."""
    clauses: list[LiteralString] = []

    def add(clause: LiteralString, name: str, value: Any) -> None:
        if value is not None and value != ():
            clauses.append(clause)
            params[name] = list(value) if isinstance(value, tuple) else value

    add("user_id = %(user)s", "user", where.user)
    add("operation = ANY(%(operations)s)", "operations", where.operations)
    add("entity = ANY(%(entities)s)", "entities", where.entities)
    add("entity_id = %(entity_id)s", "entity_id", where.entity_id)
    add("instance_id = %(instance)s", "instance", where.instance_id)
    add("definition_id = %(definition_id)s", "definition_id", where.definition_id)
    add("definition_key = %(definition_key)s", "definition_key", where.definition_key)
    add("id = %(entry)s", "entry", where.entry_id)
    add("at >= %(since)s", "since", where.since)
    add("at < %(until)s", "until", where.until)
    if after is not None:
        clauses.append("(at, id) < (%(after_at)s, %(after_id)s)")
        params["after_at"], params["after_id"] = after
    if not clauses:
        return sql.SQL("")
    return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(sql.SQL(c) for c in clauses)


def _rows(conn: Connection, statement: sql.Composed, params: dict[str, Any]) -> list[AuditRow]:
    cur = conn.cursor(row_factory=dict_row)
    return [AuditRow(**row) for row in cur.execute(statement, params).fetchall()]


def _newest(conn: Connection, where: AuditFilter, limit: int, after: Key | None) -> list[AuditRow]:
    params: dict[str, Any] = {"limit": limit}
    statement = sql.SQL(
        "SELECT " + _COLUMNS + " FROM audit_entry{} ORDER BY at DESC, id DESC LIMIT %(limit)s"
    ).format(_where(where, params, after))
    return _rows(conn, statement, params)


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
    params: dict[str, Any] = {"first": max(first, 0), "limit": limit}
    order = "at DESC, id DESC" if descending else "at, id"
    statement = sql.SQL(
        "SELECT " + _COLUMNS + " FROM audit_entry{} ORDER BY " + order + " "
        "OFFSET %(first)s LIMIT %(limit)s"
    ).format(_where(where, params))
    return _rows(conn, statement, params)


@query
def count(conn: Connection, where: AuditFilter) -> int:
    params: dict[str, Any] = {}
    statement = sql.SQL("SELECT count(*) FROM audit_entry{}").format(_where(where, params))
    row = conn.execute(statement, params).fetchone()
    return int(row[0]) if row else 0
