"""Instances retrying now: a job of theirs, or an open external task, failed and still has
retries left. The early warning before an incident: when the retries run out, the failure
becomes an incident and the instance stops retrying.

A job counts its retries down as it fails (engine/commands/jobs.py `FailJob`) and keeps the
last error; it runs again at its `due_at`. An external task's retries stay null until a worker
reports a failure; a failure with retries left frees the task and sets `lock_expires_at` to the
end of the worker's retry timeout: the task may be fetched again from then on
(engine/commands/external_tasks.py `FailExternalTask`).

Every statement here reads the two partial indexes over those rows only (`ix_job_retrying`,
`ix_external_task_retrying`): their conditions below are the indexes' predicates, literally,
so that the planner can use them whatever the size of the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

import psycopg
from psycopg import sql

from engine.sql import covers
from engine.sql.filters import Where, state_literal
from engine.states import TaskState
from engine.store.columns import fetch_all

# A job that failed and has retries left (alias j), as `ix_job_retrying`'s predicate.
JOB_RETRYING = "j.error_message IS NOT NULL AND j.retries > 0"
# An open external task that a worker failed, with retries left (alias e), as
# `ix_external_task_retrying`'s predicate.
TASK_RETRYING = (
    f"e.state = {state_literal(TaskState.OPEN)} AND e.retries > 0 AND e.error_message IS NOT NULL"
)

# The ids of the instances retrying now, once per failed job or task; null for a timer start
# event's job, which belongs to no instance (`IN` and `count(DISTINCT ...)` pass nulls over).
RETRYING_IDS = (
    "SELECT j.instance_id FROM job j WHERE " + JOB_RETRYING + " "
    "UNION ALL SELECT e.instance_id FROM external_task e WHERE " + TASK_RETRYING
)


@dataclass(frozen=True)
class RetryingWork:
    """A failed job or external task with retries left: its last error, the retries left and
    when it is tried next. `next_attempt_at`: a job's due time; for an external task no worker
    holds, when it may be fetched again (None: at once). `held_by`, `held_until`: the job
    executor or the worker trying it again now, and until when its lock holds."""

    kind: Literal["job", "external_task"]
    id: UUID
    instance_id: UUID
    node_id: str
    error_message: str
    retries: int
    next_attempt_at: datetime | None
    held_by: str | None
    held_until: datetime | None

    def in_progress(self, now: datetime) -> bool:
        """Being tried again right now: a job executor or a worker holds an unexpired lock."""
        return self.held_by is not None and self.held_until is not None and self.held_until > now


def count(conn: psycopg.Connection[Any]) -> int:
    """How many instances are retrying now (each once, however many of its jobs and tasks
    failed): two index-only reads of the partial indexes."""
    where = Where()
    where.authorized(
        covers.instance(
            covers.key_of("r.instance_id"),
            "r.instance_id",
            tenant=covers.tenant_of("r.instance_id"),
        )
    )
    statement = sql.SQL("SELECT count(DISTINCT instance_id) FROM (" + RETRYING_IDS + ") AS r")
    row = conn.execute(statement + where.sql(), where.params()).fetchone()
    return int(row[0]) if row else 0


def counts(conn: psycopg.Connection[Any], instance_ids: list[UUID]) -> dict[UUID, int]:
    """Of `instance_ids`, those retrying, with how many of their jobs and tasks failed and have
    retries left."""
    if not instance_ids:
        return {}
    rows = conn.execute(
        "SELECT instance_id, count(*) FROM ("
        "  SELECT j.instance_id FROM job j WHERE j.instance_id = ANY(%(ids)s) AND "
        + JOB_RETRYING
        + "  UNION ALL SELECT e.instance_id FROM external_task e "
        "  WHERE e.instance_id = ANY(%(ids)s) AND " + TASK_RETRYING + ") AS r GROUP BY instance_id",
        {"ids": instance_ids},
    ).fetchall()
    return {instance_id: n for instance_id, n in rows}


def of_instance(conn: psycopg.Connection[Any], instance_id: UUID) -> list[RetryingWork]:
    """The failed jobs and external tasks of `instance_id` that have retries left, the one tried
    next first."""
    return fetch_all(
        conn,
        RetryingWork,
        "SELECT 'job' AS kind, j.id, j.instance_id, j.node_id, j.error_message, j.retries, "
        "j.due_at AS next_attempt_at, j.lock_owner AS held_by, j.lock_expires_at AS held_until "
        "FROM job j WHERE j.instance_id = %(id)s AND " + JOB_RETRYING + " "
        "UNION ALL SELECT 'external_task', e.id, e.instance_id, e.node_id, e.error_message, "
        "e.retries, CASE WHEN e.worker_id IS NULL THEN e.lock_expires_at END, e.worker_id, "
        "CASE WHEN e.worker_id IS NOT NULL THEN e.lock_expires_at END "
        "FROM external_task e WHERE e.instance_id = %(id)s AND " + TASK_RETRYING + " "
        "ORDER BY next_attempt_at NULLS FIRST, id",
        {"id": instance_id},
    )
