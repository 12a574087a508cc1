"""Camunda's jobs: timers, asynchronous continuations and the history cleanup job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import InstanceState, JobKind
from engine.store.columns import select_list
from engine.store.jobs import JobInfo


@dataclass(frozen=True)
class JobRow(JobInfo):
    """A job with its definition's key (none for the history cleanup job) and its instance's
    state (none for a start timer)."""

    definition_key: str | None
    instance_state: str | None


JOB_SORT: dict[str, LiteralString] = {
    "jobId": "j.id",
    "executionId": "COALESCE(j.token_id, j.instance_id)",
    "processInstanceId": "j.instance_id",
    "processDefinitionId": "j.definition_id",
    "processDefinitionKey": "d.key",
    "jobRetries": "j.retries",
    "jobDueDate": "j.due_at",
    "jobPriority": "j.id",
}


_JOB_COLUMNS = select_list(
    JobRow, [("j", "job")], {"definition_key": "d.key", "instance_state": "p.state"}
)


@query
def jobs(
    conn: Connection,
    page: CamundaPage,
    now: datetime,
    *,
    job_id: UUID | None = None,
    job_ids: Sequence[UUID] | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    execution_id: UUID | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    node_id: str | None = None,
    with_retries_left: bool | None = None,
    executable: bool | None = None,
    timers: bool | None = None,
    messages: bool | None = None,
    with_exception: bool | None = None,
    suspended: bool | None = None,
    due_before: datetime | None = None,
    due_after: datetime | None = None,
    count: bool = False,
) -> list[JobRow] | int:
    where = Where()
    where.equals("j.id", job_id)
    where.any_of("j.id", job_ids or None)
    where.equals("j.instance_id", instance_id)
    where.any_of("j.instance_id", instance_ids or None)
    # A process-level event subprocess's timer belongs to the instance's own execution.
    where.equals("COALESCE(j.token_id, j.instance_id)", execution_id)
    where.equals("j.definition_id", definition_id)
    where.equals("d.key", definition_key)
    where.equals("j.node_id", node_id)
    if with_retries_left is not None:
        where.add("(j.retries > 0) = {}", with_retries_left)
    if executable:
        where.add("j.retries > 0 AND j.due_at <= {}", now)
    if timers:
        where.any_of("j.kind", (JobKind.TIMER, JobKind.TIMER_START))
    if messages:
        where.any_of("j.kind", (JobKind.ASYNC, JobKind.ASYNC_AFTER))
    if with_exception:
        where.fixed("j.error_message IS NOT NULL")
    if suspended is not None:
        where.add("(coalesce(p.state, '') = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.below("j.due_at", due_before)
    where.above("j.due_at", due_after)
    source = sql.SQL(
        "FROM job j LEFT JOIN process_definition d ON d.id = j.definition_id "
        "LEFT JOIN process_instance p ON p.id = j.instance_id"
    )
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_JOB_COLUMNS} ")
        + source
        + where.sql()
        # By id, as Camunda's default: job ids are time-ordered and the primary key walks them.
        + order_by(page.sort, JOB_SORT, "j.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, JobRow, statement, where.params())
