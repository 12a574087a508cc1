"""Camunda's incidents: the open ones, and the filters the runtime and the history share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import IncidentState
from engine.store.columns import select_list
from engine.store.incidents import IncidentInfo

INCIDENT_SORT: dict[str, LiteralString] = {
    "incidentId": "i.id",
    "incidentMessage": "i.message",
    "incidentTimestamp": "i.created_at",
    "incidentType": "i.type",
    "executionId": "i.token_id",
    "activityId": "i.node_id",
    "processInstanceId": "i.instance_id",
    "processDefinitionId": "i.definition_id",
    "causeIncidentId": "i.id",
    "rootCauseIncidentId": "i.id",
    "configuration": "coalesce(i.job_id, i.external_task_id)",
}

# Incidents joined to their instances, as both reads filter them.
INCIDENT_SOURCE: LiteralString = "incident i JOIN process_instance p ON p.id = i.instance_id"


class SharedIncidentFilters(TypedDict, total=False):
    """Camunda's filters of incidents, runtime and historic, over `incident i` joined to its
    `process_instance p` (None: not filtered; `configuration` is the incident's job or external
    task)."""

    incident_id: Annotated[UUID | None, Filter.equals("i.id")]
    incident_type: Annotated[str | None, Filter.equals("i.type")]
    message: Annotated[str | None, Filter.equals("i.message")]
    message_like: Annotated[str | None, Filter.like("i.message")]
    definition_id: Annotated[str | None, Filter.equals("i.definition_id")]
    instance_id: Annotated[UUID | None, Filter.equals("i.instance_id")]
    execution_id: Annotated[UUID | None, Filter.equals("i.token_id")]
    node_id: Annotated[str | None, Filter.equals("i.node_id")]
    configuration: Annotated[
        UUID | None, Filter.condition("(i.job_id = {} OR i.external_task_id = {})")
    ]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("i.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("i.tenant_id IS NULL")]


class IncidentFilters(SharedIncidentFilters, total=False):
    """The filters of open incidents (an empty list of keys filters nothing)."""

    definition_keys: Annotated[Sequence[str] | None, Filter.any_given("p.definition_key")]


_INCIDENTS = CamundaList(
    IncidentInfo,
    select_list(IncidentInfo, [("i", "incident")]),
    INCIDENT_SOURCE,
    INCIDENT_SORT,
    "i.created_at, i.id",
    filters_of(IncidentFilters),
    covers=covers.instance("p.definition_key", "i.instance_id", tenant="i.tenant_id"),
)


@query
def incidents(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[IncidentFilters],
) -> list[IncidentInfo] | int:
    """Open incidents."""
    where = Where()
    where.state("i.state", IncidentState.OPEN)
    return _INCIDENTS.read(conn, page, filters, count=count, where=where)
