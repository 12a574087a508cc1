"""The statements of the history cleanup: find and lock families of ended instances past their
removal time, delete them with every row of theirs, expire idempotency entries and outbox rows,
and keep the cleanup job and the record of its runs. The rules are engine/db/retention.py's; the
command is engine/commands/cleanup.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from engine import schema
from engine.sql.filters import Where
from engine.states import CleanupState, InstanceState, JobKind
from engine.store import outbox, work_log
from engine.store.columns import fetch_one

# The one cleanup job: every executor may run it, one batch at a time (its row is locked).
CLEANUP_JOB_ID = UUID("00000000-0000-4000-8000-00000000c1ea")
CLEANUP_NODE_ID = "historyCleanup"

FINAL_STATES = [state.value for state in InstanceState if state.is_final]


def _dependents() -> tuple[str, ...]:
    """Every table whose rows belong to an instance (a foreign key to process_instance): what
    goes with the instance. Read off the schema, so a table added later goes too."""
    instance = schema.process_instance
    return tuple(
        table.name
        for table in schema.metadata.sorted_tables
        if any(fk.column.table is instance for fk in table.foreign_keys)
    )


# The instance's audit entries go with it too: they name it without a foreign key (an entry
# outlives a cancelled instance until the cleanup removes its history); and the alerts it raised
# (kept, without a foreign key, so that an alert is raised once).
DEPENDENTS = (*_dependents(), schema.audit_entry.name, schema.alert_crossing.name)

# A family still running: a called instance of root `{root}` has not ended. Its root is never
# deleted, however long ago it ended.
_RUNNING_FAMILY = """EXISTS (
    SELECT 1 FROM process_instance m
    WHERE m.super_instance_id IS NOT NULL AND m.root_instance_id = {root}
      AND NOT (m.state = ANY(%(final)s)))"""

# Each definition's ended roots past its time to live whose families have ended, oldest first;
# a definition with no time to live (and no default) contributes none; `{held}`, a condition on
# the root (see `lock_families`). Read without locks.
CANDIDATES = f"""
SELECT c.id FROM process_definition d
CROSS JOIN LATERAL (
    SELECT i.id FROM process_instance i
    WHERE i.definition_id = d.id AND i.super_instance_id IS NULL AND i.ended_at IS NOT NULL
      AND i.ended_at <= %(now)s - make_interval(days => COALESCE(d.history_ttl_days, %(ttl)s::int))
      AND {{held}}
      AND NOT {_RUNNING_FAMILY.format(root="i.id")}
    ORDER BY i.ended_at
    LIMIT %(limit)s
) c
LIMIT %(limit)s
"""


def _lock_roots(skip_locked: bool) -> str:
    """The roots among `ids` still there, ended, with their families ended, locked. Commands
    lock a family's root first, so no command runs on a family while it is deleted. With
    `skip_locked` a root another transaction holds is left out instead of waited for."""
    return f"""
SELECT p.id FROM process_instance p
WHERE p.id = ANY(%(ids)s) AND p.super_instance_id IS NULL AND p.state = ANY(%(final)s)
  AND NOT {_RUNNING_FAMILY.format(root="p.id")}
FOR UPDATE OF p{" SKIP LOCKED" if skip_locked else ""}
"""


# The cleanup never waits for a command nor for another cleanup; a batch deleting one family
# waits for the command that holds its root.
LOCK_ROOTS = _lock_roots(skip_locked=True)
LOCK_ROOT = _lock_roots(skip_locked=False)


def _called(conn: psycopg.Connection[Any], roots: list[UUID]) -> list[UUID]:
    """Every instance called below the roots `roots`."""
    rows = conn.execute(
        "SELECT id FROM process_instance "
        "WHERE super_instance_id IS NOT NULL AND root_instance_id = ANY(%s)",
        (roots,),
    ).fetchall()
    return [row[0] for row in rows]


@dataclass(frozen=True)
class Families:
    """Roots found past their removal time, the ones locked for deletion, and every instance of
    their families."""

    found: int
    roots: list[UUID]
    members: list[UUID]


def lock_families(
    conn: psycopg.Connection[Any],
    now: datetime,
    default_ttl: int | None,
    limit: int,
    held: datetime | None = None,
) -> Families:
    """Lock up to `limit` families past their removal time; with `held`, only those whose root
    ended before it (the events of a family that ended later may still be on their way to a
    consumer)."""
    ended = Where()
    ended.below("i.ended_at", held)
    found = conn.execute(
        sql.SQL(CANDIDATES).format(held=ended.conditions()),
        {"now": now, "ttl": default_ttl, "limit": limit, "final": FINAL_STATES, **ended.params()},
    )
    ids = [row[0] for row in found.fetchall()]
    if not ids:
        return Families(0, [], [])
    roots = [
        row[0] for row in conn.execute(LOCK_ROOTS, {"ids": ids, "final": FINAL_STATES}).fetchall()
    ]
    return Families(len(ids), roots, roots + _called(conn, roots))


def lock_family(conn: psycopg.Connection[Any], root_id: UUID) -> list[UUID] | None:
    """Lock the ended root `root_id` of an ended family for deletion, whatever its time to live;
    every instance of its family, or None when it is no such root."""
    found = conn.execute(LOCK_ROOT, {"ids": [root_id], "final": FINAL_STATES}).fetchone()
    if found is None:
        return None
    return [root_id, *_called(conn, [root_id])]


def delete_instances(conn: psycopg.Connection[Any], ids: list[UUID]) -> int:
    """Delete instances `ids` with every row of theirs; the number of instances deleted."""
    if not ids:
        return 0
    for table in DEPENDENTS:
        conn.execute(
            sql.SQL("DELETE FROM {} WHERE instance_id = ANY(%s)").format(sql.Identifier(table)),
            (ids,),
        )
    return _count(conn, "DELETE FROM process_instance WHERE id = ANY(%(ids)s)", {"ids": ids})


def _count(
    conn: psycopg.Connection[Any], delete: str | sql.Composable, params: dict[str, Any]
) -> int:
    """The rows `delete` deleted (counted in the statement: in a pipeline, a cursor's rowcount
    is not known yet)."""
    statement = sql.SQL("WITH deleted AS ({} RETURNING 1) SELECT count(*) FROM deleted")
    row = conn.execute(
        statement.format(sql.SQL(delete) if isinstance(delete, str) else delete), params
    ).fetchone()
    assert row is not None
    return int(row[0])


def expire_idempotency(conn: psycopg.Connection[Any], before: datetime, limit: int) -> int:
    """Forget up to `limit` idempotency entries first used before `before`, oldest first."""
    return _count(
        conn,
        "DELETE FROM idempotency WHERE (principal, key) IN ("
        "  SELECT principal, key FROM idempotency WHERE created_at < %(before)s "
        "  ORDER BY created_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)",
        {"before": before, "limit": limit},
    )


def expire_evaluations(
    conn: psycopg.Connection[Any], now: datetime, ttl_days: int | None, limit: int
) -> int:
    """Delete up to `limit` decision evaluations made outside any instance (direct ones) past
    their decision's time to live (camunda:historyTimeToLive, else the default), oldest first;
    an instance's evaluations go with the instance."""
    return _count(
        conn,
        "DELETE FROM decision_evaluation WHERE id IN ("
        "  SELECT e.id FROM decision_evaluation e JOIN decision_definition d "
        "  ON d.id = e.definition_id WHERE e.instance_id IS NULL AND e.evaluated_at <= "
        "  %(now)s - make_interval(days => COALESCE(d.history_ttl_days, %(ttl)s::int)) "
        "  ORDER BY e.evaluated_at LIMIT %(limit)s FOR UPDATE OF e SKIP LOCKED)",
        {"now": now, "ttl": ttl_days, "limit": limit},
    )


def expire_work_log(
    conn: psycopg.Connection[Any], now: datetime, ttl_days: int | None, limit: int
) -> int:
    """Delete up to `limit` work log rows of no instance (the history cleanup job's, batch
    jobs', timer start events') logged more than the default time to live ago, oldest first; an
    instance's rows go with the instance. None: no time to live, nothing expires."""
    if ttl_days is None:
        return 0
    return _count(
        conn,
        "DELETE FROM work_log WHERE id IN ("
        "  SELECT id FROM work_log WHERE instance_id IS NULL AND logged_at <= %(before)s "
        "  ORDER BY logged_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED)",
        {"before": now - timedelta(days=ttl_days), "limit": limit},
    )


def trim_outbox(
    conn: psycopg.Connection[Any], before: datetime, floor: int | None, limit: int
) -> int:
    """Delete outbox rows written before `before` and below `floor` (no bound when None),
    from the lowest seq on, at most `limit`."""
    where = Where()
    where.below("h.created_at", before)
    # A row is kept while any of its events is at or above the floor.
    where.below("h.seq", None if floor is None else outbox.row_of(floor))
    oldest = sql.SQL("SELECT seq, created_at FROM outbox ORDER BY seq") + where.limit(limit)
    return _count(
        conn,
        sql.SQL("DELETE FROM outbox WHERE seq IN (SELECT seq FROM ({}) h{})").format(
            oldest, where.sql()
        ),
        where.params(),
    )


# Events are written in their instance's transactions, at most this long before their rows are
# visible: a family that ended this long before the oldest row a consumer still needs has no
# event at or above it.
TRANSACTION_MARGIN = timedelta(minutes=5)


def held_since(conn: psycopg.Connection[Any], floor: int | None) -> datetime | None:
    """When the oldest outbox row a consumer still needs (seq `floor` on) was written, less
    TRANSACTION_MARGIN; None when no consumer holds any back. With no row left at or above the
    floor, the latest row's time (less the margin) bounds what is held."""
    if floor is None:
        return None
    row = conn.execute(
        "SELECT coalesce((SELECT created_at FROM outbox WHERE seq >= %s ORDER BY seq LIMIT 1), "
        "(SELECT created_at FROM outbox ORDER BY seq DESC LIMIT 1), now())",
        (outbox.row_of(floor),),
    ).fetchone()
    assert row is not None
    held: datetime = row[0]
    return held - TRANSACTION_MARGIN


# -- the job --------------------------------------------------------------------------------------


def schedule_job(conn: psycopg.Connection[Any], due: datetime, now: datetime, retries: int) -> bool:
    """Create the cleanup job due at `due` unless it exists; whether it was created."""
    created = conn.execute(
        "INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, due_at, "
        "retries, created_at) VALUES (%s, %s, NULL, NULL, %s, NULL, %s, %s, %s) "
        "ON CONFLICT (id) DO NOTHING RETURNING id",
        (CLEANUP_JOB_ID, JobKind.HISTORY_CLEANUP, CLEANUP_NODE_ID, due, retries, now),
    ).fetchone()
    if created is not None:
        work_log.log_made(
            conn, CLEANUP_JOB_ID, JobKind.HISTORY_CLEANUP, CLEANUP_NODE_ID, due, retries
        )
    return created is not None


def lock_job(conn: psycopg.Connection[Any]) -> bool:
    """Lock the cleanup job's row for the transaction; whether it exists."""
    found = conn.execute("SELECT 1 FROM job WHERE id = %s FOR UPDATE", (CLEANUP_JOB_ID,))
    return found.fetchone() is not None


def make_due(conn: psycopg.Connection[Any], due: datetime, retries: int) -> None:
    """Due at `due` with fresh retries (a lock an executor holds stays: it runs the job)."""
    conn.execute(
        "UPDATE job SET due_at = %s, retries = %s, error_message = NULL WHERE id = %s",
        (due, retries, CLEANUP_JOB_ID),
    )


def reschedule(conn: psycopg.Connection[Any], due: datetime | None, retries: int) -> None:
    """After a batch: due again at `due`, unlocked and with fresh retries; deleted when None."""
    if due is None:
        conn.execute("DELETE FROM job WHERE id = %s", (CLEANUP_JOB_ID,))
        return
    conn.execute(
        "UPDATE job SET due_at = %s, retries = %s, error_message = NULL, lock_owner = NULL, "
        "lock_expires_at = NULL WHERE id = %s",
        (due, retries, CLEANUP_JOB_ID),
    )


# -- runs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CleanupRun:
    id: int
    state: str
    manual: bool
    started_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    batches: int
    instances: int
    idempotency: int
    outbox: int


RUN_COLUMNS = (
    "id, state, manual, started_at, updated_at, finished_at, batches, instances, idempotency, "
    "outbox"
)


def running(conn: psycopg.Connection[Any]) -> CleanupRun | None:
    """The run in progress (callers hold the job's row lock, which serialises runs)."""
    return fetch_one(
        conn,
        CleanupRun,
        f"SELECT {RUN_COLUMNS} FROM history_cleanup_run WHERE state = %s ORDER BY id DESC LIMIT 1",
        (CleanupState.RUNNING,),
    )


def start_run(conn: psycopg.Connection[Any], now: datetime, *, manual: bool) -> CleanupRun:
    run = fetch_one(
        conn,
        CleanupRun,
        "INSERT INTO history_cleanup_run (state, manual, started_at, updated_at, batches, "
        "instances, idempotency, outbox) VALUES (%s, %s, %s, %s, 0, 0, 0, 0) "
        f"RETURNING {RUN_COLUMNS}",
        (CleanupState.RUNNING, manual, now, now),
    )
    assert run is not None
    return run


def mark_manual(conn: psycopg.Connection[Any], run_id: int) -> None:
    conn.execute("UPDATE history_cleanup_run SET manual = true WHERE id = %s", (run_id,))


def record_batch(
    conn: psycopg.Connection[Any],
    run_id: int,
    now: datetime,
    counts: tuple[int, int, int],
    state: CleanupState,
) -> None:
    """Add a batch's deletions (instances, idempotency entries, outbox rows) to the run; a final
    `state` ends it."""
    instances, idempotency, outbox = counts
    conn.execute(
        "UPDATE history_cleanup_run SET batches = batches + 1, instances = instances + %s, "
        "idempotency = idempotency + %s, outbox = outbox + %s, updated_at = %s, state = %s, "
        "finished_at = %s WHERE id = %s",
        (
            instances,
            idempotency,
            outbox,
            now,
            state,
            None if state is CleanupState.RUNNING else now,
            run_id,
        ),
    )


def forget_runs(conn: psycopg.Connection[Any], keep: int) -> None:
    """Keep only the latest `keep` runs."""
    conn.execute(
        "DELETE FROM history_cleanup_run WHERE id < ("
        "  SELECT min(id) FROM (SELECT id FROM history_cleanup_run ORDER BY id DESC LIMIT %s) k)",
        (keep,),
    )
