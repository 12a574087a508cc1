"""Camunda's jobs: timers, asynchronous continuations and the history cleanup job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import InstanceState, JobKind
from engine.store import jobs as job_store
from engine.store.columns import fetch_where, select_list
from engine.store.job_definitions import JobDefinitionInfo
from engine.store.jobs import JobInfo


@dataclass(frozen=True)
class JobRow(JobInfo):
    """A job with its definition's key (none for the history cleanup job) and its instance's
    state (none for a start timer)."""

    definition_key: str | None
    instance_state: str | None
    tenant_id: str | None = None


JOB_SORT: dict[str, LiteralString] = {
    "jobId": "j.id",
    "executionId": "COALESCE(j.token_id, j.instance_id)",
    "processInstanceId": "j.instance_id",
    "processDefinitionId": "j.definition_id",
    "processDefinitionKey": "d.key",
    "jobRetries": "j.retries",
    "jobDueDate": "j.due_at",
    "jobPriority": "j.priority",
}


class JobFilters(TypedDict, total=False):
    """Camunda's filters of jobs (None: not filtered, nor by an empty list; a flag that is
    false filters nothing, but for `with_retries_left` and `suspended`)."""

    job_id: Annotated[UUID | None, Filter.equals("j.id")]
    job_ids: Annotated[Sequence[UUID] | None, Filter.any_given("j.id")]
    instance_id: Annotated[UUID | None, Filter.equals("j.instance_id")]
    instance_ids: Annotated[Sequence[UUID] | None, Filter.any_given("j.instance_id")]
    # A process-level event subprocess's timer belongs to the instance's own execution.
    execution_id: Annotated[UUID | None, Filter.equals("COALESCE(j.token_id, j.instance_id)")]
    definition_id: Annotated[str | None, Filter.equals("j.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("d.key")]
    node_id: Annotated[str | None, Filter.equals("j.node_id")]
    # The job definition that made the job (its id is derived from what the job names).
    job_definition_id: Annotated[
        UUID | None,
        Filter.condition(
            "EXISTS (SELECT 1 FROM job_definition jd WHERE jd.id = {} "
            "AND jd.definition_id = j.definition_id AND jd.node_id = j.node_id "
            "AND jd.job_kind = j.kind)"
        ),
    ]
    with_retries_left: Annotated[bool | None, Filter.holds("j.retries > 0")]
    timers: Annotated[
        bool | None,
        Filter.if_true(
            "j.kind = ANY({})", [JobKind.TIMER, JobKind.TIMER_START, JobKind.SUSPENSION]
        ),
    ]
    messages: Annotated[
        bool | None, Filter.if_true("j.kind = ANY({})", [JobKind.ASYNC, JobKind.ASYNC_AFTER])
    ]
    with_exception: Annotated[bool | None, Filter.if_true("j.error_message IS NOT NULL")]
    suspended: Annotated[
        bool | None,
        Filter.holds("(j.suspended OR coalesce(p.state, '') = {})", InstanceState.SUSPENDED),
    ]
    due_before: Annotated[datetime | None, Filter.below("j.due_at")]
    due_after: Annotated[datetime | None, Filter.above("j.due_at")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("j.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("j.tenant_id IS NULL")]


_JOBS = CamundaList(
    JobRow,
    select_list(JobRow, [("j", "job")], {"definition_key": "d.key", "instance_state": "p.state"}),
    "job j LEFT JOIN process_definition d ON d.id = j.definition_id "
    "LEFT JOIN process_instance p ON p.id = j.instance_id",
    JOB_SORT,
    # By id, as Camunda's default: job ids are time-ordered and the primary key walks them.
    "j.id",
    filters_of(JobFilters),
    covers=covers.instance("d.key", "j.instance_id", tenant="j.tenant_id"),
)


@query
def jobs(
    conn: Connection,
    page: CamundaPage,
    now: datetime,
    *,
    executable: bool | None = None,
    count: bool = False,
    **filters: Unpack[JobFilters],
) -> list[JobRow] | int:
    """Jobs; `executable`: only those with retries left that are due at `now`."""
    where = Where()
    if executable:
        where.add("j.retries > 0 AND j.due_at <= {}", now)
    return _JOBS.read(conn, page, filters, count=count, where=where)


@dataclass(frozen=True)
class _Details:
    error_details: str | None


@query
def job_stacktrace(conn: Connection, job_id: UUID) -> tuple[bool, str | None]:
    """(found, the last failure's full text) of a job the request's principal may read."""
    where = Where()
    where.equals("id", job_id)
    where.authorized(job_store.READABLE)
    found = fetch_where(conn, _Details, "SELECT error_details FROM job", where, "id", 1)
    return (True, found[0].error_details) if found else (False, None)


JOB_DEFINITION_SORT: dict[str, LiteralString] = {
    "jobDefinitionId": "jd.id",
    "activityId": "jd.node_id",
    "processDefinitionId": "jd.definition_id",
    "processDefinitionKey": "jd.definition_key",
    "jobType": "jd.job_type",
    "jobConfiguration": "jd.configuration",
    "tenantId": "jd.tenant_id",
}


class JobDefinitionFilters(TypedDict, total=False):
    """Camunda's filters of job definitions (None: not filtered; a flag that is false filters
    nothing, but for `suspended`)."""

    job_definition_id: Annotated[UUID | None, Filter.equals("jd.id")]
    job_definition_ids: Annotated[Sequence[UUID] | None, Filter.any_given("jd.id")]
    node_ids: Annotated[Sequence[str] | None, Filter.any_given("jd.node_id")]
    definition_id: Annotated[str | None, Filter.equals("jd.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("jd.definition_key")]
    job_type: Annotated[str | None, Filter.equals("jd.job_type")]
    configuration: Annotated[str | None, Filter.equals("jd.configuration")]
    suspended: Annotated[bool | None, Filter.holds("jd.suspended")]
    with_overriding_priority: Annotated[bool | None, Filter.if_true("jd.priority IS NOT NULL")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("jd.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("jd.tenant_id IS NULL")]


@dataclass(frozen=True)
class JobDefinitionRow(JobDefinitionInfo):
    """A job definition with its process definition's deployment."""

    deployment_id: UUID


_JOB_DEFINITIONS = CamundaList(
    JobDefinitionRow,
    select_list(JobDefinitionRow, [("jd", "job_definition")], {"deployment_id": "d.deployment_id"}),
    "job_definition jd JOIN process_definition d ON d.id = jd.definition_id",
    JOB_DEFINITION_SORT,
    "jd.id",
    filters_of(JobDefinitionFilters),
    covers=covers.definition("jd.definition_key", tenant="jd.tenant_id"),
)


@query
def job_definitions(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[JobDefinitionFilters],
) -> list[JobDefinitionRow] | int:
    """Job definitions of the definitions the request's principal may read."""
    return _JOB_DEFINITIONS.read(conn, page, filters, count=count)
