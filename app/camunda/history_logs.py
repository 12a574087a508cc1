"""Camunda's job log and external task log: `/history/job-log` and `/history/external-task-log`,
with each entry and a failure's full text (`/stacktrace`, `/error-details`, as text/plain).
Every row is one event of a job or an external task (created, failed, successful, deleted),
kept until the history cleanup deletes its instance (rows of no instance: past the default time
to live)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from app.camunda.dto import Json, format_date, text
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listing, only
from app.params import as_uuid
from engine.language.json_input import INT64_MAX, INT64_MIN
from engine.queries.camunda import work_log as reads
from engine.states import WorkKind, WorkLogState


def _flags(row: reads.WorkLogRow) -> Json:
    return {
        "creationLog": row.state == WorkLogState.CREATED,
        "failureLog": row.state == WorkLogState.FAILED,
        "successLog": row.state == WorkLogState.SUCCESSFUL,
        "deletionLog": row.state == WorkLogState.DELETED,
    }


def _owner(row: reads.WorkLogRow) -> Json:
    return {
        "processInstanceId": text(row.instance_id),
        "processDefinitionId": row.definition_id,
        "processDefinitionKey": row.definition_key,
        "tenantId": row.tenant_id,
        "rootProcessInstanceId": text(row.root_instance_id or row.instance_id),
    }


def _job_log(row: reads.WorkLogRow) -> Json:
    failed = row.state == WorkLogState.FAILED
    return {
        "id": str(row.id),
        "timestamp": format_date(row.logged_at),
        "removalTime": None,
        "jobId": str(row.work_id),
        "jobDueDate": format_date(row.due_at),
        "jobRetries": row.retries,
        "jobPriority": row.priority,
        "jobExceptionMessage": row.error_message,
        "failedActivityId": row.node_id if failed else None,
        "jobDefinitionId": text(row.job_definition_id),
        "jobDefinitionType": row.job_type,
        "jobDefinitionConfiguration": row.job_configuration,
        "activityId": row.node_id,
        "executionId": text(row.token_id or row.instance_id),
        **_owner(row),
        "deploymentId": text(row.deployment_id),
        "hostname": row.host,
        **_flags(row),
    }


def _external_task_log(row: reads.WorkLogRow) -> Json:
    execution = text(row.token_id or row.instance_id)
    return {
        "id": str(row.id),
        "timestamp": format_date(row.logged_at),
        "removalTime": None,
        "externalTaskId": str(row.work_id),
        "topicName": row.topic,
        "workerId": row.worker_id,
        "retries": row.retries,
        "priority": row.priority,
        "errorMessage": row.error_message,
        "activityId": row.node_id,
        "activityInstanceId": execution,
        "executionId": execution,
        **_owner(row),
        **_flags(row),
    }


def _common(call: Call) -> dict[str, Any]:
    """The filters both logs take, under the names they share."""
    return {
        "node_ids": call.csv("activityIdIn"),
        "execution_ids": call.uuids("executionIdIn"),
        "instance_id": call.uuid("processInstanceId"),
        "definition_id": call.text("processDefinitionId"),
        "definition_key": call.text("processDefinitionKey"),
        "tenant_ids": call.csv("tenantIdIn"),
        "without_tenant": call.flag("withoutTenantId"),
        "creation": call.flag("creationLog"),
        "failure": call.flag("failureLog"),
        "success": call.flag("successLog"),
        "deletion": call.flag("deletionLog"),
    }


def _long(call: Call, name: str) -> int | None:
    return call.integer(name, minimum=INT64_MIN, maximum=INT64_MAX)


def _job_log_query(call: Call, *, count: bool, **key: Any) -> list[reads.WorkLogRow] | int:
    return reads.job_log(
        call.engine,
        call.page(reads.JOB_LOG_SORT),
        count=count,
        log_id=key.get("log_id") or call.uuid("logId"),
        work_id=call.uuid("jobId"),
        error_message=call.text("jobExceptionMessage"),
        job_definition_id=call.uuid("jobDefinitionId"),
        job_definition_type=call.text("jobDefinitionType"),
        job_definition_configuration=call.text("jobDefinitionConfiguration"),
        failed_node_ids=call.csv("failedActivityIdIn"),
        deployment_id=call.uuid("deploymentId"),
        hostname=call.text("hostname"),
        priority_at_most=_long(call, "jobPriorityLowerThanOrEquals"),
        priority_at_least=_long(call, "jobPriorityHigherThanOrEquals"),
        **_common(call),
    )


def _external_task_log_query(
    call: Call, *, count: bool, **key: Any
) -> list[reads.WorkLogRow] | int:
    return reads.external_task_log(
        call.engine,
        call.page(reads.EXTERNAL_TASK_LOG_SORT),
        count=count,
        log_id=key.get("log_id") or call.uuid("logId"),
        work_id=call.uuid("externalTaskId"),
        error_message=call.text("errorMessage"),
        topic=call.text("topicName"),
        worker_id=call.text("workerId"),
        activity_instance_ids=call.uuids("activityInstanceIdIn"),
        priority_at_most=_long(call, "priorityLowerThanOrEquals"),
        priority_at_least=_long(call, "priorityHigherThanOrEquals"),
        **_common(call),
    )


def _entry(
    rows: Callable[..., list[reads.WorkLogRow] | int],
    shape: Callable[[reads.WorkLogRow], Json],
    what: str,
) -> Callable[[Call], Response]:
    def get(call: Call) -> Response:
        log_id = call.path["id"]
        row = found(
            only(call, rows, count=False, log_id=as_uuid(log_id)),
            f"{what} with id {log_id} does not exist",
        )
        return json_response(shape(row))

    return get


def _details(kind: WorkKind, what: str) -> Callable[[Call], Response]:
    """A failure's full text as text/plain; 204 when the entry has none."""

    def get(call: Call) -> Response:
        log_id = call.path["id"]
        present, details = reads.log_details(call.engine, kind, as_uuid(log_id))
        if not present:
            raise invalid_request(f"{what} with id {log_id} does not exist", 404)
        if details is None:
            return Response(status_code=204)
        return Response(details, media_type="text/plain")

    return get


_JOB_LOG = "Historic job log"
_TASK_LOG = "Historic external task log"

endpoints = [
    *listing("/history/job-log", _job_log_query, _job_log),
    Endpoint("/history/job-log/{id}", "GET", _entry(_job_log_query, _job_log, _JOB_LOG)),
    Endpoint("/history/job-log/{id}/stacktrace", "GET", _details(WorkKind.JOB, _JOB_LOG)),
    *listing("/history/external-task-log", _external_task_log_query, _external_task_log),
    Endpoint(
        "/history/external-task-log/{id}",
        "GET",
        _entry(_external_task_log_query, _external_task_log, _TASK_LOG),
    ),
    Endpoint(
        "/history/external-task-log/{id}/error-details",
        "GET",
        _details(WorkKind.EXTERNAL_TASK, _TASK_LOG),
    ),
]
