"""Camunda's activity instances: the visits of a history, the live tokens of an instance and the
visits of scope tokens the activity-instance tree is built from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import FINAL_TOKEN_STATES, VisitState
from engine.store.instance_reads import StepVisit


@dataclass(frozen=True)
class LiveToken:
    id: UUID
    node_id: str
    state: str
    scope_id: UUID | None
    visit_id: UUID | None


@query
def live_tokens(conn: Connection, instance_id: UUID) -> list[LiveToken]:
    return fetch_all(
        conn,
        LiveToken,
        "SELECT id, node_id, state, scope_id, visit_id FROM token "
        "WHERE instance_id = %s AND state <> ALL(%s) ORDER BY created_at, id",
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


@dataclass(frozen=True)
class ActivityCount:
    """How many visits of one node of one definition are in one state."""

    definition_id: str
    definition_key: str
    node_id: str
    node_type: str
    state: str
    visits: int


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
}


@query
def activity_instances(
    conn: Connection,
    page: CamundaPage,
    *,
    activity_instance_id: UUID | None = None,
    instance_id: UUID | None = None,
    definition_id: str | None = None,
    execution_id: UUID | None = None,
    activity_id: str | None = None,
    activity_name: str | None = None,
    node_types: Sequence[str] | None = None,
    assignee: str | None = None,
    finished: bool | None = None,
    canceled: bool | None = None,
    started_before: datetime | None = None,
    started_after: datetime | None = None,
    finished_before: datetime | None = None,
    finished_after: datetime | None = None,
    count: bool = False,
    per_node: bool = False,
) -> list[ActivityRow] | int | list[ActivityCount]:
    """A page of the visits the filters let through; with `count`, how many there are; with
    `per_node`, how many per definition, node, node type and state (a count that filters on
    what only the model tells, such as the activity type a node shows)."""
    where = Where()
    where.equals("h.id", activity_instance_id)
    where.equals("h.instance_id", instance_id)
    where.equals("p.definition_id", definition_id)
    where.equals("h.token_id", execution_id)
    where.equals("h.node_id", activity_id)
    where.equals("h.node_name", activity_name)
    where.any_of("h.node_type", node_types)
    where.equals("ut.assignee", assignee)
    if finished is not None:
        where.fixed("h.ended_at IS NOT NULL" if finished else "h.ended_at IS NULL")
    if canceled is not None:
        where.add("(h.state = {}) = {}", VisitState.TERMINATED, canceled)
    where.at_most("h.started_at", started_before)
    where.at_least("h.started_at", started_after)
    where.at_most("h.ended_at", finished_before)
    where.at_least("h.ended_at", finished_after)
    # The user task a visit opened: among its instance's tasks (their index), the first its
    # token opened at the node from the visit's start on.
    task = sql.SQL(
        " LEFT JOIN LATERAL (SELECT u.id, u.assignee FROM user_task u "
        "  WHERE u.instance_id = h.instance_id AND u.token_id = h.token_id "
        "  AND u.node_id = h.node_id AND u.created_at >= h.started_at "
        "  ORDER BY u.created_at LIMIT 1) ut ON h.node_type = 'userTask'"
    )
    if per_node:
        statement = (
            sql.SQL(
                "SELECT p.definition_id, p.definition_key, h.node_id, h.node_type, h.state, "
                "count(*) AS visits FROM history h JOIN process_instance p ON p.id = h.instance_id"
            )
            + (task if assignee is not None else sql.SQL(""))
            + where.sql()
            + sql.SQL(
                " GROUP BY p.definition_id, p.definition_key, h.node_id, h.node_type, h.state"
            )
        )
        return fetch_all(conn, ActivityCount, statement, where.params())
    if count:
        # Only what the filters read: a count joins nothing else.
        source: sql.Composable = sql.SQL("FROM history h")
        if definition_id is not None:
            source += sql.SQL(" JOIN process_instance p ON p.id = h.instance_id")
        if assignee is not None:
            source += task
        return count_rows(conn, source, where)
    source = (
        sql.SQL(
            "FROM history h JOIN process_instance p ON p.id = h.instance_id "
            "LEFT JOIN token t ON t.id = h.token_id"
        )
        + task
    )
    statement = (
        sql.SQL(
            "SELECT h.id, h.instance_id, p.definition_id, p.definition_key, h.token_id, "
            "t.scope_id AS scope_token_id, h.node_id, h.node_name, h.node_type, h.state, "
            "h.started_at, h.ended_at, ut.id AS task_id, ut.assignee, h.called_instance_id, "
            "p.root_instance_id "
        )
        + source
        + where.sql()
        # By id, as Camunda's default: visit ids are time-ordered, and the primary key walks
        # them in order, so a first page reads only the rows it shows.
        + order_by(page.sort, ACTIVITY_SORT, "h.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, ActivityRow, statement, where.params())


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
