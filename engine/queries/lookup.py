"""What a text typed into the console's "jump to" box names: an instance (by its id, by the id of
one of its incidents, user tasks, external tasks or jobs, or by its business key) or a process
definition (by key or id).

Every statement reads an index, with a LIMIT: `process_instance.id`, `incident.id`,
`user_task.id`, `external_task.id`, `job.id` (primary keys), `process_instance.business_key`
(ix_process_instance_business_key_sort), the business key in lower case, equal or by prefix, in its
order (ix_process_instance_business_key_folded, `text_pattern_ops` so that a prefix is a range
of it), the short id the lists show (the id's last 8 characters, ix_process_instance_short_id)
and `process_definition.key` (the leading column of the unique (key, version) constraint) or
`process_definition.id` (primary key); definitions by key prefix read the definitions, a small
table.

Only what the request's principal may read is found: the one row an id or a definition text
names is kept if its instance (its definition) is readable; the business key's instances are
narrowed in the statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, fetch_dicts, fetch_one, query
from engine.sql import covers
from engine.sql.filters import Where

__all__ = [
    "BY_BUSINESS_KEY",
    "BY_ID",
    "DEFINITION",
    "DefinitionMatch",
    "FOLDED_KEY",
    "IdMatch",
    "KeyedInstance",
    "by_business_key",
    "by_folded_business_key",
    "by_id",
    "by_short_id",
    "definition",
    "definitions_by_prefix",
    "folded_statement",
    "short_statement",
]

# The business key as the folded index holds it (the same expression, or it is not used), and
# the order of that index (its operator class's, `text_pattern_ops`).
FOLDED_KEY: LiteralString = "lower(business_key)"
FOLDED_ORDER: LiteralString = FOLDED_KEY + " USING ~<~"
# The short id the console's lists show of an instance (see app/console/common.py `short_id`).
SHORT_ID: LiteralString = "right(id::text, 8)"
KEYED: LiteralString = (
    "SELECT id, business_key, definition_key, state, started_at FROM process_instance"
)

# What a row id can name, in the order they are tried.
BY_ID = (
    "SELECT 'instance' AS kind, id AS instance_id FROM process_instance WHERE id = %(id)s "
    "UNION ALL SELECT 'incident', instance_id FROM incident WHERE id = %(id)s "
    # A standalone task belongs to no instance: it leads nowhere.
    "UNION ALL SELECT 'user task', instance_id FROM user_task WHERE id = %(id)s "
    "AND instance_id IS NOT NULL "
    "UNION ALL SELECT 'external task', instance_id FROM external_task WHERE id = %(id)s "
    "UNION ALL SELECT 'job', instance_id FROM job WHERE id = %(id)s AND instance_id IS NOT NULL "
    "LIMIT 1"
)
BY_BUSINESS_KEY = "SELECT id FROM process_instance WHERE business_key = %(key)s LIMIT %(limit)s"
# The definition with the id, then the versions of the key, newest first (`rank`, `version`):
# the first of them the principal may read is the match.
DEFINITION = (
    "SELECT key, version, tenant_id, 0 AS rank FROM process_definition WHERE id = %(text)s "
    "UNION ALL SELECT key, version, tenant_id, 1 FROM process_definition WHERE key = %(text)s"
)


@dataclass(frozen=True)
class IdMatch:
    """A row with the id looked for: what it is ("instance", "incident", "user task", "external
    task" or "job") and the instance it belongs to."""

    kind: str
    instance_id: UUID


@dataclass(frozen=True)
class DefinitionMatch:
    key: str
    version: int


@dataclass(frozen=True)
class KeyedInstance:
    """An instance a business key (or its prefix) or a short id found, as the jump page lists
    it."""

    id: UUID
    business_key: str | None
    definition_key: str
    state: str
    started_at: datetime


def _readable(found: LiteralString, where: Where) -> sql.Composed:
    """The row `found` (a statement giving one row) reads, if `where` holds of it (`f`)."""
    return sql.SQL("SELECT * FROM (" + found + ") f") + where.sql()


@query
def by_id(conn: Connection, row_id: UUID) -> IdMatch | None:
    where = Where()
    where.authorized(
        covers.instance(
            covers.key_of("f.instance_id"),
            "f.instance_id",
            tenant=covers.tenant_of("f.instance_id"),
        )
    )
    params = {**where.params(), "id": row_id}
    return fetch_one(conn, IdMatch, _readable(BY_ID, where), params)


@query
def by_business_key(conn: Connection, business_key: str, limit: int = 2) -> list[UUID]:
    """Up to `limit` of the instances with this business key (any: the caller asks whether
    there are none, one or several)."""
    where = Where()
    where.equals("business_key", business_key)
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    statement = sql.SQL("SELECT id FROM process_instance") + where.sql() + where.limit(limit)
    rows = fetch_dicts(conn, statement, where.params())
    return [row["id"] for row in rows]


@query
def definition(conn: Connection, text: str) -> DefinitionMatch | None:
    """The definition with this id, else the latest version of the definitions with this key."""
    where = Where()
    where.authorized(covers.definition("f.key", tenant="f.tenant_id"))
    params = {**where.params(), "text": text}
    statement = (
        sql.SQL("SELECT f.key, f.version FROM (" + DEFINITION + ") f")
        + where.sql()
        + sql.SQL(" ORDER BY f.rank, f.version DESC LIMIT 1")
    )
    return fetch_one(conn, DefinitionMatch, statement, params)


def folded_statement(text: str, prefix: bool, limit: int) -> tuple[sql.Composed, dict[str, Any]]:
    """The statement of `by_folded_business_key` and its parameters."""
    where = Where()
    where.fixed("business_key IS NOT NULL")
    if prefix:
        where.starts_with(FOLDED_KEY, text.lower())
    else:
        where.add(FOLDED_KEY + " = {}", text.lower())
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    order = sql.SQL(" ORDER BY " + FOLDED_ORDER + ", id")
    return sql.SQL(KEYED) + where.sql() + order + where.limit(limit), where.params()


def short_statement(text: str, limit: int) -> tuple[sql.Composed, dict[str, Any]]:
    """The statement of `by_short_id` and its parameters."""
    where = Where()
    where.add(SHORT_ID + " = {}", text.lower())
    where.authorized(covers.instance("definition_key", "id", tenant="tenant_id"))
    return sql.SQL(KEYED) + where.sql() + where.limit(limit), where.params()


@query
def by_folded_business_key(
    conn: Connection, text: str, *, prefix: bool = False, limit: int = 2
) -> list[KeyedInstance]:
    """Up to `limit` instances whose business key is `text` in any case (`prefix`: starts
    with it), in the order of their keys in lower case, then of their ids."""
    return fetch_all(conn, KeyedInstance, *folded_statement(text, prefix, limit))


@query
def by_short_id(conn: Connection, text: str, limit: int = 2) -> list[KeyedInstance]:
    """Up to `limit` instances whose id ends with the 8 characters `text` (as the lists show)."""
    return fetch_all(conn, KeyedInstance, *short_statement(text, limit))


@query
def definitions_by_prefix(conn: Connection, text: str, limit: int) -> list[DefinitionMatch]:
    """The latest version of up to `limit` definition keys that start with `text` in any case,
    in key order."""
    where = Where()
    where.starts_with("lower(d.key)", text.lower())
    where.authorized(covers.definition("d.key", tenant="d.tenant_id"))
    statement = (
        sql.SQL("SELECT DISTINCT ON (d.key) d.key, d.version FROM process_definition d")
        + where.sql()
        + sql.SQL(" ORDER BY d.key, d.version DESC")
        + where.limit(limit)
    )
    return fetch_all(conn, DefinitionMatch, statement, where.params())
