"""The SQL of saved views: the commands (engine/commands/views.py, engine/commands/filters.py) and
the reads (engine/queries/views.py, engine/queries/camunda/filters.py) call these; nothing else
touches the table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.db.ids import new_id
from engine.identity.permissions import ALL, AuthorizationType, ResourceType
from engine.store.columns import fetch_all, fetch_one

_COLUMNS = "id, owner, page, name, query, created_at, task_query, properties"


@dataclass(frozen=True)
class SavedViewRow:
    id: UUID
    owner: str | None
    page: str
    name: str
    query: str
    created_at: datetime
    # A Camunda task filter's saved query as given (None: a view made in the console).
    task_query: dict[str, Any] | None = None
    properties: dict[str, Any] | None = None


def lock_owner(conn: psycopg.Connection[Any], owner: str | None, page: str) -> None:
    """Hold, until the transaction ends, the right to change `owner`'s views of `page`: saves of
    one user's views run one after the other, so the limit per user holds."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('saved_view:' || %s || ':' || %s, 0))",
        (page, owner or ""),
    )


def find(conn: psycopg.Connection[Any], owner: str | None, page: str, name: str) -> UUID | None:
    row = conn.execute(
        "SELECT id FROM saved_view WHERE owner IS NOT DISTINCT FROM %s AND page = %s AND name = %s",
        (owner, page, name),
    ).fetchone()
    return row[0] if row else None


def count(conn: psycopg.Connection[Any], owner: str | None, page: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM saved_view WHERE owner IS NOT DISTINCT FROM %s AND page = %s",
        (owner, page),
    ).fetchone()
    return int(row[0]) if row else 0


def insert(
    conn: psycopg.Connection[Any],
    owner: str | None,
    page: str,
    name: str,
    query: str,
    now: datetime,
    *,
    task_query: dict[str, Any] | None = None,
    properties: dict[str, Any] | None = None,
) -> UUID:
    view_id = new_id()
    conn.execute(
        "INSERT INTO saved_view (id, owner, page, name, query, created_at, task_query, properties)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (view_id, owner, page, name, query, now, _json(task_query), _json(properties)),
    )
    return view_id


def update_query(conn: psycopg.Connection[Any], view_id: UUID, query: str) -> None:
    """A console save over a view of the same name: the console's query stands for it again."""
    conn.execute(
        "UPDATE saved_view SET query = %s, task_query = NULL WHERE id = %s", (query, view_id)
    )


def delete(conn: psycopg.Connection[Any], owner: str, view_id: UUID) -> bool:
    """Delete `owner`'s view `view_id` and the grants on it; False if `owner` has no such
    view."""
    found = conn.execute(
        "DELETE FROM saved_view WHERE id = %s AND owner = %s RETURNING id", (view_id, owner)
    ).fetchall()
    if found:
        drop_grants(conn, view_id)
    return bool(found)


def of_owner(conn: psycopg.Connection[Any], owner: str, page: str) -> list[SavedViewRow]:
    return fetch_all(
        conn,
        SavedViewRow,
        f"SELECT {_COLUMNS} FROM saved_view WHERE owner = %s AND page = %s ORDER BY name, id",
        (owner, page),
    )


# -- task filters: views of the task inbox as Camunda's FILTER resource -------------------------


def lock_filter(conn: psycopg.Connection[Any], view_id: UUID) -> SavedViewRow | None:
    """The task-inbox view `view_id`, locked until the transaction ends."""
    return fetch_one(
        conn,
        SavedViewRow,
        f"SELECT {_COLUMNS} FROM saved_view WHERE id = %s AND page = 'tasks' FOR UPDATE",
        (view_id,),
    )


def update_filter(
    conn: psycopg.Connection[Any],
    view_id: UUID,
    *,
    owner: str | None,
    name: str,
    query: str,
    task_query: dict[str, Any],
    properties: dict[str, Any] | None,
) -> None:
    conn.execute(
        "UPDATE saved_view SET owner = %s, name = %s, query = %s, task_query = %s,"
        " properties = %s WHERE id = %s",
        (owner, name, query, _json(task_query), _json(properties), view_id),
    )


def delete_filter(conn: psycopg.Connection[Any], view_id: UUID) -> None:
    conn.execute("DELETE FROM saved_view WHERE id = %s", (view_id,))
    drop_grants(conn, view_id)


def grant_owner(conn: psycopg.Connection[Any], view_id: UUID, owner: str | None) -> None:
    """Every permission on the filter `view_id` to `owner`, as Camunda grants a filter's owner
    (nothing for a filter without one)."""
    if owner is None:
        return
    conn.execute(
        "INSERT INTO authorization_rule"
        " (id, type, user_id, group_id, resource_type, resource_id, permissions)"
        " VALUES (%s, %s, %s, NULL, %s, %s, %s) ON CONFLICT DO NOTHING",
        (
            new_id(),
            int(AuthorizationType.GRANT),
            owner,
            int(ResourceType.FILTER),
            str(view_id),
            ALL,
        ),
    )


def drop_grants(conn: psycopg.Connection[Any], view_id: UUID) -> None:
    """The authorizations on the filter `view_id`, gone with it (as Camunda deletes them)."""
    conn.execute(
        "DELETE FROM authorization_rule WHERE resource_type = %s AND resource_id = %s",
        (int(ResourceType.FILTER), str(view_id)),
    )


def _json(value: dict[str, Any] | None) -> Jsonb | None:
    return None if value is None else Jsonb(value)
