"""Jobs: timers, asynchronous continuations and their retries."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda import dto
from app.camunda.errors import invalid_request, rest_error
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
from app.params import ParameterError, as_uuid, parse_time
from engine.commands.job_settings import SetJobDueDate, SetJobPriority, SetJobSuspended
from engine.core.executor import Command
from engine.errors import Conflict, NotFound
from engine.language.json_input import INT64_MAX, INT64_MIN
from engine.queries.camunda import jobs as job_reads
from engine.states import JobOutcome


def _due_dates(call: Call) -> tuple[datetime | None, datetime | None]:
    """Camunda's `dueDates=gt_<date>,lt_<date>`."""
    after = before = None
    for part in call.csv("dueDates") or []:
        op, _, text = part.partition("_")
        try:
            when = parse_time(text)
        except ValueError:
            when = None
        if when is None or op not in ("gt", "lt"):
            raise ParameterError("dueDates", part, "must have the form gt_<date> or lt_<date>")
        if op == "gt":
            after = when
        else:
            before = when
    return after, before


def _query(
    call: Call, *, job_id: UUID | None = None, count: bool = False
) -> list[job_reads.JobRow] | int:
    retries_left = call.flag_unless("withRetriesLeft", "noRetriesLeft")
    suspended = call.flag_unless("suspended", "active")
    after, before = _due_dates(call)
    return job_reads.jobs(
        call.engine,
        call.page(job_reads.JOB_SORT),
        call.engine.clock(),
        job_id=job_id or call.uuid("jobId"),
        job_ids=call.uuids("jobIds"),
        instance_id=call.uuid("processInstanceId"),
        instance_ids=call.uuids("processInstanceIds"),
        execution_id=call.uuid("executionId"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        node_id=call.text("activityId"),
        job_definition_id=call.uuid("jobDefinitionId"),
        with_retries_left=retries_left,
        executable=call.flag("executable"),
        timers=call.flag("timers"),
        messages=call.flag("messages"),
        with_exception=call.flag("withException"),
        suspended=suspended,
        due_before=before,
        due_after=after,
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def _one(call: Call) -> job_reads.JobRow | None:
    return only(call, _query, job_id=as_uuid(call.path["id"]))


def get_job(call: Call) -> Response:
    row = found(_one(call), f"Job with id {call.path['id']} does not exist")
    return json_response(dto.job(row))


def execute(call: Call) -> Response:
    job_id = call.path["id"]
    try:
        outcome = call.engine.execute_job(job_id)
    except NotFound as exc:
        raise invalid_request(f"Job with id {job_id} does not exist", 404) from exc
    if outcome == JobOutcome.EXECUTED:
        return no_content()
    if outcome == JobOutcome.GONE:
        raise invalid_request(f"Job with id {job_id} does not exist", 404)
    if outcome == JobOutcome.FAILED:
        row = _one(call)
        message = row.error_message if row and row.error_message else "the job failed"
        raise rest_error(500, message)
    if outcome == JobOutcome.INSTANCE_NOT_ACTIVE:
        raise rest_error(
            500, f"Cannot execute job {job_id}: its process instance or definition is suspended"
        )
    raise rest_error(500, f"Cannot execute job {job_id}: it is locked by a job executor")


def set_retries(call: Call) -> Response:
    job_id = call.path["id"]
    retries = call.body_int("retries")
    if retries is None:
        raise invalid_request("The number of job retries cannot be null.")
    if retries < 0:
        raise invalid_request(
            "The number of job retries must be a non-negative Integer, but "
            f"'{retries}' has been provided."
        )
    try:
        call.engine.set_job_retries(job_id, retries)
    except NotFound as exc:
        raise invalid_request(_missing(job_id), 404) from exc
    except Conflict as exc:
        raise invalid_request(exc.message) from exc
    return no_content()


def _missing(job_id: str) -> str:
    return f"No job found with id '{job_id}'."


def _run(call: Call, command: Command[Any]) -> Response:
    return run_found(call, command, _missing(call.path["id"]))


def set_suspended(call: Call) -> Response:
    suspended = call.field("suspended")
    if not isinstance(suspended, bool):
        raise invalid_request("'suspended' must be true or false")
    return _run(call, SetJobSuspended(as_uuid(call.path["id"]), suspended))


def set_priority(call: Call) -> Response:
    priority = call.body_int("priority", minimum=INT64_MIN, maximum=INT64_MAX)
    if priority is None:
        raise invalid_request(f"Priority for job '{call.path['id']}' cannot be null.")
    return _run(call, SetJobPriority(as_uuid(call.path["id"]), priority))


def set_due_date(call: Call) -> Response:
    text = call.body_text("duedate")
    due_at = None
    if text is not None:
        try:
            due_at = parse_time(text)
        except ValueError:
            due_at = None
        if due_at is None:
            raise invalid_request(f"'duedate': cannot read '{text}' as a date")
    cascade = call.body_flag("cascade", False)
    return _run(call, SetJobDueDate(as_uuid(call.path["id"]), due_at, cascade))


def stacktrace(call: Call) -> Response:
    job_id = call.path["id"]
    found, text = job_reads.job_stacktrace(call.engine, as_uuid(job_id))
    if not found:
        raise invalid_request(_missing(job_id), 404)
    if text is None:
        return Response(status_code=204)
    return Response(text, media_type="text/plain")


endpoints = [
    *listing("/job", _query, dto.job),
    Endpoint("/job/{id}", "GET", get_job),
    Endpoint("/job/{id}/execute", "POST", execute),
    Endpoint("/job/{id}/retries", "PUT", set_retries, body="json"),
    Endpoint("/job/{id}/suspended", "PUT", set_suspended, body="json"),
    Endpoint("/job/{id}/priority", "PUT", set_priority, body="json"),
    Endpoint("/job/{id}/duedate", "PUT", set_due_date, body="json"),
    Endpoint("/job/{id}/stacktrace", "GET", stacktrace),
]
