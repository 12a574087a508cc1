"""Batches as the console and the APIs read them: a filtered list, one batch, its failed items."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from engine.paging import Key
from engine.queries import Connection, fetch_all, query
from engine.states import BatchItemState, BatchState
from engine.store import batches as store
from engine.store.batches import BATCH_COLUMNS, ITEM_COLUMNS, BatchRow, ItemRow

__all__ = ["BatchRow", "ItemRow", "batch", "batches", "count", "failed_items"]

# The states of a batch that still has work to do (Camunda's runtime batches).
UNFINISHED = (BatchState.RUNNING, BatchState.SUSPENDED)


def _where(
    batch_id: UUID | None,
    types: Sequence[str] | None,
    states: Sequence[str] | None,
    after: Key | None = None,
) -> tuple[str, list[object]]:
    clauses: list[str] = ["TRUE"]
    params: list[object] = []
    if after is not None:
        clauses.append("(created_at, id) < (%s, %s)")
        params += list(after)
    if batch_id is not None:
        clauses.append("id = %s")
        params.append(batch_id)
    if types is not None:
        clauses.append("type = ANY(%s)")
        params.append(list(types))
    if states is not None:
        clauses.append("state = ANY(%s)")
        params.append(list(states))
    return " AND ".join(clauses), params


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
    where, params = _where(batch_id, types, states, after)
    return fetch_all(
        conn,
        BatchRow,
        f"SELECT {BATCH_COLUMNS} FROM batch WHERE {where} "  # the clauses are literals
        "ORDER BY created_at DESC, id DESC OFFSET %s LIMIT %s",
        (*params, first, limit),
    )


@query
def count(
    conn: Connection,
    *,
    batch_id: UUID | None = None,
    types: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
) -> int:
    where, params = _where(batch_id, types, states)
    row = conn.execute(f"SELECT count(*) FROM batch WHERE {where}", params).fetchone()
    return int(row[0]) if row else 0


@query
def batch(conn: Connection, batch_id: UUID) -> BatchRow | None:
    return store.get(conn, batch_id)


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
