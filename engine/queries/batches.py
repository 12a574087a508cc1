"""Batches as the console and the APIs read them: a filtered list, one batch, its failed items."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from psycopg import sql

from engine.db.paging import Key
from engine.queries import Connection, fetch_all, query
from engine.sql import covers
from engine.sql.filters import Where
from engine.sql.filters import count as count_rows
from engine.states import BatchItemState, BatchState
from engine.store.batches import BATCH_COLUMNS, ITEM_COLUMNS, BatchRow, ItemRow

__all__ = ["BatchRow", "ItemRow", "batch", "batches", "count", "failed_items"]

# The states of a batch that still has work to do (Camunda's runtime batches).
UNFINISHED = (BatchState.RUNNING, BatchState.SUSPENDED)


def _where(
    batch_id: UUID | None,
    types: Sequence[str] | None,
    states: Sequence[str] | None,
    after: Key | None = None,
) -> Where:
    where = Where()
    where.keyset("(created_at, id)", after, descending=True)
    where.equals("id", batch_id)
    where.any_of("type", types)
    where.any_of("state", states)
    where.authorized(covers.batch("id", tenant="tenant_id"))
    return where


@query
def batches(
    conn: Connection,
    *,
    batch_id: UUID | None = None,
    types: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    first: int = 0,
    limit: int | None = None,
    after: Key | None = None,
) -> list[BatchRow]:
    """Batches, newest first; `after` (created_at, id): only those after it in that order."""
    where = _where(batch_id, types, states, after)
    statement = (
        sql.SQL(f"SELECT {BATCH_COLUMNS} FROM batch")
        + where.sql()
        + sql.SQL(" ORDER BY created_at DESC, id DESC")
        + where.offset_limit(first, limit)
    )
    return fetch_all(conn, BatchRow, statement, where.params())


@query
def count(
    conn: Connection,
    *,
    batch_id: UUID | None = None,
    types: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
) -> int:
    return count_rows(conn, sql.SQL("FROM batch"), _where(batch_id, types, states))


@query
def batch(conn: Connection, batch_id: UUID) -> BatchRow | None:
    """The batch (None: there is none the request's principal may read)."""
    found = batches(conn, batch_id=batch_id, limit=1)
    return found[0] if found else None


@query
def failed_items(conn: Connection, batch_id: UUID, limit: int = 200) -> list[ItemRow]:
    """The batch's failed items, in order, with their errors."""
    return fetch_all(
        conn,
        ItemRow,
        f"SELECT {ITEM_COLUMNS} FROM batch_item WHERE batch_id = %s AND state = %s "
        "ORDER BY seq LIMIT %s",
        (batch_id, BatchItemState.FAILED, limit),
    )
