"""The SQL of saved views: the commands (engine/commands/views.py) and the reads
(engine/queries/views.py) call these; nothing else touches the table."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.db.ids import new_id
from engine.store.columns import fetch_all


@dataclass(frozen=True)
class SavedViewRow:
    id: UUID
    owner: str
    page: str
    name: str
    query: str
    created_at: datetime


def lock_owner(conn: psycopg.Connection[Any], owner: str, page: str) -> None:
    """Hold, until the transaction ends, the right to change `owner`'s views of `page`: saves of
    one user's views run one after the other, so the limit per user holds."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('saved_view:' || %s || ':' || %s, 0))",
        (page, owner),
    )


def find(conn: psycopg.Connection[Any], owner: str, page: str, name: str) -> UUID | None:
    row = conn.execute(
        "SELECT id FROM saved_view WHERE owner = %s AND page = %s AND name = %s",
        (owner, page, name),
    ).fetchone()
    return row[0] if row else None


def count(conn: psycopg.Connection[Any], owner: str, page: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM saved_view WHERE owner = %s AND page = %s", (owner, page)
    ).fetchone()
    return int(row[0]) if row else 0


def insert(
    conn: psycopg.Connection[Any], owner: str, page: str, name: str, query: str, now: datetime
) -> UUID:
    view_id = new_id()
    conn.execute(
        "INSERT INTO saved_view (id, owner, page, name, query, created_at) "
        "VALUES (%s, %s, %s, %s, %s, %s)",
        (view_id, owner, page, name, query, now),
    )
    return view_id


def update_query(conn: psycopg.Connection[Any], view_id: UUID, query: str) -> None:
    conn.execute("UPDATE saved_view SET query = %s WHERE id = %s", (query, view_id))


def delete(conn: psycopg.Connection[Any], owner: str, view_id: UUID) -> bool:
    """Delete `owner`'s view `view_id`; False if `owner` has no such view."""
    found = conn.execute(
        "DELETE FROM saved_view WHERE id = %s AND owner = %s RETURNING id", (view_id, owner)
    ).fetchall()
    return bool(found)


def of_owner(conn: psycopg.Connection[Any], owner: str, page: str) -> list[SavedViewRow]:
    return fetch_all(
        conn,
        SavedViewRow,
        "SELECT id, owner, page, name, query, created_at FROM saved_view "
        "WHERE owner = %s AND page = %s ORDER BY name, id",
        (owner, page),
    )
