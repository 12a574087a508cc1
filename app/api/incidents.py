"""Incidents: where a path stopped and why; retry the path, resolve by hand, or set retries."""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from app import reads
from app.api import views
from app.api.body import Body
from app.api.http import (
    Answer,
    Op,
    Param,
    Reply,
    call,
    engine_of,
    get_one,
    on_one,
    path_id,
    reply,
    run,
    same_target,
)
from app.api.paging import PAGE_PARAMS, created, listed
from app.api.schemas import INTEGER, NO_BODY, RETRIES_BODY, STRING, UUID, nullable, record, ref
from app.params import Query
from engine.commands.external_tasks import SetExternalTaskRetries
from engine.commands.incidents import IncidentResult, ResolveIncident, RetryIncident
from engine.commands.job_retries import SetJobRetries
from engine.errors import Conflict
from engine.queries import work

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
    fetch = partial(
        work.incidents,
        engine_of(request),
        instance_id=query.uuid("instance_id"),
        definition_key=query.text("definition_key"),
        definition_id=query.text("definition_id"),
        incident_type=query.text("type"),
        node_id=query.text("node_id"),
        state=None if state == "any" else state,
    )
    return await listed(query, fetch, created, views.incident)


async def set_retries(request: Request) -> Response:
    """Set the retries of the incident's job or external task (above zero: the path runs again
    and the incident resolves)."""
    body = await Body.read(request, RETRIES_BODY)
    retries = body.integer("retries", 0, minimum=0)
    incident = await call(reads.incident, engine_of(request), path_id(request))
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


RESULT = Answer[IncidentResult](
    {"incident_id": "incident_id", "instance_id": "instance_id", "state": "state"},
    "IncidentResult",
    "The incident after the command",
)

operations = [
    Op(
        "GET",
        "/incidents",
        list_incidents,
        "Query incidents (open ones unless `state` says otherwise), with keyset pagination",
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
    get_one(
        __name__,
        "get_incident",
        "/incidents/{id}",
        "One incident",
        reads.incident,
        views.incident,
        "Incident",
        "The incident",
    ),
    on_one(
        __name__,
        "retry",
        "/incidents/{id}/retry",
        "Retry the stopped path: its job or external task gets one more try",
        NO_BODY,
        lambda request, _: RetryIncident(path_id(request)),
        RESULT,
    ),
    on_one(
        __name__,
        "resolve",
        "/incidents/{id}/resolve",
        "Mark the incident resolved; the token stays where it stopped",
        NO_BODY,
        lambda request, _: ResolveIncident(path_id(request)),
        RESULT,
    ),
    Op(
        "POST",
        "/incidents/{id}/retries",
        set_retries,
        "Set the retries of the incident's job or external task",
        body=RETRIES_BODY,
        body_required=True,
        replies={200: Reply("Retries set", RETRIES_SET)},
    ),
]
