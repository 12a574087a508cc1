"""Camunda's job log and external task log, read from the work log (`work_log`): one row per job
or external task event, of the definitions whose history the principal may read (READ_HISTORY
on the definition, Camunda's rule)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of, state_literal
from engine.states import WorkKind, WorkLogState
from engine.store.columns import fetch_where, select_list


@dataclass(frozen=True)
class WorkLogRow:
    """A log row with what it names: its definition's key and deployment, its instance's family
    root, and (for a job) the job definition that made the job."""

    id: UUID
    state: str
    work_id: UUID
    logged_at: datetime
    instance_id: UUID | None
    definition_id: str | None
    tenant_id: str | None
    token_id: UUID | None
    node_id: str
    job_kind: str | None
    topic: str | None
    due_at: datetime | None
    retries: int | None
    priority: int
    worker_id: str | None
    host: str | None
    error_message: str | None
    definition_key: str | None
    deployment_id: UUID | None
    root_instance_id: UUID | None
    job_definition_id: UUID | None
    job_type: str | None
    job_configuration: str | None


_FAILED = state_literal(WorkLogState.FAILED)

_SOURCE = (
    "work_log w LEFT JOIN process_definition d ON d.id = w.definition_id "
    "LEFT JOIN process_instance p ON p.id = w.instance_id "
    "LEFT JOIN job_definition jd ON jd.definition_id = w.definition_id "
    "AND jd.node_id = w.node_id AND jd.job_kind = w.job_kind"
)

_COLUMNS = select_list(
    WorkLogRow,
    [("w", "work_log")],
    {
        "definition_key": "d.key",
        "deployment_id": "d.deployment_id",
        "root_instance_id": "p.root_instance_id",
        "job_definition_id": "jd.id",
        "job_type": "coalesce(jd.job_type, w.job_kind)",
        "job_configuration": "jd.configuration",
    },
)

# Camunda's READ_HISTORY on the definition; the rows of no definition (the history cleanup job,
# batch jobs) only for whoever reads every definition's history.
_COVERS = covers.history_of("d.key", tenant="w.tenant_id")

_EXECUTION: LiteralString = "COALESCE(w.token_id, w.instance_id)"

_COMMON_SORT: dict[str, LiteralString] = {
    "timestamp": "w.logged_at",
    "activityId": "w.node_id",
    "executionId": _EXECUTION,
    "processInstanceId": "w.instance_id",
    "processDefinitionId": "w.definition_id",
    "processDefinitionKey": "d.key",
    "tenantId": "w.tenant_id",
}

JOB_LOG_SORT: dict[str, LiteralString] = {
    **_COMMON_SORT,
    "jobId": "w.work_id",
    "jobDefinitionId": "jd.id",
    "jobDueDate": "w.due_at",
    "jobRetries": "w.retries",
    "jobPriority": "w.priority",
    "deploymentId": "d.deployment_id",
    "hostname": "w.host",
    # Ids are time-ordered: the order the events were logged in.
    "occurrence": "w.id",
}

EXTERNAL_TASK_LOG_SORT: dict[str, LiteralString] = {
    **_COMMON_SORT,
    "externalTaskId": "w.work_id",
    "topicName": "w.topic",
    "workerId": "w.worker_id",
    "retries": "w.retries",
    "priority": "w.priority",
    # An external task's activity instance is its token, as its execution is.
    "activityInstanceId": _EXECUTION,
}


class _LogFilters(TypedDict, total=False):
    """What both logs filter by (None: not filtered; a flag that is false filters nothing)."""

    log_id: Annotated[UUID | None, Filter.equals("w.id")]
    work_id: Annotated[UUID | None, Filter.equals("w.work_id")]
    error_message: Annotated[str | None, Filter.equals("w.error_message")]
    node_ids: Annotated[Sequence[str] | None, Filter.any_given("w.node_id")]
    execution_ids: Annotated[Sequence[UUID] | None, Filter.any_given(_EXECUTION)]
    instance_id: Annotated[UUID | None, Filter.equals("w.instance_id")]
    definition_id: Annotated[str | None, Filter.equals("w.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("d.key")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("w.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("w.tenant_id IS NULL")]
    priority_at_most: Annotated[int | None, Filter.at_most("w.priority")]
    priority_at_least: Annotated[int | None, Filter.at_least("w.priority")]
    creation: Annotated[bool | None, Filter.if_true("w.state = {}", WorkLogState.CREATED)]
    failure: Annotated[bool | None, Filter.if_true("w.state = {}", WorkLogState.FAILED)]
    success: Annotated[bool | None, Filter.if_true("w.state = {}", WorkLogState.SUCCESSFUL)]
    deletion: Annotated[bool | None, Filter.if_true("w.state = {}", WorkLogState.DELETED)]


class JobLogFilters(_LogFilters, total=False):
    """Camunda's filters of the job log."""

    job_definition_id: Annotated[UUID | None, Filter.equals("jd.id")]
    job_definition_type: Annotated[str | None, Filter.equals("coalesce(jd.job_type, w.job_kind)")]
    job_definition_configuration: Annotated[str | None, Filter.equals("jd.configuration")]
    # The activity a failure happened at: failure rows only.
    failed_node_ids: Annotated[
        Sequence[str] | None,
        Filter.condition("w.state = " + _FAILED + " AND w.node_id = ANY({})"),
    ]
    deployment_id: Annotated[UUID | None, Filter.equals("d.deployment_id")]
    hostname: Annotated[str | None, Filter.equals("w.host")]


class ExternalTaskLogFilters(_LogFilters, total=False):
    """Camunda's filters of the external task log."""

    topic: Annotated[str | None, Filter.equals("w.topic")]
    worker_id: Annotated[str | None, Filter.equals("w.worker_id")]
    activity_instance_ids: Annotated[Sequence[UUID] | None, Filter.any_given(_EXECUTION)]


def _log(sort: dict[str, LiteralString], filters: type) -> CamundaList[WorkLogRow]:
    return CamundaList(
        WorkLogRow, _COLUMNS, _SOURCE, sort, "w.id", filters_of(filters), covers=_COVERS
    )


_JOB_LOG = _log(JOB_LOG_SORT, JobLogFilters)
_EXTERNAL_TASK_LOG = _log(EXTERNAL_TASK_LOG_SORT, ExternalTaskLogFilters)


def _of_kind(kind: WorkKind) -> Where:
    where = Where()
    where.equals("w.kind", kind)
    return where


@query
def job_log(
    conn: Connection, page: CamundaPage, *, count: bool = False, **filters: Unpack[JobLogFilters]
) -> list[WorkLogRow] | int:
    """The job log, oldest event first unless sorted otherwise."""
    return _JOB_LOG.read(conn, page, filters, count=count, where=_of_kind(WorkKind.JOB))


@query
def external_task_log(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[ExternalTaskLogFilters],
) -> list[WorkLogRow] | int:
    """The external task log, oldest event first unless sorted otherwise."""
    return _EXTERNAL_TASK_LOG.read(
        conn, page, filters, count=count, where=_of_kind(WorkKind.EXTERNAL_TASK)
    )


@dataclass(frozen=True)
class _Details:
    error_details: str | None


@query
def log_details(conn: Connection, kind: WorkKind, log_id: UUID) -> tuple[bool, str | None]:
    """(found, a failure's full text) of a log row the request's principal may read: a job's
    stacktrace, an external task's error details."""
    where = _of_kind(kind)
    where.equals("w.id", log_id)
    where.authorized(_COVERS)
    found = fetch_where(
        conn,
        _Details,
        "SELECT w.error_details FROM work_log w LEFT JOIN process_definition d "
        "ON d.id = w.definition_id",
        where,
        "w.id",
        1,
    )
    return (True, found[0].error_details) if found else (False, None)
