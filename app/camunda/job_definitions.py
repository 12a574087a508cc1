"""Camunda's job definitions: one per asynchronous continuation and timer event of a deployed
process, each suspendable, with an overriding priority and its jobs' retries."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.camunda.dto import Json, text
from app.camunda.errors import invalid_request
from app.camunda.http import (
    Call,
    Endpoint,
    found,
    json_response,
    listing,
    no_content,
    only,
    run_found,
)
from app.camunda.suspension import execution_date
from app.params import as_uuid
from engine.commands.job_settings import (
    SetJobDefinitionPriority,
    SetJobDefinitionRetries,
    SetJobDefinitionsSuspended,
    SetJobDefinitionSuspended,
)
from engine.commands.scheduled_suspension import ScheduleJobDefinitionSuspension
from engine.core.executor import Command
from engine.language.json_input import INT64_MAX, INT64_MIN
from engine.queries.camunda import jobs as job_reads


def job_definition(row: job_reads.JobDefinitionRow) -> Json:
    return {
        "id": str(row.id),
        "processDefinitionId": row.definition_id,
        "processDefinitionKey": row.definition_key,
        "activityId": row.node_id,
        "jobType": row.job_type,
        "jobConfiguration": row.configuration,
        "overridingJobPriority": row.priority,
        "suspended": row.suspended,
        "tenantId": row.tenant_id,
        "deploymentId": text(row.deployment_id),
    }


def _query(
    call: Call, *, job_definition_id: Any = None, count: bool = False
) -> list[job_reads.JobDefinitionRow] | int:
    return job_reads.job_definitions(
        call.engine,
        call.page(job_reads.JOB_DEFINITION_SORT),
        job_definition_id=job_definition_id or call.uuid("jobDefinitionId"),
        job_definition_ids=call.uuids("jobDefinitionIdIn"),
        node_ids=call.csv("activityIdIn"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        job_type=call.text("jobType"),
        configuration=call.text("jobConfiguration"),
        suspended=call.flag_unless("suspended", "active"),
        with_overriding_priority=call.flag("withOverridingJobPriority"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def _missing(call: Call) -> str:
    return f"Job Definition with id {call.path['id']} does not exist"


def get_job_definition(call: Call) -> Response:
    row = found(only(call, _query, job_definition_id=as_uuid(call.path["id"])), _missing(call))
    return json_response(job_definition(row))


def _run(call: Call, command: Command[Any]) -> Response:
    return run_found(call, command, _missing(call))


def _suspended(call: Call) -> bool:
    suspended = call.field("suspended")
    if not isinstance(suspended, bool):
        raise invalid_request("'suspended' must be true or false")
    return suspended


def set_suspended(call: Call) -> Response:
    """One job definition, at once or (with `executionDate`) by a job due then."""
    suspended = _suspended(call)
    include = call.body_flag("includeJobs", False)
    due = execution_date(call)
    job_definition_id = as_uuid(call.path["id"])
    if due is not None:
        return _run(
            call,
            ScheduleJobDefinitionSuspension(
                suspended, due, job_definition_id=job_definition_id, include_jobs=include
            ),
        )
    return _run(call, SetJobDefinitionSuspended(job_definition_id, suspended, include))


def set_suspended_by_definition(call: Call) -> Response:
    """Camunda's PUT /job-definition/suspended: every job definition of processDefinitionId, or
    of every version of processDefinitionKey (of processDefinitionTenantId, or of none with
    processDefinitionWithoutTenantId)."""
    suspended = _suspended(call)
    if call.field("jobDefinitionId") is not None:
        raise invalid_request(
            "Only processDefinitionId or processDefinitionKey can be set to update the "
            "suspension state."
        )
    definition_id = call.body_text("processDefinitionId")
    key = call.body_text("processDefinitionKey")
    if (definition_id is None) == (key is None):
        raise invalid_request(
            "Either processDefinitionId or processDefinitionKey can be set to update the "
            "suspension state."
        )
    target: dict[str, Any] = {
        "definition_id": definition_id,
        "key": key,
        "tenant_id": call.body_text("processDefinitionTenantId"),
        "without_tenant": call.body_flag("processDefinitionWithoutTenantId"),
    }
    include = call.body_flag("includeJobs", False)
    due = execution_date(call)
    command: Command[Any] = (
        ScheduleJobDefinitionSuspension(suspended, due, include_jobs=include, **target)
        if due is not None
        else SetJobDefinitionsSuspended(suspended, include_jobs=include, **target)
    )
    call.engine.run(command)
    return no_content()


def set_retries(call: Call) -> Response:
    retries = call.body_int("retries")
    if retries is None:
        raise invalid_request("The number of job retries cannot be null.")
    if retries < 0:
        raise invalid_request(
            "The number of job retries must be a non-negative Integer, but "
            f"'{retries}' has been provided."
        )
    return _run(call, SetJobDefinitionRetries(as_uuid(call.path["id"]), retries))


def set_priority(call: Call) -> Response:
    priority = call.body_int("priority", minimum=INT64_MIN, maximum=INT64_MAX)
    include = call.body_flag("includeJobs", False)
    return _run(call, SetJobDefinitionPriority(as_uuid(call.path["id"]), priority, include))


endpoints = [
    *listing("/job-definition", _query, job_definition),
    Endpoint("/job-definition/suspended", "PUT", set_suspended_by_definition, body="json"),
    Endpoint("/job-definition/{id}", "GET", get_job_definition),
    Endpoint("/job-definition/{id}/suspended", "PUT", set_suspended, body="json"),
    Endpoint("/job-definition/{id}/retries", "PUT", set_retries, body="json"),
    Endpoint("/job-definition/{id}/jobPriority", "PUT", set_priority, body="json"),
]
