"""Camunda's history of variables, incidents and user tasks over Interlock's rows: the variable
rows of running and ended instances (kept until the history cleanup deletes the instance; a
variable deleted earlier, a local whose activity ended among them, is gone), every incident,
open or ended, and every user task, open or ended. Filters bind parameters only; a list filter
matches any of its values (an empty list matches nothing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.queries.camunda.incidents import INCIDENT_SOURCE, SharedIncidentFilters
from engine.queries.variables import (
    VARIABLE_ORDER,
    VARIABLE_SOURCE,
    VariableFilters,
    VariableInstanceRow,
    variable_columns,
)
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import IncidentState, InstanceState, TaskState
from engine.store.columns import select_list

# -- variables ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoricVariableRow(VariableInstanceRow):
    definition_key: str
    root_instance_id: UUID | None
    created_at: datetime | None


HISTORIC_VARIABLE_SORT: dict[str, LiteralString] = {
    "instanceId": "v.instance_id",
    "variableName": "v.name",
}


class HistoricVariableFilters(VariableFilters, total=False):
    """The history's filters of variable rows."""

    instance_id: Annotated[UUID | None, Filter.equals("v.instance_id")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("p.definition_key")]


_HISTORIC_VARIABLES = CamundaList(
    HistoricVariableRow,
    variable_columns(HistoricVariableRow),
    VARIABLE_SOURCE,
    HISTORIC_VARIABLE_SORT,
    VARIABLE_ORDER,
    filters_of(HistoricVariableFilters),
    covers=covers.history("p.definition_key", "v.instance_id", tenant="p.tenant_id"),
)


@query
def historic_variables(
    conn: Connection,
    page: CamundaPage,
    *,
    types: Sequence[str] | None = None,
    count: bool = False,
    **filters: Unpack[HistoricVariableFilters],
) -> list[HistoricVariableRow] | int:
    """The variable rows of every instance, running or ended, with Camunda's filters; `types`:
    Camunda's type names ("string", "String"), stored lower-case, matched in any case."""
    where = Where()
    where.any_of("lower(v.type)", None if types is None else [t.lower() for t in types])
    return _HISTORIC_VARIABLES.read(conn, page, filters, count=count, where=where)


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
    annotation: str | None
    configuration: str | None

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
_DELETED_VALUES = (IncidentState.OPEN, InstanceState.TERMINATED)


class IncidentFilter(SharedIncidentFilters, total=False):
    """Camunda's historic incident filters (None: not filtered). `open`, `resolved` and
    `deleted` select incidents in that state (false: not filtered, as Camunda reads them)."""

    definition_keys: Annotated[Sequence[str] | None, Filter.any_of("p.definition_key")]
    created_before: Annotated[datetime | None, Filter.at_most("i.created_at")]
    created_after: Annotated[datetime | None, Filter.at_least("i.created_at")]
    ended_before: Annotated[datetime | None, Filter.at_most("i.resolved_at")]
    ended_after: Annotated[datetime | None, Filter.at_least("i.resolved_at")]
    open: Annotated[bool | None, Filter.if_true("i.state = {}", IncidentState.OPEN)]
    resolved: Annotated[
        bool | None,
        Filter.if_true("i.state <> {} AND NOT " + _DELETED, IncidentState.OPEN, *_DELETED_VALUES),
    ]
    deleted: Annotated[bool | None, Filter.if_true(_DELETED, *_DELETED_VALUES)]


_HISTORIC_INCIDENTS = CamundaList(
    HistoricIncidentRow,
    select_list(
        HistoricIncidentRow, [("i", "incident"), ("p", "process_instance")], {"deleted": _DELETED}
    ),
    INCIDENT_SOURCE,
    HISTORIC_INCIDENT_SORT,
    "i.created_at, i.id",
    filters_of(IncidentFilter),
    _DELETED_VALUES,
    covers=covers.history("p.definition_key", "i.instance_id", tenant="i.tenant_id"),
)


@query
def historic_incidents(
    conn: Connection, page: CamundaPage, found: IncidentFilter, *, count: bool = False
) -> list[HistoricIncidentRow] | int:
    """Every incident, open or ended, with Camunda's historic filters."""
    return _HISTORIC_INCIDENTS.read(conn, page, found, count=count)


# -- tasks ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoricTaskRow:
    """A user task, open or ended (an ended task keeps its row with its instance: Completed, or
    Retired when its activity was left otherwise), with its instance's definition. A standalone
    task's instance, token, node and definition are None."""

    id: UUID
    instance_id: UUID | None
    token_id: UUID | None
    node_id: str | None
    name: str | None
    description: str | None
    owner: str | None
    assignee: str | None
    state: str
    created_at: datetime
    ended_at: datetime | None
    due_at: datetime | None
    follow_up_at: datetime | None
    priority: int
    parent_task_id: UUID | None
    tenant_id: str | None
    definition_id: str | None
    definition_key: str | None
    root_instance_id: UUID | None

    @property
    def completed(self) -> bool:
        return self.state == TaskState.COMPLETED

    @property
    def open(self) -> bool:
        return self.state == TaskState.OPEN


# Camunda's sortBy names of historic tasks.
HISTORIC_TASK_SORT: dict[str, LiteralString] = {
    "taskId": "t.id",
    "activityInstanceId": "t.token_id",
    "processDefinitionId": "p.definition_id",
    "processInstanceId": "t.instance_id",
    "executionId": "t.token_id",
    "duration": "(t.ended_at - t.created_at)",
    "endTime": "t.ended_at",
    "startTime": "t.created_at",
    "taskName": "t.name",
    "taskDescription": "t.description",
    "assignee": "t.assignee",
    "owner": "t.owner",
    "dueDate": "t.due_at",
    "followUpDate": "t.follow_up_at",
    "deleteReason": "t.state",
    "taskDefinitionKey": "t.node_id",
    "priority": "t.priority",
    "tenantId": "t.tenant_id",
}


class HistoricTaskFilters(TypedDict, total=False):
    """Camunda's filters of historic tasks (None: not filtered; `finished`, `unfinished` false:
    not filtered, as Camunda reads them)."""

    task_id: Annotated[UUID | None, Filter.equals("t.id")]
    instance_id: Annotated[UUID | None, Filter.equals("t.instance_id")]
    execution_id: Annotated[UUID | None, Filter.equals("t.token_id")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("p.definition_key")]
    name: Annotated[str | None, Filter.equals("t.name")]
    name_like: Annotated[str | None, Filter.like("t.name")]
    assignee: Annotated[str | None, Filter.equals("t.assignee")]
    assignee_like: Annotated[str | None, Filter.like("t.assignee")]
    node_id: Annotated[str | None, Filter.equals("t.node_id")]
    finished: Annotated[bool | None, Filter.if_true("t.ended_at IS NOT NULL")]
    unfinished: Annotated[bool | None, Filter.if_true("t.ended_at IS NULL")]
    started_before: Annotated[datetime | None, Filter.at_most("t.created_at")]
    started_after: Annotated[datetime | None, Filter.at_least("t.created_at")]
    finished_before: Annotated[datetime | None, Filter.at_most("t.ended_at")]
    finished_after: Annotated[datetime | None, Filter.at_least("t.ended_at")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("t.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("t.tenant_id IS NULL")]


_HISTORIC_TASKS = CamundaList(
    HistoricTaskRow,
    select_list(
        HistoricTaskRow,
        [("t", "user_task"), ("p", "process_instance")],
        {"root_instance_id": "p.root_instance_id"},
    ),
    # A standalone task has no instance: its instance's columns are null.
    "user_task t LEFT JOIN process_instance p ON p.id = t.instance_id",
    HISTORIC_TASK_SORT,
    "t.created_at, t.id",
    filters_of(HistoricTaskFilters),
    covers=covers.historic_task("p.definition_key", "t.id", tenant="t.tenant_id"),
)


@query
def historic_tasks(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[HistoricTaskFilters],
) -> list[HistoricTaskRow] | int:
    """Every user task, open or ended, with Camunda's historic filters."""
    return _HISTORIC_TASKS.read(conn, page, filters, count=count)
