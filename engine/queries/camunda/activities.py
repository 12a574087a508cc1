"""Camunda's activity instances: the visits of a history, the live tokens of an instance and the
visits of scope tokens the activity-instance tree is built from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.sql.filters import count as count_rows
from engine.states import FINAL_TOKEN_STATES, VisitState
from engine.store.columns import select_list
from engine.store.instance_reads import StepVisit


@dataclass(frozen=True)
class LiveToken:
    id: UUID
    node_id: str
    state: str
    scope_id: UUID | None
    visit_id: UUID | None
    # The name its open visit shows (a name with `${...}` parts, evaluated as it entered).
    visit_name: str | None = None


@query
def live_tokens(conn: Connection, instance_id: UUID) -> list[LiveToken]:
    return fetch_all(
        conn,
        LiveToken,
        "SELECT t.id, t.node_id, t.state, t.scope_id, t.visit_id, h.node_name AS visit_name "
        "FROM token t LEFT JOIN history h ON h.id = t.visit_id "
        "WHERE t.instance_id = %s AND t.state <> ALL(%s) ORDER BY t.created_at, t.id",
        (instance_id, list(FINAL_TOKEN_STATES)),
    )


@dataclass(frozen=True)
class ActivityRow(StepVisit):
    """A visit with its instance, definition, token and scope, and the user task it opened."""

    id: UUID
    instance_id: UUID
    definition_id: str
    definition_key: str
    token_id: UUID
    scope_token_id: UUID | None
    task_id: UUID | None
    assignee: str | None
    called_instance_id: UUID | None
    root_instance_id: UUID | None
    # Its instance's tenant (null: none).
    tenant_id: str | None = None


@dataclass(frozen=True)
class ActivityCount:
    """How many visits of one node of one definition are in one state."""

    definition_id: str
    definition_key: str
    node_id: str
    node_type: str
    state: str
    visits: int


# A visit's tenant, its instance's (as an expression: a count joins no instance row).
_TENANT: LiteralString = covers.tenant_of("h.instance_id")

ACTIVITY_SORT: dict[str, LiteralString] = {
    "activityInstanceId": "h.id",
    "instanceId": "h.instance_id",
    "executionId": "h.token_id",
    "activityId": "h.node_id",
    "activityName": "h.node_name",
    "activityType": "h.node_type",
    "startTime": "h.started_at",
    "endTime": "h.ended_at",
    "duration": "(h.ended_at - h.started_at)",
    "definitionId": "p.definition_id",
    "occurrence": "h.started_at",
    "tenantId": _TENANT,
}


class ActivityFilters(TypedDict, total=False):
    """Camunda's filters of activity instances (None: not filtered; `node_types`: an empty list
    matches nothing)."""

    activity_instance_id: Annotated[UUID | None, Filter.equals("h.id")]
    instance_id: Annotated[UUID | None, Filter.equals("h.instance_id")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    execution_id: Annotated[UUID | None, Filter.equals("h.token_id")]
    activity_id: Annotated[str | None, Filter.equals("h.node_id")]
    activity_name: Annotated[str | None, Filter.equals("h.node_name")]
    activity_name_like: Annotated[str | None, Filter.like("h.node_name")]
    node_types: Annotated[Sequence[str] | None, Filter.any_of("h.node_type")]
    assignee: Annotated[str | None, Filter.equals("ut.assignee")]
    finished: Annotated[bool | None, Filter.present("h.ended_at")]
    canceled: Annotated[bool | None, Filter.holds("h.state = {}", VisitState.TERMINATED)]
    started_before: Annotated[datetime | None, Filter.at_most("h.started_at")]
    started_after: Annotated[datetime | None, Filter.at_least("h.started_at")]
    finished_before: Annotated[datetime | None, Filter.at_most("h.ended_at")]
    finished_after: Annotated[datetime | None, Filter.at_least("h.ended_at")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given(_TENANT)]
    without_tenant: Annotated[bool | None, Filter.if_true(_TENANT + " IS NULL")]


# The user task a visit opened: among its instance's tasks (their index), the first its token
# opened at the node from the visit's start on.
_USER_TASK: LiteralString = (
    " LEFT JOIN LATERAL (SELECT u.id, u.assignee FROM user_task u "
    "  WHERE u.instance_id = h.instance_id AND u.token_id = h.token_id "
    "  AND u.node_id = h.node_id AND u.created_at >= h.started_at "
    "  ORDER BY u.created_at LIMIT 1) ut ON h.node_type = 'userTask'"
)
_WITH_INSTANCE: LiteralString = " JOIN process_instance p ON p.id = h.instance_id"

_ACTIVITIES = CamundaList(
    ActivityRow,
    select_list(
        ActivityRow,
        [("h", "history"), ("p", "process_instance")],
        {"scope_token_id": "t.scope_id", "task_id": "ut.id", "assignee": "ut.assignee"},
    ),
    "history h" + _WITH_INSTANCE + " LEFT JOIN token t ON t.id = h.token_id" + _USER_TASK,
    ACTIVITY_SORT,
    # By id, as Camunda's default: visit ids are time-ordered, and the primary key walks them
    # in order, so a first page reads only the rows it shows.
    "h.id",
    filters_of(ActivityFilters),
    covers=covers.history("p.definition_key", "h.instance_id", tenant="p.tenant_id"),
)


@query
def activity_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    per_node: bool = False,
    **filters: Unpack[ActivityFilters],
) -> list[ActivityRow] | int | list[ActivityCount]:
    """A page of the visits the filters let through; with `count`, how many there are; with
    `per_node`, how many per definition, node, node type and state (a count that filters on
    what only the model tells, such as the activity type a node shows)."""
    if not count and not per_node:
        return _ACTIVITIES.read(conn, page, filters, count=False)
    where = Where()
    where.apply(_ACTIVITIES.filters, filters)
    where.authorized(
        covers.history(
            covers.key_of("h.instance_id"),
            "h.instance_id",
            tenant=covers.tenant_of("h.instance_id"),
        )
    )
    # Only what the filters read: a count joins nothing else.
    task: LiteralString = _USER_TASK if filters.get("assignee") is not None else ""
    if per_node:
        statement = (
            sql.SQL(
                "SELECT p.definition_id, p.definition_key, h.node_id, h.node_type, h.state, "
                "count(*) AS visits FROM history h" + _WITH_INSTANCE + task
            )
            + where.sql()
            + sql.SQL(
                " GROUP BY p.definition_id, p.definition_key, h.node_id, h.node_type, h.state"
            )
        )
        return fetch_all(conn, ActivityCount, statement, where.params())
    instance: LiteralString = _WITH_INSTANCE if filters.get("definition_id") is not None else ""
    return count_rows(conn, sql.SQL("FROM history h" + instance + task), where)


@dataclass(frozen=True)
class ScopeVisit:
    id: UUID
    token_id: UUID
    node_id: str
    started_at: datetime


@query
def visits_of_tokens(conn: Connection, token_ids: Sequence[UUID]) -> list[ScopeVisit]:
    """Every visit of the given tokens: a child activity's parent is its scope token's visit to
    the enclosing subprocess."""
    if not token_ids:
        return []
    return fetch_all(
        conn,
        ScopeVisit,
        "SELECT id, token_id, node_id, started_at FROM history WHERE token_id = ANY(%s) "
        "ORDER BY started_at, id",
        (list(token_ids),),
    )
