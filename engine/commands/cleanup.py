"""The history cleanup: batch after batch, each one transaction, delete the families of ended
instances past their removal time with every row of theirs (their decision evaluations too),
delete direct decision evaluations past their decision's time to live, forget expired
idempotency entries and delete outbox rows every consumer has passed (rules:
engine/db/retention.py).

It runs as one job (kind history-cleanup, a well-known id) that the job executors acquire like
any other, so one batch runs at a time whatever the number of executors; a batch run outside the
job (`CleanupBatch`) is safe beside it, since each locks the roots it deletes with SKIP LOCKED.
While batches remain the job is due again at once; a run then ends, and the job is due at the
next start of the daily window (or is deleted, with no window). A run started by hand goes on
until nothing is left, inside the window or not. Every run is recorded in history_cleanup_run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import ADMINISTER, ENGINE_WORK, OPERATE, Permit
from engine.db.retention import outbox_floor
from engine.errors import BadRequest
from engine.observe import metrics
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation, CleanupState
from engine.store import cleanup as store
from engine.store.cleanup import CLEANUP_JOB_ID

__all__ = [
    "CLEANUP_JOB_ID",
    "BatchResult",
    "CleanupBatch",
    "CleanupJobResult",
    "ScheduleHistoryCleanup",
    "StartHistoryCleanup",
    "run_cleanup_job",
]

log = logging.getLogger("engine.cleanup")

# Idempotency entries and outbox rows deleted per batch, per family of instances.
_ROWS_PER_FAMILY = 10


@dataclass(frozen=True)
class BatchResult(Result):
    instances: int = 0
    idempotency: int = 0
    outbox: int = 0
    # Whether more may be left past its time (a batch was full, or rows were locked).
    more: bool = False


def cleanup_batch(tx: Tx) -> BatchResult:
    """One batch in the caller's transaction: all or nothing."""
    settings = tx.settings.retention
    floor = outbox_floor(tx.conn)
    families = store.lock_families(
        tx.conn,
        tx.now,
        settings.history_ttl_days,
        settings.batch_size,
        store.held_since(tx.conn, floor),
    )
    instances = store.delete_instances(tx.conn, families.members)
    rows = settings.batch_size * _ROWS_PER_FAMILY
    idempotency = store.expire_idempotency(
        tx.conn, tx.now - timedelta(days=settings.idempotency_days), rows
    )
    outbox = store.trim_outbox(tx.conn, tx.now - timedelta(days=settings.outbox_days), floor, rows)
    evaluations = store.expire_evaluations(tx.conn, tx.now, settings.history_ttl_days, rows)
    logged = store.expire_work_log(tx.conn, tx.now, settings.history_ttl_days, rows)
    more = (
        families.found >= settings.batch_size
        or len(families.roots) < families.found
        or idempotency >= rows
        or outbox >= rows
        or evaluations >= rows
        or logged >= rows
    )
    # Counted as the batch's last step: only a failed commit can take the rows back now.
    for kind, count in (("instances", instances), ("idempotency", idempotency), ("outbox", outbox)):
        if count:
            metrics.CLEANUP_DELETED.labels(kind).inc(count)
    return BatchResult(instances, idempotency, outbox, more)


@dataclass(frozen=True)
class CleanupBatch:
    """One batch of the cleanup outside the job (the job runs `cleanup_batch` itself)."""

    name: ClassVar[str] = "CleanupBatch"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = BatchResult

    def execute(self, tx: Tx) -> BatchResult:
        return cleanup_batch(tx)


def run_cleanup_job(tx: Tx) -> None:
    """The cleanup job's work, in the transaction that holds its row locked: one batch of the run
    in progress (a new run when none is), then the job due again at once, or the run ended."""
    settings = tx.settings.retention
    window = settings.window
    retries = tx.settings.default_retries
    tx.announcements.add(JOB_CHANNEL)
    run = store.running(tx.conn)
    manual = run is not None and run.manual
    if not manual and window is None:
        # Scheduled by a process whose window has since been switched off: nothing to do.
        store.reschedule(tx.conn, None, retries)
        return
    if window is not None and not manual and not window.contains(tx.now):
        if run is not None:
            store.record_batch(tx.conn, run.id, tx.now, (0, 0, 0), CleanupState.STOPPED)
        store.reschedule(tx.conn, window.next_start(tx.now), retries)
        return
    if run is None:
        run = store.start_run(tx.conn, tx.now, manual=False)
    result = cleanup_batch(tx)
    counts = (result.instances, result.idempotency, result.outbox)
    if result.more:
        store.record_batch(tx.conn, run.id, tx.now, counts, CleanupState.RUNNING)
        store.reschedule(tx.conn, tx.now, retries)
        return
    store.record_batch(tx.conn, run.id, tx.now, counts, CleanupState.FINISHED)
    store.forget_runs(tx.conn, settings.runs_kept)
    store.reschedule(tx.conn, window.next_start(tx.now) if window else None, retries)
    log.info("history cleanup run %d finished", run.id)


@dataclass(frozen=True)
class CleanupJobResult(Result):
    # The cleanup job's id; None when no job is scheduled (no window, nothing started).
    job_id: str | None


@dataclass(frozen=True)
class ScheduleHistoryCleanup:
    """Make sure the cleanup job exists when a daily window is set: due now inside the window,
    else at its next start. A job executor runs this once as it starts."""

    name: ClassVar[str] = "ScheduleHistoryCleanup"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = CleanupJobResult

    def execute(self, tx: Tx) -> CleanupJobResult:
        window = tx.settings.retention.window
        if window is None:
            return CleanupJobResult(None)
        if store.schedule_job(tx.conn, window.due(tx.now), tx.now, tx.settings.default_retries):
            tx.announcements.add(JOB_CHANNEL)
        return CleanupJobResult(str(CLEANUP_JOB_ID))


@dataclass(frozen=True)
class StartHistoryCleanup:
    """Start the cleanup by hand (Camunda's POST /history/cleanup). `immediately_due`: the job
    is due now and the run goes on until nothing is left past its time, window or not;
    otherwise the job is due at the next start of the daily window."""

    name: ClassVar[str] = "StartHistoryCleanup"
    permits: ClassVar[tuple[Permit, ...]] = (OPERATE,)
    result_type: ClassVar[type[Result]] = CleanupJobResult

    immediately_due: bool = True

    def execute(self, tx: Tx) -> CleanupJobResult:
        window = tx.settings.retention.window
        retries = tx.settings.default_retries
        if self.immediately_due:
            due = tx.now
        elif window is not None:
            due = window.next_start(tx.now)
        else:
            raise BadRequest(
                "immediatelyDue=false schedules the cleanup in its daily window, and none is set "
                "(INTERLOCK_CLEANUP_WINDOW)",
                field="immediatelyDue",
            )
        if not store.lock_job(tx.conn):
            # Created here, or by a concurrent start whose commit the insert waited for.
            store.schedule_job(tx.conn, due, tx.now, retries)
            store.lock_job(tx.conn)
        store.make_due(tx.conn, due, retries)
        if self.immediately_due:
            run = store.running(tx.conn)
            if run is None:
                store.start_run(tx.conn, tx.now, manual=True)
            else:
                store.mark_manual(tx.conn, run.id)
        tx.announcements.add(JOB_CHANNEL)
        audit.record(
            tx,
            AuditOperation.CLEANUP,
            AuditEntity.HISTORY,
            entity_id=str(CLEANUP_JOB_ID),
            details={"immediately_due": self.immediately_due},
        )
        return CleanupJobResult(str(CLEANUP_JOB_ID))
