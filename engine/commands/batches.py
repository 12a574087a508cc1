"""Batches: one operation over many items (engine/batch), created with its items fixed, worked
through by the job executors a chunk at a time, suspended, resumed, cancelled, its failed items
retried.

Exactly once: a chunk is one transaction. It locks its items (SKIP LOCKED: two runners of one
batch take different items), runs each item's command under a savepoint, and marks each item
done or failed, with the counters, in that same transaction. A crash before the commit leaves
every item of the chunk pending and nothing of their commands written; after it, they are done.
A failing item rolls back to its savepoint, so only its own changes go, and it is recorded
failed with its error while the others go on.

A running batch has a job (kind `batch`, the batch's id) that the job executors acquire like any
other: each run of it is one chunk, and it is due again at once while items remain. Every command
on a batch locks the job's row first, then the batch's, as the chunk does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine import batch
from engine.core import audit
from engine.core.executor import RETRYABLE, Result, Tx
from engine.core.permits import (
    CREATE_BATCH,
    DELETE_BATCH,
    ENGINE_WORK,
    UPDATE_BATCH,
    Permit,
    check,
)
from engine.db.ids import new_id
from engine.db.outage import is_database_outage
from engine.errors import BadRequest, Conflict, InterlockError, NotFound
from engine.schema import JOB_CHANNEL
from engine.states import AuditChannel, AuditEntity, AuditOperation, BatchState
from engine.store import batches as store
from engine.store import savepoints

__all__ = [
    "CHUNK_SIZE",
    "MAX_ITEMS",
    "BatchResult",
    "CancelBatch",
    "ChunkResult",
    "CreateBatch",
    "RetryBatchItems",
    "RunBatchItems",
    "SuspendBatch",
    "run_batch_job",
]

# Items per chunk: one transaction of the batch's job.
CHUNK_SIZE = 50
# The most items one batch may hold.
MAX_ITEMS = 100_000
# The longest error an item keeps.
_MAX_ERROR = 2000


@dataclass(frozen=True)
class BatchResult(Result):
    batch_id: str
    type: str
    state: str
    total: int
    # Items a retry made pending again.
    retried: int = 0


def _result(row: store.BatchRow, retried: int = 0) -> BatchResult:
    return BatchResult(str(row.id), row.type, row.state, row.total, retried)


def _unique_ids(item_ids: tuple[str, ...]) -> list[str]:
    """The ids as UUIDs in canonical text, each once, in the order given."""
    seen: dict[str, None] = {}
    for given in item_ids:
        try:
            seen.setdefault(str(UUID(str(given))), None)
        except ValueError:
            raise BadRequest(f"item id {str(given)[:80]!r} is not a UUID", field="items") from None
    return list(seen)


@dataclass(frozen=True)
class CreateBatch:
    """A batch of `type` over `item_ids` (incidents, jobs, external tasks or instances: what the
    type works on), with the type's parameters in `payload`. The items are fixed here: a query
    is run once, by the caller, and its answer is the batch. The batch runs as the operator who
    creates it."""

    name: ClassVar[str] = "CreateBatch"
    result_type: ClassVar[type[Result]] = BatchResult
    # The one its type needs.
    permits: ClassVar[tuple[Permit, ...]] = tuple(CREATE_BATCH.values())

    type: str
    item_ids: tuple[str, ...]
    payload: Mapping[str, Any] = field(default_factory=dict)
    # How many items the operator was shown before confirming (the console's impact preview);
    # kept with the audit entry beside the number the batch holds.
    confirmed: int | None = None

    def execute(self, tx: Tx) -> BatchResult:
        operation = batch.operation(self.type)
        check(tx, CREATE_BATCH[operation.type])
        payload = operation.check(self.payload)
        if operation.validate is not None:
            operation.validate(tx, payload)
        items = _unique_ids(self.item_ids)
        if not items:
            raise BadRequest("a batch needs at least one item", field="items")
        if len(items) > MAX_ITEMS:
            raise BadRequest(f"a batch holds at most {MAX_ITEMS} items", field="items")
        batch_id = new_id()
        creator = tx.actor.user if tx.actor is not None else None
        store.insert(tx.conn, batch_id, operation.type, payload, items, creator, tx.now)
        store.schedule_job(tx.conn, batch_id, tx.now, tx.settings.default_retries)
        tx.announcements.add(JOB_CHANNEL)
        audit.record(
            tx,
            AuditOperation.CREATE_BATCH,
            AuditEntity.BATCH,
            entity_id=str(batch_id),
            details={
                "type": operation.type.value,
                "total": len(items),
                "payload": payload,
                **({"confirmed": self.confirmed} if self.confirmed is not None else {}),
            },
        )
        return BatchResult(str(batch_id), operation.type.value, BatchState.RUNNING, len(items))


@dataclass(frozen=True)
class ChunkResult(Result):
    batch_id: str
    done: int
    failed: int
    # The batch's state after the chunk, and whether pending items remain for another one.
    state: str
    more: bool


# The savepoint each item runs under.
_ITEM = "batch_item"


def _error_of(exc: Exception) -> str:
    message = exc.message if isinstance(exc, InterlockError) else f"{type(exc).__name__}: {exc}"
    return message[:_MAX_ERROR]


def _run_item(tx: Tx, operation: batch.BatchOperation, item_id: str, payload: Any) -> str | None:
    """Run one item under a savepoint; None when it is done, else its error (its changes rolled
    back). A failure of the database itself, or a lost race, fails the whole chunk instead."""
    conn = tx.conn
    savepoints.begin(conn, _ITEM)
    try:
        # The inner pipeline ends in a sync: the item's writes have run when it exits.
        with conn.pipeline():
            operation.run(tx, item_id, payload)
    except Exception as exc:
        if is_database_outage(exc) or isinstance(exc, RETRYABLE):
            raise
        savepoints.roll_back(conn, _ITEM)
        return _error_of(exc)
    savepoints.release(conn, _ITEM)
    return None


def run_chunk(tx: Tx, batch_id: UUID, limit: int) -> ChunkResult:
    """Run up to `limit` pending items of a running batch in the caller's transaction."""
    row = store.get(tx.conn, batch_id)
    if row is None:
        raise NotFound(f"batch {batch_id} does not exist", batch_id=str(batch_id))
    if row.state != BatchState.RUNNING:
        return ChunkResult(str(batch_id), 0, 0, row.state, False)
    operation = batch.operation(row.type)
    actor = None
    if row.created_by is not None:
        actor = audit.Actor(row.created_by, AuditChannel.BATCH, batch_id=batch_id)
    item_tx = dataclasses.replace(tx, actor=actor)
    done = failed = 0
    for item in store.lock_pending(tx.conn, batch_id, limit):
        error = _run_item(item_tx, operation, item.item_id, row.payload)
        store.finish_item(tx.conn, batch_id, item.seq, error, tx.now)
        done, failed = (done + 1, failed) if error is None else (done, failed + 1)
    after = store.count(tx.conn, batch_id, done, failed, tx.now)
    assert after is not None
    more = after.state == BatchState.RUNNING
    return ChunkResult(str(batch_id), done, failed, after.state, more)


@dataclass(frozen=True)
class RunBatchItems:
    """One chunk of a batch outside its job (the job runs `run_chunk` itself): safe beside it
    and beside another runner, since each locks the items it runs with SKIP LOCKED."""

    name: ClassVar[str] = "RunBatchItems"
    # The batch job's: each item's command runs as the batch's creator (engine/batch).
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = ChunkResult

    batch_id: UUID
    limit: int = CHUNK_SIZE

    def execute(self, tx: Tx) -> ChunkResult:
        if self.limit < 1:
            raise BadRequest("limit must be at least 1", field="limit")
        return run_chunk(tx, self.batch_id, self.limit)


def run_batch_job(tx: Tx, batch_id: UUID) -> None:
    """The batch job's work, in the transaction that holds its row locked: one chunk, then the
    job due again at once while items remain, else gone."""
    tx.announcements.add(JOB_CHANNEL)
    try:
        chunk = run_chunk(tx, batch_id, CHUNK_SIZE)
    except NotFound:  # the batch is gone: so is its job
        store.delete_job(tx.conn, batch_id)
        return
    if chunk.more:
        store.schedule_job(tx.conn, batch_id, tx.now, tx.settings.default_retries)
    else:
        store.delete_job(tx.conn, batch_id)


def _locked(tx: Tx, batch_id: UUID) -> store.BatchRow:
    store.lock_job(tx.conn, batch_id)
    row = store.get(tx.conn, batch_id, lock=True)
    if row is None:
        raise NotFound(f"batch {batch_id} does not exist", batch_id=str(batch_id))
    return row


def _record(tx: Tx, operation: AuditOperation, row: store.BatchRow, **details: Any) -> None:
    audit.record(
        tx,
        operation,
        AuditEntity.BATCH,
        entity_id=str(row.id),
        details={"type": row.type, **details},
    )


@dataclass(frozen=True)
class SuspendBatch:
    """Suspend a running batch (the chunk in hand finishes; no other starts) or resume a
    suspended one. Asking for the state it is in changes nothing."""

    name: ClassVar[str] = "SuspendBatch"
    result_type: ClassVar[type[Result]] = BatchResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_BATCH,)

    batch_id: UUID
    suspended: bool = True

    def execute(self, tx: Tx) -> BatchResult:
        row = _locked(tx, self.batch_id)
        (needed,) = self.permits
        check(tx, needed, batch=row.id)
        target = BatchState.SUSPENDED if self.suspended else BatchState.RUNNING
        if row.state == target:
            return _result(row)
        if BatchState(row.state).is_final:
            raise Conflict(
                f"batch {self.batch_id} is {row.state}: it can no longer be "
                f"{'suspended' if self.suspended else 'resumed'}",
                batch_id=str(self.batch_id),
            )
        store.set_state(tx.conn, self.batch_id, target, tx.now)
        if self.suspended:
            store.delete_job(tx.conn, self.batch_id)
        else:
            store.schedule_job(tx.conn, self.batch_id, tx.now, tx.settings.default_retries)
            tx.announcements.add(JOB_CHANNEL)
        operation = AuditOperation.SUSPEND if self.suspended else AuditOperation.ACTIVATE
        _record(tx, operation, row)
        return BatchResult(str(row.id), row.type, target, row.total)


@dataclass(frozen=True)
class CancelBatch:
    """Cancel a running or suspended batch: its pending items stay undone (the chunk in hand
    finishes first)."""

    name: ClassVar[str] = "CancelBatch"
    result_type: ClassVar[type[Result]] = BatchResult
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_BATCH,)

    batch_id: UUID

    def execute(self, tx: Tx) -> BatchResult:
        row = _locked(tx, self.batch_id)
        (needed,) = self.permits
        check(tx, needed, batch=row.id)
        if BatchState(row.state).is_final:
            raise Conflict(
                f"batch {self.batch_id} is already {row.state}", batch_id=str(self.batch_id)
            )
        store.set_state(tx.conn, self.batch_id, BatchState.CANCELLED, tx.now)
        store.delete_job(tx.conn, self.batch_id)
        _record(tx, AuditOperation.DELETE, row, remaining=row.remaining)
        return BatchResult(str(row.id), row.type, BatchState.CANCELLED, row.total)


@dataclass(frozen=True)
class RetryBatchItems:
    """Make a batch's failed items pending again: a completed batch runs again for them; a
    suspended one keeps them until it is resumed."""

    name: ClassVar[str] = "RetryBatchItems"
    result_type: ClassVar[type[Result]] = BatchResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_BATCH,)

    batch_id: UUID

    def execute(self, tx: Tx) -> BatchResult:
        row = _locked(tx, self.batch_id)
        (needed,) = self.permits
        check(tx, needed, batch=row.id)
        if row.state == BatchState.CANCELLED:
            raise Conflict(f"batch {self.batch_id} is cancelled", batch_id=str(self.batch_id))
        if row.failed == 0:
            raise Conflict(
                f"batch {self.batch_id} has no failed items", batch_id=str(self.batch_id)
            )
        again = store.retry_failed(tx.conn, self.batch_id, tx.now)
        state = BatchState(row.state)
        if state == BatchState.COMPLETED:
            state = BatchState.RUNNING
            store.set_state(tx.conn, self.batch_id, state, tx.now)
        if state == BatchState.RUNNING:
            store.schedule_job(tx.conn, self.batch_id, tx.now, tx.settings.default_retries)
            tx.announcements.add(JOB_CHANNEL)
        _record(tx, AuditOperation.RETRY_BATCH, row, items=again)
        return BatchResult(str(row.id), row.type, state, row.total, again)
