"""Open incidents."""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app.camunda import dto
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listing, no_content, only
from app.params import as_uuid
from engine.commands.incidents import AnnotateIncident, ResolveIncident
from engine.errors import Conflict, NotFound
from engine.queries.camunda import incidents as incident_reads
from engine.queries.work import IncidentInfo


def _query(
    call: Call, *, incident_id: UUID | None = None, count: bool = False
) -> list[IncidentInfo] | int:
    ids = [call.uuid(name) for name in ("incidentId", "causeIncidentId", "rootCauseIncidentId")]
    wanted = {i for i in ids if i is not None}
    if incident_id is not None:
        wanted.add(incident_id)
    if len(wanted) > 1:
        wanted = {as_uuid("")}
    return incident_reads.incidents(
        call.engine,
        call.page(incident_reads.INCIDENT_SORT),
        incident_id=next(iter(wanted), None),
        incident_type=call.text("incidentType"),
        message=call.text("incidentMessage"),
        message_like=call.text("incidentMessageLike"),
        definition_id=call.text("processDefinitionId"),
        definition_keys=call.csv("processDefinitionKeyIn"),
        instance_id=call.uuid("processInstanceId"),
        execution_id=call.uuid("executionId"),
        node_id=call.text("activityId") or call.text("failedActivityId"),
        configuration=call.uuid("configuration"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def get_incident(call: Call) -> Response:
    incident_id = call.path["id"]
    row = only(call, _query, incident_id=as_uuid(incident_id))
    return json_response(dto.incident(found(row, f"No matching incident with id {incident_id}")))


def resolve_incident(call: Call) -> Response:
    """Camunda's resolveIncident: a custom incident only; a failed job's or external task's is
    refused with Camunda's 400 (they go when their job or task is retried)."""
    incident_id = call.path["id"]
    try:
        call.engine.run(ResolveIncident(as_uuid(incident_id), custom_only=True))
    except (NotFound, Conflict) as exc:
        raise invalid_request(f"Cannot find an incident with id '{incident_id}'", 404) from exc
    return no_content()


def set_annotation(call: Call) -> Response:
    return _annotate(call, call.body_text("annotation"))


def clear_annotation(call: Call) -> Response:
    return _annotate(call, None)


def _annotate(call: Call, annotation: str | None) -> Response:
    """Set or clear an open incident's annotation; one that is not open (or not there) is
    Camunda's 400 BadUserRequestException."""
    incident_id = call.path["id"]
    try:
        call.engine.run(AnnotateIncident(as_uuid(incident_id), annotation))
    except (NotFound, Conflict) as exc:
        raise CamundaError(
            400, "BadUserRequestException", f"No incident with id '{incident_id}': incident is null"
        ) from exc
    return no_content()


endpoints = [
    *listing("/incident", _query, dto.incident),
    Endpoint("/incident/{id}", "GET", get_incident),
    Endpoint("/incident/{id}", "DELETE", resolve_incident),
    Endpoint("/incident/{id}/annotation", "PUT", set_annotation, body="json"),
    Endpoint("/incident/{id}/annotation", "DELETE", clear_annotation),
    # The same as DELETE /incident/{id}/annotation, for clients that send a PUT.
    Endpoint("/incident/{id}/clear-annotation", "PUT", clear_annotation),
]
