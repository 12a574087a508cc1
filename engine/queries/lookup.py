"""What a text typed into the console's "jump to" box names: an instance (by its id, by the id of
one of its incidents, user tasks, external tasks or jobs, or by its business key) or a process
definition (by key or id).

Every statement is an equality on a primary key or an indexed column, with a LIMIT:
`process_instance.id`, `incident.id`, `user_task.id`, `external_task.id`, `job.id` (primary
keys), `process_instance.business_key` (ix_process_instance_business_key) and
`process_definition.key` (the leading column of the unique (key, version) constraint) or
`process_definition.id` (primary key).

Only what the request's principal may read is found: the one row an id or a definition text
names is kept if its instance (its definition) is readable; the business key's instances are
narrowed in the statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_dicts, fetch_one, query
from engine.sql import covers
from engine.sql.filters import Where

__all__ = [
    "BY_BUSINESS_KEY",
    "BY_ID",
    "DEFINITION",
    "DefinitionMatch",
    "IdMatch",
    "by_business_key",
    "by_id",
    "definition",
]

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
