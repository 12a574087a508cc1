"""The rows of the work log (`work_log`): Camunda's job log and external task log.

An instance command's rows travel in its one write (engine/store/persist.py, `rows_of`): a job
or external task made is logged created, one removed without running deleted, an external task
completed (or ended by its worker's BPMN error) successful, and the attempts the command logged
itself (`InstanceRun.log_attempt`: a job that ran, a failure) as it logged them. A command on a
job of no instance (a timer start event's, the history cleanup's, a batch's) writes its rows
with `insert`, in one statement."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

import orjson
import psycopg

from engine import schema
from engine.core.runtime import ExternalTaskRow, InstanceRow, InstanceRun, JobRow
from engine.db.ids import new_id
from engine.states import TaskState, WorkKind, WorkLogState
from engine.store.columns import fetch_all

# The engine's host, as Camunda's job log names it.
HOST = socket.gethostname()

COLUMNS = tuple(column.name for column in schema.work_log.columns)


class LoggedJob(Protocol):
    """What a job's log row reads: a loaded instance's job, or a job of no instance."""

    @property
    def id(self) -> UUID: ...
    @property
    def kind(self) -> str: ...
    @property
    def token_id(self) -> UUID | None: ...
    @property
    def node_id(self) -> str: ...
    @property
    def due_at(self) -> datetime: ...
    @property
    def retries(self) -> int: ...
    @property
    def priority(self) -> int: ...
    @property
    def error_message(self) -> str | None: ...


@dataclass(frozen=True)
class Owner:
    """Whose a log row is: its instance (none for a job of no instance), definition, tenant."""

    instance_id: UUID | None
    definition_id: str | None
    tenant_id: str | None

    @classmethod
    def of(cls, instance: InstanceRow) -> Owner:
        return cls(instance.id, instance.definition_id, instance.tenant_id)


def job_row(
    job: LoggedJob,
    state: WorkLogState,
    now: datetime | None,
    owner: Owner,
    error_details: str | None = None,
) -> dict[str, Any]:
    """A job's log row; `now` None: the transaction's time."""
    failed = state is WorkLogState.FAILED
    return {
        "id": new_id(),
        "kind": WorkKind.JOB,
        "state": state,
        "work_id": job.id,
        "logged_at": now,
        "instance_id": owner.instance_id,
        "definition_id": owner.definition_id,
        "tenant_id": owner.tenant_id,
        "token_id": job.token_id,
        "node_id": job.node_id,
        "job_kind": job.kind,
        "topic": None,
        "due_at": job.due_at,
        "retries": job.retries,
        "priority": job.priority,
        "worker_id": None,
        "host": HOST if state in (WorkLogState.FAILED, WorkLogState.SUCCESSFUL) else None,
        "error_message": job.error_message if failed else None,
        "error_details": error_details if failed else None,
    }


def task_row(
    task: ExternalTaskRow, state: WorkLogState, now: datetime, owner: Owner
) -> dict[str, Any]:
    failed = state is WorkLogState.FAILED
    return {
        "id": new_id(),
        "kind": WorkKind.EXTERNAL_TASK,
        "state": state,
        "work_id": task.id,
        "logged_at": now,
        "instance_id": owner.instance_id,
        "definition_id": owner.definition_id,
        "tenant_id": owner.tenant_id,
        "token_id": task.token_id,
        "node_id": task.node_id,
        "job_kind": None,
        "topic": task.topic,
        "due_at": None,
        "retries": task.retries,
        "priority": task.priority,
        "worker_id": task.worker_id,
        "host": None,
        "error_message": task.error_message if failed else None,
        "error_details": task.error_details if failed else None,
    }


def rows_of(run: InstanceRun) -> list[dict[str, Any]]:
    """The log rows of a command's changes to `run`: the attempts it logged, then the jobs and
    external tasks it removed, completed or made. None for an instance without jobs and
    external tasks."""
    if not (run.jobs or run.external_tasks or run.work_events):
        return []
    owner = Owner.of(run.instance)
    rows: list[dict[str, Any]] = []
    logged: set[UUID] = set()
    for event in run.work_events:
        logged.add(event.work.id)
        if isinstance(event.work, JobRow):
            details = event.work.error_details
            rows.append(job_row(event.work, event.state, run.now, owner, details))
        else:
            rows.append(task_row(event.work, event.state, run.now, owner))
    jobs = run.jobs.values()
    externals = run.external_tasks.values()
    for job in jobs:
        if job.deleted and not job.is_new and job.id not in logged:
            rows.append(job_row(job, WorkLogState.DELETED, run.now, owner))
    for task in externals:
        if task.is_new or not task.dirty or task.id in logged:
            continue
        if task.state == TaskState.COMPLETED:
            rows.append(task_row(task, WorkLogState.SUCCESSFUL, run.now, owner))
        elif task.state == TaskState.RETIRED:
            rows.append(task_row(task, WorkLogState.DELETED, run.now, owner))
    for job in jobs:
        if job.is_new and not job.deleted:
            rows.append(job_row(job, WorkLogState.CREATED, run.now, owner))
    for task in externals:
        if task.is_new and task.state == TaskState.OPEN:
            rows.append(task_row(task, WorkLogState.CREATED, run.now, owner))
    return rows


# A row of no instance takes its definition's tenant; a removal found by a statement is logged at
# the transaction's time.
_VALUES = {
    "tenant_id": "coalesce(r.tenant_id, (SELECT d.tenant_id FROM process_definition d "
    "WHERE d.id = r.definition_id))",
    "logged_at": "coalesce(r.logged_at, now())",
}
INSERT = (
    f"INSERT INTO work_log ({', '.join(COLUMNS)}) "
    f"SELECT {', '.join(_VALUES.get(c, 'r.' + c) for c in COLUMNS)} "
    "FROM jsonb_populate_recordset(NULL::work_log, %s::jsonb) r"
)


def insert(conn: psycopg.Connection[Any], rows: list[dict[str, Any]]) -> None:
    """Write `rows` (of `job_row`) in one statement."""
    if rows:
        conn.execute(INSERT, (orjson.dumps(rows).decode(),))


@dataclass(frozen=True)
class UnownedJob:
    """A job of no instance as its log row reads it: made, or removed (`delete_jobs`)."""

    id: UUID
    kind: str
    token_id: UUID | None
    node_id: str
    definition_id: str | None
    due_at: datetime
    retries: int
    priority: int
    error_message: str | None


_RETURNING = (
    " RETURNING id, kind, token_id, node_id, definition_id, due_at, retries, priority, "
    "error_message"
)


def delete_jobs(conn: psycopg.Connection[Any], delete: str, params: Sequence[Any]) -> None:
    """Run `delete` (a DELETE of jobs of no instance) and log each job it removed without
    running it, in one more statement."""
    removed = fetch_all(conn, UnownedJob, delete + _RETURNING, params)
    deleted = WorkLogState.DELETED
    insert(conn, [job_row(j, deleted, None, Owner(None, j.definition_id, None)) for j in removed])


def log_made(
    conn: psycopg.Connection[Any],
    job_id: UUID,
    kind: str,
    node_id: str,
    due: datetime,
    retries: int,
) -> None:
    """Log a job of no instance and no definition made (the history cleanup's, a batch's)."""
    job = UnownedJob(job_id, kind, None, node_id, None, due, retries, 0, None)
    insert(conn, [job_row(job, WorkLogState.CREATED, None, Owner(None, None, None))])
