"""The statements of batches: create one with its items and its job, lock its next pending items,
record what each came to, move the counters and the state, and keep its job (one per batch,
with the batch's id) while it runs. The commands are engine/commands/batches.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.states import BatchItemState, BatchState, JobKind
from engine.store import work_log
from engine.store.columns import fetch_all, fetch_one

BATCH_NODE_ID = "batch"


@dataclass(frozen=True)
class BatchRow:
    id: UUID
    type: str
    state: str
    payload: dict[str, Any]
    total: int
    done: int
    failed: int
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    tenant_id: str | None = None

    @property
    def remaining(self) -> int:
        return self.total - self.done - self.failed

    @property
    def suspended(self) -> bool:
        return self.state == BatchState.SUSPENDED


BATCH_COLUMNS = (
    "id, type, state, payload, total, done, failed, created_by, created_at, updated_at, ended_at, "
    "tenant_id"
)


@dataclass(frozen=True)
class ItemRow:
    seq: int
    item_id: str
    state: str
    error: str | None
    attempts: int
    updated_at: datetime | None


ITEM_COLUMNS = "seq, item_id, state, error, attempts, updated_at"


# The one tenant of the rows the items (`%(items)s`, uuids as text) name, if they all have it.
_ITEMS_TENANT = (
    "SELECT CASE WHEN count(*) = count(t.tenant_id) AND count(DISTINCT t.tenant_id) = 1 "
    "THEN min(t.tenant_id) END FROM ("
    "SELECT tenant_id FROM process_instance WHERE id = ANY(%(items)s::uuid[]) "
    "UNION ALL SELECT tenant_id FROM incident WHERE id = ANY(%(items)s::uuid[]) "
    "UNION ALL SELECT tenant_id FROM job WHERE id = ANY(%(items)s::uuid[]) "
    "UNION ALL SELECT tenant_id FROM external_task WHERE id = ANY(%(items)s::uuid[])"
    ") t"
)


def insert(
    conn: psycopg.Connection[Any],
    batch_id: UUID,
    batch_type: str,
    payload: dict[str, Any],
    item_ids: list[str],
    created_by: str | None,
    now: datetime,
) -> None:
    """The batch, Running, with its items pending in the order given. The batch is of the
    tenant of its items when they all have that one (instances, incidents, jobs or external
    tasks: each row carries its instance's tenant), else of none."""
    conn.execute(
        "INSERT INTO batch (id, type, state, payload, total, done, failed, created_by, "
        "created_at, updated_at, tenant_id) VALUES (%(id)s, %(type)s, %(state)s, %(payload)s, "
        "%(total)s, 0, 0, %(by)s, %(now)s, %(now)s, (" + _ITEMS_TENANT + "))",
        {
            "id": batch_id,
            "type": batch_type,
            "state": BatchState.RUNNING,
            "payload": Jsonb(payload),
            "total": len(item_ids),
            "by": created_by,
            "now": now,
            "items": item_ids,
        },
    )
    conn.execute(
        "INSERT INTO batch_item (batch_id, seq, item_id, state, attempts) "
        "SELECT %s, i.seq, i.item_id, %s, 0 "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS i(item_id, seq)",
        (batch_id, BatchItemState.PENDING, item_ids),
    )


def get(conn: psycopg.Connection[Any], batch_id: UUID, *, lock: bool = False) -> BatchRow | None:
    suffix = " FOR UPDATE" if lock else ""
    return fetch_one(
        conn, BatchRow, f"SELECT {BATCH_COLUMNS} FROM batch WHERE id = %s{suffix}", (batch_id,)
    )


def lock_pending(conn: psycopg.Connection[Any], batch_id: UUID, limit: int) -> list[ItemRow]:
    """Up to `limit` pending items, in order, locked for this transaction; items another
    transaction holds are skipped (it is running them)."""
    return fetch_all(
        conn,
        ItemRow,
        f"SELECT {ITEM_COLUMNS} FROM batch_item WHERE batch_id = %s AND state = %s "
        "ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED",
        (batch_id, BatchItemState.PENDING, limit),
    )


def finish_item(
    conn: psycopg.Connection[Any], batch_id: UUID, seq: int, error: str | None, now: datetime
) -> None:
    """The item done (no error) or failed with `error`."""
    state = BatchItemState.DONE if error is None else BatchItemState.FAILED
    conn.execute(
        "UPDATE batch_item SET state = %s, error = %s, attempts = attempts + 1, updated_at = %s "
        "WHERE batch_id = %s AND seq = %s",
        (state, error, now, batch_id, seq),
    )


def count(
    conn: psycopg.Connection[Any], batch_id: UUID, done: int, failed: int, now: datetime
) -> BatchRow | None:
    """Add a chunk's done and failed items to the counters; a running batch with no pending item
    left is completed. The batch as it is now."""
    return fetch_one(
        conn,
        BatchRow,
        "UPDATE batch SET done = done + %(done)s, failed = failed + %(failed)s, "
        "updated_at = %(now)s, "
        "state = CASE WHEN state = %(running)s AND drained.yes THEN %(completed)s ELSE state END, "
        "ended_at = CASE WHEN state = %(running)s AND drained.yes THEN %(now)s ELSE ended_at END "
        "FROM (SELECT NOT EXISTS ("
        "  SELECT 1 FROM batch_item WHERE batch_id = %(id)s AND state = %(pending)s) AS yes"
        ") AS drained "
        f"WHERE id = %(id)s RETURNING {BATCH_COLUMNS}",
        {
            "done": done,
            "failed": failed,
            "now": now,
            "id": batch_id,
            "running": BatchState.RUNNING,
            "pending": BatchItemState.PENDING,
            "completed": BatchState.COMPLETED,
        },
    )


def set_state(
    conn: psycopg.Connection[Any], batch_id: UUID, state: BatchState, now: datetime
) -> None:
    conn.execute(
        "UPDATE batch SET state = %s, updated_at = %s, "
        "ended_at = CASE WHEN %s THEN %s ELSE NULL END WHERE id = %s",
        (state, now, state.is_final, now, batch_id),
    )


def retry_failed(conn: psycopg.Connection[Any], batch_id: UUID, now: datetime) -> int:
    """Failed items pending again (their errors kept until they run), the failed counter with
    them; how many."""
    row = conn.execute(
        "WITH again AS (UPDATE batch_item SET state = %s, updated_at = %s "
        "  WHERE batch_id = %s AND state = %s RETURNING 1) SELECT count(*) FROM again",
        (BatchItemState.PENDING, now, batch_id, BatchItemState.FAILED),
    ).fetchone()
    assert row is not None
    again = int(row[0])
    conn.execute(
        "UPDATE batch SET failed = failed - %s, updated_at = %s WHERE id = %s",
        (again, now, batch_id),
    )
    return again


# -- the batch's job ------------------------------------------------------------------------------


def schedule_job(
    conn: psycopg.Connection[Any], batch_id: UUID, now: datetime, retries: int
) -> None:
    """The batch's job due now with fresh retries, unlocked; created when missing."""
    inserted = conn.execute(
        "INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, due_at, "
        "retries, created_at) VALUES (%s, %s, NULL, NULL, %s, NULL, %s, %s, %s) "
        "ON CONFLICT (id) DO UPDATE SET due_at = EXCLUDED.due_at, retries = EXCLUDED.retries, "
        "error_message = NULL, lock_owner = NULL, lock_expires_at = NULL RETURNING xmax = 0",
        (batch_id, JobKind.BATCH, BATCH_NODE_ID, now, retries, now),
    ).fetchone()
    if inserted is not None and inserted[0]:
        work_log.log_made(conn, batch_id, JobKind.BATCH, BATCH_NODE_ID, now, retries)


def lock_job(conn: psycopg.Connection[Any], batch_id: UUID) -> None:
    """Lock the batch's job row if it exists: every command on a batch locks its job first, then
    the batch, as a chunk running in the job does."""
    conn.execute(
        "SELECT 1 FROM job WHERE id = %s AND kind = %s FOR UPDATE", (batch_id, JobKind.BATCH)
    )


def delete_job(conn: psycopg.Connection[Any], batch_id: UUID) -> None:
    conn.execute("DELETE FROM job WHERE id = %s AND kind = %s", (batch_id, JobKind.BATCH))
