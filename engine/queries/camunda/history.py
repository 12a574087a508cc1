"""Camunda's history of variables and incidents over Interlock's rows: the variable rows of
running and ended instances (kept until the history cleanup deletes the instance; a variable
deleted earlier, a local whose activity ended among them, is gone), and every incident, open or
ended. Filters bind parameters only; a list filter matches any of its values (an empty list
matches nothing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.queries.camunda.incidents import incident_filters
from engine.queries.variables import ACTIVITY_INSTANCE, EXECUTION, VARIABLE_SOURCE
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import IncidentState, InstanceState

# -- variables ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoricVariableRow:
    instance_id: UUID
    definition_id: str
    definition_key: str
    root_instance_id: UUID | None
    scope_key: str
    name: str
    type: str
    value: Any
    execution_id: UUID
    activity_instance_id: UUID
    created_at: datetime | None


HISTORIC_VARIABLE_SORT: dict[str, LiteralString] = {
    "instanceId": "v.instance_id",
    "variableName": "v.name",
}


@query
def historic_variables(
    conn: Connection,
    page: CamundaPage,
    *,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    execution_ids: Sequence[UUID] | None = None,
    activity_instance_ids: Sequence[UUID] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    names: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    count: bool = False,
) -> list[HistoricVariableRow] | int:
    """The variable rows of every instance, running or ended, with Camunda's filters."""
    where = Where()
    where.equals("v.instance_id", instance_id)
    where.any_of("v.instance_id", instance_ids)
    where.any_of(EXECUTION, execution_ids)
    where.any_of(ACTIVITY_INSTANCE, activity_instance_ids)
    where.equals("v.name", name)
    where.like("v.name", name_like)
    where.any_of("v.name", names)
    # Camunda's type names ("string", "String"): stored lower-case, matched in any case.
    where.any_of("lower(v.type)", None if types is None else [t.lower() for t in types])
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    source = sql.SQL(VARIABLE_SOURCE)
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT v.instance_id, p.definition_id, p.definition_key, p.root_instance_id, "
            "v.scope_key, v.name, v.type, v.value, "
            f"{EXECUTION} AS execution_id, {ACTIVITY_INSTANCE} AS activity_instance_id, "
            "v.created_at "
        )
        + source
        + where.sql()
        + order_by(page.sort, HISTORIC_VARIABLE_SORT, "v.instance_id, v.scope_key, v.name")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, HistoricVariableRow, statement, where.params())


# -- incidents ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoricIncidentRow:
    id: UUID
    type: str
    instance_id: UUID
    definition_id: str
    definition_key: str
    root_instance_id: UUID | None
    token_id: UUID | None
    node_id: str
    job_id: UUID | None
    external_task_id: UUID | None
    message: str
    state: str
    created_at: datetime
    resolved_at: datetime | None
    deleted: bool

    @property
    def open(self) -> bool:
        return self.state == IncidentState.OPEN

    @property
    def resolved(self) -> bool:
        return not self.open and not self.deleted


HISTORIC_INCIDENT_SORT: dict[str, LiteralString] = {
    "incidentId": "i.id",
    "incidentMessage": "i.message",
    "createTime": "i.created_at",
    "endTime": "i.resolved_at",
    "incidentType": "i.type",
    "executionId": "i.token_id",
    "activityId": "i.node_id",
    "processInstanceId": "i.instance_id",
    "processDefinitionId": "i.definition_id",
    "processDefinitionKey": "p.definition_key",
    "causeIncidentId": "i.id",
    "rootCauseIncidentId": "i.id",
    "configuration": "COALESCE(i.job_id, i.external_task_id)",
    "incidentState": "i.state",
}

# An incident ends deleted (Camunda's word) when its instance was cancelled with it open: the
# cancellation resolved it at the moment the instance ended Terminated. Any other end (a retry,
# a resolve, its job's retries set again) is a resolution. Its values: Open, Terminated.
_DELETED: LiteralString = "(i.state <> {} AND p.state = {} AND i.resolved_at = p.ended_at)"


@dataclass(frozen=True)
class IncidentFilter:
    """Camunda's historic incident filters (None: not filtered)."""

    incident_id: UUID | None = None
    incident_type: str | None = None
    message: str | None = None
    message_like: str | None = None
    definition_id: str | None = None
    definition_keys: Sequence[str] | None = None
    instance_id: UUID | None = None
    execution_id: UUID | None = None
    node_id: str | None = None
    configuration: UUID | None = None
    created_before: datetime | None = None
    created_after: datetime | None = None
    ended_before: datetime | None = None
    ended_after: datetime | None = None
    open: bool | None = None
    resolved: bool | None = None
    deleted: bool | None = None


@query
def historic_incidents(
    conn: Connection, page: CamundaPage, found: IncidentFilter, *, count: bool = False
) -> list[HistoricIncidentRow] | int:
    """Every incident, open or ended, with Camunda's historic filters. `open`, `resolved` and
    `deleted` select incidents in that state (false: not filtered, as Camunda reads them)."""
    where = Where()
    open_state, terminated = IncidentState.OPEN.value, InstanceState.TERMINATED.value
    incident_filters(
        where,
        incident_id=found.incident_id,
        incident_type=found.incident_type,
        message=found.message,
        message_like=found.message_like,
        definition_id=found.definition_id,
        definition_keys=found.definition_keys,
        instance_id=found.instance_id,
        execution_id=found.execution_id,
        node_id=found.node_id,
        configuration=found.configuration,
    )
    where.at_most("i.created_at", found.created_before)
    where.at_least("i.created_at", found.created_after)
    where.at_most("i.resolved_at", found.ended_before)
    where.at_least("i.resolved_at", found.ended_after)
    if found.open:
        where.equals("i.state", open_state)
    if found.resolved:
        where.add(f"i.state <> {{}} AND NOT {_DELETED}", open_state, open_state, terminated)
    if found.deleted:
        where.add(_DELETED, open_state, terminated)
    source = sql.SQL("FROM incident i JOIN process_instance p ON p.id = i.instance_id")
    if count:
        return count_rows(conn, source, where)
    flag = sql.SQL(f"{_DELETED} AS deleted ").format(where.bind(open_state), where.bind(terminated))
    statement = (
        sql.SQL(
            "SELECT i.id, i.type, i.instance_id, i.definition_id, p.definition_key, "
            "p.root_instance_id, i.token_id, i.node_id, i.job_id, i.external_task_id, "
            "i.message, i.state, i.created_at, i.resolved_at, "
        )
        + flag
        + source
        + where.sql()
        + order_by(page.sort, HISTORIC_INCIDENT_SORT, "i.created_at, i.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, HistoricIncidentRow, statement, where.params())
