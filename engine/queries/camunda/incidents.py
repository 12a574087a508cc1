"""Camunda's incidents: the open ones, and the filters the runtime and the history share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
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


def incident_filters(
    where: Where,
    *,
    incident_id: UUID | None,
    incident_type: str | None,
    message: str | None,
    message_like: str | None,
    definition_id: str | None,
    definition_keys: Sequence[str] | None,
    instance_id: UUID | None,
    execution_id: UUID | None,
    node_id: str | None,
    configuration: UUID | None,
) -> None:
    """Camunda's filters of incidents, runtime and historic, over `incident i` joined to its
    `process_instance p` (None: not filtered; `configuration` is the incident's job or external
    task)."""
    where.equals("i.id", incident_id)
    where.equals("i.type", incident_type)
    where.equals("i.message", message)
    where.like("i.message", message_like)
    where.equals("i.definition_id", definition_id)
    where.any_of("p.definition_key", definition_keys)
    where.equals("i.instance_id", instance_id)
    where.equals("i.token_id", execution_id)
    where.equals("i.node_id", node_id)
    where.when(configuration, "(i.job_id = {} OR i.external_task_id = {})")


_INCIDENT_COLUMNS = select_list(IncidentInfo, [("i", "incident")])


@query
def incidents(
    conn: Connection,
    page: CamundaPage,
    *,
    incident_id: UUID | None = None,
    incident_type: str | None = None,
    message: str | None = None,
    message_like: str | None = None,
    definition_id: str | None = None,
    definition_keys: Sequence[str] | None = None,
    instance_id: UUID | None = None,
    execution_id: UUID | None = None,
    node_id: str | None = None,
    configuration: UUID | None = None,
    count: bool = False,
) -> list[IncidentInfo] | int:
    """Open incidents."""
    where = Where()
    where.state("i.state", IncidentState.OPEN)
    incident_filters(
        where,
        incident_id=incident_id,
        incident_type=incident_type,
        message=message,
        message_like=message_like,
        definition_id=definition_id,
        definition_keys=list(definition_keys) if definition_keys else None,
        instance_id=instance_id,
        execution_id=execution_id,
        node_id=node_id,
        configuration=configuration,
    )
    source = sql.SQL("FROM incident i JOIN process_instance p ON p.id = i.instance_id")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_INCIDENT_COLUMNS} ")
        + source
        + where.sql()
        + order_by(page.sort, INCIDENT_SORT, "i.created_at, i.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, IncidentInfo, statement, where.params())
