"""Camunda's job definitions: one per asynchronous continuation and timer event of a deployed
process, each suspendable, with an overriding priority and its jobs' retries."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.camunda.dto import Json, text
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listing, no_content, only
from app.params import as_uuid
from engine.commands.job_settings import (
    SetJobDefinitionPriority,
    SetJobDefinitionRetries,
    SetJobDefinitionSuspended,
)
from engine.errors import BadRequest, NotFound
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


def _missing(job_definition_id: str) -> CamundaError:
    return invalid_request(f"Job Definition with id {job_definition_id} does not exist", 404)


def get_job_definition(call: Call) -> Response:
    job_definition_id = call.path["id"]
    row = found(
        only(call, _query, job_definition_id=as_uuid(job_definition_id)),
        f"Job Definition with id {job_definition_id} does not exist",
    )
    return json_response(job_definition(row))


def _run(call: Call, command: Any) -> Response:
    try:
        call.engine.run(command)
    except NotFound as exc:
        raise _missing(call.path["id"]) from exc
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    return no_content()


def set_suspended(call: Call) -> Response:
    suspended = call.field("suspended")
    if not isinstance(suspended, bool):
        raise invalid_request("'suspended' must be true or false")
    include = call.body_flag("includeJobs", False)
    if call.field("executionDate") is not None:
        raise invalid_request("'executionDate': a delayed suspension is not supported by Interlock")
    return _run(call, SetJobDefinitionSuspended(as_uuid(call.path["id"]), suspended, include))


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
    Endpoint("/job-definition/{id}", "GET", get_job_definition),
    Endpoint("/job-definition/{id}/suspended", "PUT", set_suspended, body="json"),
    Endpoint("/job-definition/{id}/retries", "PUT", set_retries, body="json"),
    Endpoint("/job-definition/{id}/jobPriority", "PUT", set_priority, body="json"),
]
