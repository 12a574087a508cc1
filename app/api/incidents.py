"""Incidents: where a path stopped and why; retry the path, resolve by hand, or set retries."""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from app.api import views
from app.api.body import Body
from app.api.http import (
    Op,
    Param,
    Reply,
    call,
    engine_of,
    path_id,
    reply,
    run,
    same_target,
)
from app.api.paging import PAGE_PARAMS, page
from app.api.schemas import INTEGER, STRING, UUID, nullable, record, ref, request
from app.params import Query
from engine.commands.external_tasks import SetExternalTaskRetries
from engine.commands.incidents import IncidentResult, ResolveIncident, RetryIncident
from engine.commands.job_retries import SetJobRetries
from engine.errors import Conflict
from engine.identity.accounts import Role

NO_BODY = request({})
RETRIES_BODY = request({"retries": INTEGER}, required=("retries",))
RETRIES_SET = record(
    {
        "incident_id": UUID,
        "instance_id": UUID,
        "job_id": nullable(UUID),
        "external_task_id": nullable(UUID),
        "retries": INTEGER,
    }
)


async def list_incidents(request: Request) -> Response:
    query = Query(request.query_params)
    state = query.text("state", "Open")
    engine = engine_of(request)
    fetch = partial(
        engine.incidents,
        instance_id=query.uuid("instance_id"),
        definition_key=query.text("definition_key"),
        definition_id=query.text("definition_id"),
        incident_type=query.text("type"),
        node_id=query.text("node_id"),
        state=None if state == "any" else state,
    )
    found = await page(
        query,
        lambda limit, after: fetch(limit=limit, after=after),
        lambda i: (i.created_at, i.id),
    )
    return reply(views.items([views.incident(i) for i in found.items], found.next))


async def get_incident(request: Request) -> Response:
    return reply(views.incident(await call(engine_of(request).incident, path_id(request))))


def _result(request: Request, result: IncidentResult) -> Response:
    same_target(request, str(path_id(request)), result.incident_id)
    return reply(
        {
            "incident_id": result.incident_id,
            "instance_id": result.instance_id,
            "state": result.state,
        }
    )


async def retry(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, RetryIncident(path_id(request))))


async def resolve(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, ResolveIncident(path_id(request))))


async def set_retries(request: Request) -> Response:
    """Set the retries of the incident's job or external task (above zero: the path runs again
    and the incident resolves)."""
    body = await Body.read(request, RETRIES_BODY)
    retries = body.integer("retries", 0, minimum=0)
    incident = await call(engine_of(request).incident, path_id(request))
    if incident.job_id is not None:
        job = await run(request, SetJobRetries(incident.job_id, retries))
        same_target(request, str(incident.job_id), job.job_id)
    elif incident.external_task_id is not None:
        task = await run(request, SetExternalTaskRetries(incident.external_task_id, retries))
        same_target(request, str(incident.external_task_id), task.task_id)
    else:
        raise Conflict(
            f"incident {incident.id} ({incident.type}) has no job or external task to retry",
            incident_type=incident.type,
        )
    return reply(
        {
            "incident_id": str(incident.id),
            "instance_id": str(incident.instance_id),
            "job_id": views.ident(incident.job_id),
            "external_task_id": views.ident(incident.external_task_id),
            "retries": retries,
        }
    )


_RESULT = {200: Reply("The incident after the command", ref("IncidentResult"))}

operations = [
    Op(
        "GET",
        "/incidents",
        list_incidents,
        "Query incidents (open ones unless `state` says otherwise), with keyset pagination",
        Role.VIEWER,
        query=(
            Param("instance_id", STRING),
            Param("definition_key", STRING),
            Param("definition_id", STRING),
            Param("type", STRING, "failedJob, failedExternalTask, ..."),
            Param("node_id", STRING),
            Param("state", STRING, "Open (default), Resolved, or any"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of incidents, oldest first", ref("IncidentPage"))},
    ),
    Op(
        "GET",
        "/incidents/{id}",
        get_incident,
        "One incident",
        Role.VIEWER,
        replies={200: Reply("The incident", ref("Incident"))},
    ),
    Op(
        "POST",
        "/incidents/{id}/retry",
        retry,
        "Retry the stopped path: its job or external task gets one more try",
        Role.OPERATOR,
        body=NO_BODY,
        replies=_RESULT,
    ),
    Op(
        "POST",
        "/incidents/{id}/resolve",
        resolve,
        "Mark the incident resolved; the token stays where it stopped",
        Role.OPERATOR,
        body=NO_BODY,
        replies=_RESULT,
    ),
    Op(
        "POST",
        "/incidents/{id}/retries",
        set_retries,
        "Set the retries of the incident's job or external task",
        Role.OPERATOR,
        body=RETRIES_BODY,
        body_required=True,
        replies={200: Reply("Retries set", RETRIES_SET)},
    ),
]
