"""Job acquisition and look-ups. Executing a job is a command (`engine.commands.jobs`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from engine.sql import covers
from engine.sql.filters import Where
from engine.states import DefinitionState, InstanceState, JobKind
from engine.store.columns import fetch_all, fetch_one, fetch_where

# The highest priority first (camunda:jobPriority), then the earliest due; a suspended job waits.
# A job of no instance (a timer start event's) waits while its definition is suspended, but for a
# scheduled suspension's, which may be the one to activate it. The
# instance check is a scalar subquery on purpose: it looks up each candidate job's instance.
# Written as EXISTS under the OR, the planner may hash every active instance instead, on every
# acquisition, so that its cost grows with instances that have no job due (see
# tests/jobs/test_scaling.py).
ACQUIRE = """
UPDATE job SET lock_owner = %(owner)s, lock_expires_at = %(lock_until)s
WHERE id IN (
    SELECT j.id FROM job j
    WHERE j.due_at <= %(now)s AND j.retries > 0 AND NOT j.suspended
      AND (j.lock_expires_at IS NULL OR j.lock_expires_at < %(now)s)
      AND ((SELECT p.state FROM process_instance p WHERE p.id = j.instance_id) = %(active)s
           OR j.instance_id IS NULL AND (j.kind = %(scheduled)s OR coalesce(
               (SELECT d.state FROM process_definition d WHERE d.id = j.definition_id),
               %(usable)s) = %(usable)s))
    ORDER BY j.priority DESC, j.due_at
    LIMIT %(limit)s
    FOR UPDATE OF j SKIP LOCKED
)
RETURNING id, kind, instance_id, due_at
"""


# The values ACQUIRE and NEXT_ACQUIRABLE compare with: an instance's state that lets its jobs
# run, a definition's that lets its start timers run, the kind of job that runs whatever its
# definition's state.
ACQUIRABLE: dict[str, str] = {
    "active": InstanceState.ACTIVE,
    "usable": DefinitionState.ACTIVE,
    "scheduled": JobKind.SUSPENSION,
}


@dataclass(frozen=True)
class AcquiredJob:
    id: UUID
    kind: str
    instance_id: UUID | None
    due_at: datetime


@dataclass(frozen=True)
class JobInfo:
    id: UUID
    kind: str
    instance_id: UUID | None
    token_id: UUID | None
    node_id: str
    definition_id: str | None
    due_at: datetime
    lock_owner: str | None
    lock_expires_at: datetime | None
    retries: int
    timer_text: str | None
    repetitions_left: int | None
    error_message: str | None
    created_at: datetime
    priority: int
    suspended: bool
    due_shift_ms: int


_COLUMNS = (
    "id, kind, instance_id, token_id, node_id, definition_id, due_at, lock_owner, lock_expires_at, "
    "retries, timer_text, repetitions_left, error_message, created_at, priority, suspended, "
    "due_shift_ms"
)


def acquire(
    conn: psycopg.Connection[Any], owner: str, now: datetime, limit: int, lock_for: timedelta
) -> list[AcquiredJob]:
    """Lock up to `limit` due jobs for `owner` in one statement. Expired locks (a crashed
    executor's) are taken over; jobs locked by a live executor are skipped, never waited for."""
    return fetch_all(
        conn,
        AcquiredJob,
        ACQUIRE,
        {
            "owner": owner,
            "now": now,
            "lock_until": now + lock_for,
            "limit": limit,
            **ACQUIRABLE,
        },
    )


# The jobs the request's principal may read: those of instances they may read (a job names its
# definition, a small table's key: cheaper than its instance's).
READABLE = covers.instance(
    covers.key_of_definition("definition_id"), "instance_id", tenant="tenant_id"
)


def readable(conn: psycopg.Connection[Any], job_id: UUID) -> JobInfo | None:
    """The job, if the request's principal may read its instance."""
    where = Where()
    where.equals("id", job_id)
    where.authorized(READABLE)
    found = fetch_where(conn, JobInfo, f"SELECT {_COLUMNS} FROM job", where, "id", 1)
    return found[0] if found else None


def get(conn: psycopg.Connection[Any], job_id: UUID, *, lock: bool = False) -> JobInfo | None:
    suffix = " FOR UPDATE" if lock else ""
    return fetch_one(conn, JobInfo, f"SELECT {_COLUMNS} FROM job WHERE id = %s{suffix}", (job_id,))


def query(
    conn: psycopg.Connection[Any],
    *,
    instance_id: UUID | None = None,
    with_retries_left: bool | None = None,
    limit: int = 1000,
    after: tuple[datetime, UUID] | None = None,
) -> list[JobInfo]:
    """Jobs matching the filters, earliest due first; with `after` (due_at, id), only those that
    come after it (the next page)."""
    where = Where()
    where.equals("instance_id", instance_id)
    if with_retries_left is not None:
        # Written out, as the predicate of the partial index on due jobs.
        where.fixed("retries > 0" if with_retries_left else "NOT retries > 0")
    where.keyset("(due_at, id)", after, descending=False)
    where.authorized(READABLE)
    return fetch_where(conn, JobInfo, f"SELECT {_COLUMNS} FROM job", where, "due_at, id", limit)


# When the first job becomes acquirable: due, unlocked or with an expired lock, and with an active
# instance (or none: a timer start event of an active definition, a batch's or the cleanup's).
# Mirrors ACQUIRE's conditions. A read, so an idle
# executor can look as often as it is woken without writing (and notifying) anything.
NEXT_ACQUIRABLE = """
SELECT min(GREATEST(j.due_at, CASE WHEN j.lock_expires_at >= %(now)s
                                   THEN j.lock_expires_at ELSE j.due_at END))
FROM job j
WHERE j.retries > 0 AND NOT j.suspended
  AND j.due_at <= %(now)s + %(horizon)s * interval '1 second'
  AND ((SELECT p.state FROM process_instance p WHERE p.id = j.instance_id) = %(active)s
       OR j.instance_id IS NULL AND (j.kind = %(scheduled)s OR coalesce(
           (SELECT d.state FROM process_definition d WHERE d.id = j.definition_id),
           %(usable)s) = %(usable)s))
"""


def next_acquirable(
    conn: psycopg.Connection[Any], now: datetime, horizon: float
) -> datetime | None:
    """When the first job becomes acquirable, if within `horizon` seconds of `now`."""
    first = conn.execute("SELECT min(due_at) FROM job WHERE retries > 0").fetchone()
    if first is None or first[0] is None or (first[0] - now).total_seconds() >= horizon:
        return None  # the common idle case, answered from the index alone
    row = conn.execute(
        NEXT_ACQUIRABLE,
        {
            "now": now,
            "horizon": horizon,
            **ACQUIRABLE,
        },
    ).fetchone()
    found: datetime | None = row[0] if row else None
    return found


def release(conn: psycopg.Connection[Any], owner: str, job_ids: list[UUID]) -> int:
    """Clear `owner`'s own locks on `job_ids`; the number released."""
    rows = conn.execute(
        "UPDATE job SET lock_owner = NULL, lock_expires_at = NULL "
        "WHERE id = ANY(%s) AND lock_owner = %s RETURNING id",
        (job_ids, owner),
    ).fetchall()
    return len(rows)


def update_start_job(
    conn: psycopg.Connection[Any],
    job: JobInfo,
    *,
    due_at: datetime | None,
    retries: int,
    repetitions_left: int | None,
    error_message: str | None,
    error_details: str | None = None,
    due_shift_ms: int = 0,
) -> None:
    """A timer start event's job (no instance) after a firing or a failure: reschedule, or delete
    when `due_at` is None."""
    if due_at is None:
        conn.execute("DELETE FROM job WHERE id = %s", (job.id,))
        return
    conn.execute(
        "UPDATE job SET due_at = %s, retries = %s, repetitions_left = %s, error_message = %s, "
        "error_details = %s, due_shift_ms = %s, lock_owner = NULL, lock_expires_at = NULL "
        "WHERE id = %s",
        (due_at, retries, repetitions_left, error_message, error_details, due_shift_ms, job.id),
    )


def set_start_job(
    conn: psycopg.Connection[Any],
    job_id: UUID,
    *,
    suspended: bool | None = None,
    priority: int | None = None,
    due_at: datetime | None = None,
    due_shift_ms: int | None = None,
) -> None:
    """A timer start event's job (no instance) suspended or activated, given a priority or a due
    date by an operator (None: unchanged)."""
    conn.execute(
        "UPDATE job SET suspended = coalesce(%s, suspended), priority = coalesce(%s, priority), "
        "due_at = coalesce(%s, due_at), due_shift_ms = coalesce(%s, due_shift_ms) WHERE id = %s",
        (suspended, priority, due_at, due_shift_ms, job_id),
    )


def stacktrace_of(conn: psycopg.Connection[Any], job_id: UUID) -> str | None:
    """The last failure's full text of a job, for a command that keeps it."""
    row = conn.execute("SELECT error_details FROM job WHERE id = %s", (job_id,)).fetchone()
    return row[0] if row else None


def instance_of(conn: psycopg.Connection[Any], job_id: UUID) -> tuple[bool, UUID | None]:
    """(exists, instance id) of a job."""
    row = conn.execute("SELECT instance_id FROM job WHERE id = %s", (job_id,)).fetchone()
    return (row is not None, row[0] if row else None)


def schedule_suspension(
    conn: psycopg.Connection[Any],
    job_id: UUID,
    node_id: str,
    *,
    definition_id: str | None,
    tenant_id: str | None,
    due_at: datetime,
    retries: int,
    now: datetime,
    configuration: dict[str, Any],
) -> None:
    """A scheduled suspension's job (no instance), due at `due_at`, doing what `configuration`
    says (engine/commands/scheduled_suspension.py)."""
    conn.execute(
        "INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, due_at, "
        "retries, created_at, tenant_id, configuration) "
        "VALUES (%s, %s, NULL, NULL, %s, %s, %s, %s, %s, %s, %s)",
        (
            job_id,
            JobKind.SUSPENSION,
            node_id,
            definition_id,
            due_at,
            retries,
            now,
            tenant_id,
            Jsonb(configuration),
        ),
    )


def configuration_of(conn: psycopg.Connection[Any], job_id: UUID) -> dict[str, Any]:
    """What a scheduled suspension's job changes (empty for another job)."""
    row = conn.execute("SELECT configuration FROM job WHERE id = %s", (job_id,)).fetchone()
    found: dict[str, Any] = row[0] if row and isinstance(row[0], dict) else {}
    return found


def delete(conn: psycopg.Connection[Any], job_id: UUID) -> None:
    conn.execute("DELETE FROM job WHERE id = %s", (job_id,))
