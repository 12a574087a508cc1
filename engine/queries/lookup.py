"""What a text typed into the console's "jump to" box names: an instance (by its id, by the id of
one of its incidents, user tasks, external tasks or jobs, or by its business key) or a process
definition (by key or id).

Every statement is an equality on a primary key or an indexed column, with a LIMIT:
`process_instance.id`, `incident.id`, `user_task.id`, `external_task.id`, `job.id` (primary
keys), `process_instance.business_key` (ix_process_instance_business_key) and
`process_definition.key` (the leading column of the unique (key, version) constraint) or
`process_definition.id` (primary key).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from engine.queries import Connection, fetch_dicts, fetch_one, query

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
    "UNION ALL SELECT 'user task', instance_id FROM user_task WHERE id = %(id)s "
    "UNION ALL SELECT 'external task', instance_id FROM external_task WHERE id = %(id)s "
    "UNION ALL SELECT 'job', instance_id FROM job WHERE id = %(id)s AND instance_id IS NOT NULL "
    "LIMIT 1"
)
BY_BUSINESS_KEY = "SELECT id FROM process_instance WHERE business_key = %(key)s LIMIT %(limit)s"
DEFINITION = (
    "(SELECT key, version FROM process_definition WHERE id = %(text)s) "
    "UNION ALL (SELECT key, version FROM process_definition WHERE key = %(text)s "
    "ORDER BY version DESC LIMIT 1) LIMIT 1"
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


@query
def by_id(conn: Connection, row_id: UUID) -> IdMatch | None:
    return fetch_one(conn, IdMatch, BY_ID, {"id": row_id})


@query
def by_business_key(conn: Connection, business_key: str, limit: int = 2) -> list[UUID]:
    """Up to `limit` of the instances with this business key (any: the caller asks whether
    there are none, one or several)."""
    rows = fetch_dicts(conn, BY_BUSINESS_KEY, {"key": business_key, "limit": limit})
    return [row["id"] for row in rows]


@query
def definition(conn: Connection, text: str) -> DefinitionMatch | None:
    """The definition with this id, else the latest version of the definitions with this key."""
    return fetch_one(conn, DefinitionMatch, DEFINITION, {"text": text})
