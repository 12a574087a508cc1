"""Open incidents."""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app.camunda import dto
from app.camunda.http import Call, Endpoint, found, json_response, listing, only
from app.params import as_uuid
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


endpoints = [
    *listing("/incident", _query, dto.incident),
    Endpoint("/incident/{id}", "GET", get_incident),
]
