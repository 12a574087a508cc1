"""Read SQL for the Camunda-compatible REST surface: list queries with Camunda's filters, sorting
and paging, and the few joins its DTOs need (activity instance ids, version tags, scopes).

Every function is a plain committed read. Filters left as None do not apply. `sort` names are
Camunda's `sortBy` values; unknown names are refused by the caller before they get here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql
from psycopg.types.json import Jsonb

from engine.queries import Connection, fetch_all, fetch_dicts, fetch_one, query
from engine.sql.filters import LIKE_ESCAPE, Where, like_pattern, order_by
from engine.sql.filters import count as count_rows
from engine.sql.filters import like_matches as like_matches  # app/camunda reads it here
from engine.states import (
    FINAL_TOKEN_STATES,
    IncidentState,
    InstanceState,
    JobKind,
    TaskState,
    VisitState,
)
from engine.store import tasks as task_store
from engine.store.columns import select_list
from engine.store.external_tasks import ExternalTaskInfo
from engine.store.incidents import IncidentInfo
from engine.store.instance_reads import StepVisit
from engine.store.jobs import JobInfo

RUNNING_STATES: tuple[str, ...] = (
    InstanceState.CREATED,
    InstanceState.ACTIVE,
    InstanceState.SUSPENDED,
    InstanceState.TERMINATING,
)


@dataclass(frozen=True)
class Page:
    """`first`/`max`: Camunda's firstResult/maxResults; `sort`: (sortBy, descending) pairs."""

    first: int = 0
    max: int | None = None
    sort: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class VariableFilter:
    """`name_op_value`: op is eq, neq, gt, gteq, lt, lteq or like. `values` holds the JSON
    values the text may stand for (the text itself, and a number or boolean it spells)."""

    name: str
    op: str
    text: str
    number: float | None
    values: tuple[Any, ...]


_COMPARISONS: dict[str, LiteralString] = {"gt": ">", "gteq": ">=", "lt": "<", "lteq": "<="}


def _variable_clauses(
    where: Where, alias: LiteralString, filters: Sequence[VariableFilter]
) -> None:
    for f in filters:
        value = where.bind(f.name)
        test: sql.Composable
        match f.op:
            case "eq" | "neq":
                any_of = where.bind([Jsonb(v) for v in f.values])
                test = sql.SQL("v.value = ANY({}::jsonb[])").format(any_of)
                if f.op == "neq":
                    test = sql.SQL("NOT ({})").format(test)
            case "like":
                test = sql.SQL(
                    "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' LIKE {} " + LIKE_ESCAPE
                ).format(where.bind(like_pattern(f.text)))
            case _:
                symbol = sql.SQL(_COMPARISONS[f.op])
                if f.number is not None:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'number' AND (v.value)::numeric {} {}::numeric"
                    ).format(symbol, where.bind(f.number))
                else:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' {} {}"
                    ).format(symbol, where.bind(f.text))
        where.compose(
            sql.SQL(
                "EXISTS (SELECT 1 FROM variable v WHERE v.instance_id = {}.id "
                "AND v.scope_key = '' AND v.name = {} AND {})"
            ).format(sql.SQL(alias), value, test)
        )


# An open incident of the instance `p`.
_OPEN_INCIDENT = "SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = {}"


# -- process instances ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str


INSTANCE_SORT: dict[str, LiteralString] = {
    "instanceId": "p.id",
    "definitionKey": "p.definition_key",
    "definitionId": "p.definition_id",
    "businessKey": "p.business_key",
}


_INSTANCE_COLUMNS = select_list(InstanceRow, [("p", "process_instance")])


@query
def process_instances(
    conn: Connection,
    page: Page,
    *,
    ids: Sequence[UUID] | None = None,
    business_key: str | None = None,
    business_key_like: str | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    definition_keys: Sequence[str] | None = None,
    suspended: bool | None = None,
    with_incident: bool | None = None,
    variables: Sequence[VariableFilter] = (),
    family: FamilyFilter | None = None,
    count: bool = False,
) -> list[InstanceRow] | int:
    """Running instances (Camunda's runtime: ended ones are history only)."""
    where = Where()
    where.any_of("p.state", RUNNING_STATES)
    # Implied by the states (an instance gets its end time as it ends): lets the partial index
    # of unfinished instances serve the list in start order.
    where.fixed("p.ended_at IS NULL")
    if family is not None:
        _family_clauses(where, family, running=True)
    where.any_of("p.id", ids)
    where.equals("p.business_key", business_key)
    where.like("p.business_key", business_key_like)
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    where.any_of("p.definition_key", definition_keys or None)
    if suspended is not None:
        where.add("(p.state = {}) = {}", InstanceState.SUSPENDED, suspended)
    if with_incident:
        where.exists(_OPEN_INCIDENT, IncidentState.OPEN)
    _variable_clauses(where, "p", variables)
    source = sql.SQL("FROM process_instance p")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_INSTANCE_COLUMNS} ")
        + source
        + where.sql()
        + order_by(page.sort, INSTANCE_SORT, "p.started_at, p.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, InstanceRow, statement, where.params())


@dataclass(frozen=True)
class FamilyFilter:
    """Camunda's filters on the calls between instances: the instances `super_instance` called
    (superProcessInstance), the one that called `sub_instance` (subProcessInstance), the members
    of the family whose root is `root_instance` (the root included), only instances nobody called
    (`roots_only` True; False: only called ones), only instances that call none (`leaves_only`)."""

    super_instance: UUID | None = None
    sub_instance: UUID | None = None
    root_instance: UUID | None = None
    roots_only: bool | None = None
    leaves_only: bool | None = None


def _family_clauses(where: Where, family: FamilyFilter, *, running: bool) -> None:
    """The family filters on `p`; `running`: a leaf calls no running instance (the runtime's
    view), else no instance at all (the history's)."""
    where.equals("p.super_instance_id", family.super_instance)
    where.when(
        family.sub_instance,
        "p.id = (SELECT s.super_instance_id FROM process_instance s WHERE s.id = {})",
    )
    # The root by its primary key, its called instances by their partial index.
    where.when(
        family.root_instance,
        "(p.id = {} OR (p.super_instance_id IS NOT NULL AND p.root_instance_id = {}))",
    )
    if family.roots_only is not None:
        called = "p.super_instance_id IS NOT NULL"
        where.fixed("p.super_instance_id IS NULL" if family.roots_only else called)
    if family.leaves_only:
        if running:
            where.exists(
                "SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id "
                "AND c.state = ANY({})",
                list(RUNNING_STATES),
                negated=True,
            )
        else:
            where.exists(
                "SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id", negated=True
            )


@dataclass(frozen=True)
class HistoricInstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    definition_name: str | None
    definition_version: int
    business_key: str | None
    state: str
    started_at: datetime
    ended_at: datetime | None
    start_activity_id: str | None
    super_instance_id: UUID | None
    root_instance_id: UUID | None


_HISTORIC_COLUMNS = sql.SQL(
    "SELECT p.id, p.definition_id, p.definition_key, d.name AS definition_name, "
    "d.version AS definition_version, p.business_key, p.state, p.started_at, p.ended_at, "
    "(SELECT h.node_id FROM history h WHERE h.instance_id = p.id "
    " ORDER BY h.started_at, h.id LIMIT 1) AS start_activity_id, "
    "p.super_instance_id, p.root_instance_id "
)
_HISTORIC_FROM = sql.SQL(
    "FROM process_instance p JOIN process_definition d ON d.id = p.definition_id"
)


@query
def historic_instance(conn: Connection, instance_id: UUID) -> HistoricInstanceRow | None:
    return fetch_one(
        conn,
        HistoricInstanceRow,
        _HISTORIC_COLUMNS + _HISTORIC_FROM + sql.SQL(" WHERE p.id = %s"),
        (instance_id,),
    )


HISTORIC_INSTANCE_SORT: dict[str, LiteralString] = {
    "instanceId": "p.id",
    "definitionId": "p.definition_id",
    "definitionKey": "p.definition_key",
    "definitionName": "d.name",
    "definitionVersion": "d.version",
    "businessKey": "p.business_key",
    "startTime": "p.started_at",
    "endTime": "p.ended_at",
    "duration": "(p.ended_at - p.started_at)",
}

# Camunda's historic states (active, suspended, completed, externallyTerminated) by their rows'.
HISTORIC_STATE_FILTERS: dict[str, tuple[InstanceState, ...]] = {
    "active": (InstanceState.CREATED, InstanceState.ACTIVE, InstanceState.TERMINATING),
    "suspended": (InstanceState.SUSPENDED,),
    "completed": (InstanceState.COMPLETED,),
    "externallyTerminated": (InstanceState.TERMINATED,),
}


@query
def historic_instances(
    conn: Connection,
    page: Page,
    *,
    instance_id: UUID | None = None,
    ids: Sequence[UUID] | None = None,
    business_key: str | None = None,
    business_key_like: str | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    definition_keys: Sequence[str] | None = None,
    finished: bool | None = None,
    states: Sequence[str] | None = None,
    with_incidents: bool | None = None,
    started_before: datetime | None = None,
    started_after: datetime | None = None,
    finished_before: datetime | None = None,
    finished_after: datetime | None = None,
    family: FamilyFilter | None = None,
    count: bool = False,
) -> list[HistoricInstanceRow] | int:
    """Every instance, running or ended (Camunda's history)."""
    where = Where()
    where.equals("p.id", instance_id)
    where.any_of("p.id", ids)
    where.equals("p.business_key", business_key)
    where.like("p.business_key", business_key_like)
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    where.any_of("p.definition_key", definition_keys or None)
    if finished is not None:
        where.fixed("p.ended_at IS NOT NULL" if finished else "p.ended_at IS NULL")
    where.any_of("p.state", states)
    if with_incidents:
        where.exists(_OPEN_INCIDENT, IncidentState.OPEN)
    where.at_most("p.started_at", started_before)
    where.at_least("p.started_at", started_after)
    where.at_most("p.ended_at", finished_before)
    where.at_least("p.ended_at", finished_after)
    if family is not None:
        _family_clauses(where, family, running=False)
    if count:
        return count_rows(conn, _HISTORIC_FROM, where)
    statement = (
        _HISTORIC_COLUMNS
        + _HISTORIC_FROM
        + where.sql()
        + order_by(page.sort, HISTORIC_INSTANCE_SORT, "p.started_at, p.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, HistoricInstanceRow, statement, where.params())


# -- activity instances ---------------------------------------------------------------------------


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
    page: Page,
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


# -- user tasks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow(task_store.TaskRow):
    """A user task and the state of its instance."""

    instance_state: str


TASK_SORT: dict[str, LiteralString] = {
    "id": "t.id",
    "name": "t.name",
    "nameCaseInsensitive": "lower(t.name)",
    "assignee": "t.assignee",
    "created": "t.created_at",
    "dueDate": "t.due_at",
    "priority": "t.priority",
    "instanceId": "t.instance_id",
    "processInstanceId": "t.instance_id",
    "executionId": "t.token_id",
    "processDefinitionId": "p.definition_id",
    "taskDefinitionKey": "t.node_id",
}


_TASK_COLUMNS = select_list(
    TaskRow, [("t", "user_task"), ("p", "process_instance")], {"instance_state": "p.state"}
)


@query
def user_tasks(
    conn: Connection,
    page: Page,
    *,
    task_id: UUID | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    business_key: str | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    definition_keys: Sequence[str] | None = None,
    node_id: str | None = None,
    node_ids: Sequence[str] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    assignee: str | None = None,
    assignee_like: str | None = None,
    assigned: bool | None = None,
    candidate_user: str | None = None,
    candidate_group: str | None = None,
    candidate_groups: Sequence[str] | None = None,
    suspended: bool | None = None,
    priority: int | None = None,
    min_priority: int | None = None,
    max_priority: int | None = None,
    execution_id: UUID | None = None,
    count: bool = False,
) -> list[TaskRow] | int:
    """Open user tasks."""
    where = Where()
    where.state("t.state", TaskState.OPEN)
    where.equals("t.id", task_id)
    where.equals("t.instance_id", instance_id)
    where.any_of("t.instance_id", instance_ids or None)
    where.equals("p.business_key", business_key)
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    where.any_of("p.definition_key", definition_keys or None)
    where.equals("t.node_id", node_id)
    where.any_of("t.node_id", node_ids or None)
    where.equals("t.name", name)
    where.like("t.name", name_like)
    where.equals("t.assignee", assignee)
    where.like("t.assignee", assignee_like)
    if assigned is not None:
        where.fixed("t.assignee IS NOT NULL" if assigned else "t.assignee IS NULL")
    where.when(candidate_user, "{} = ANY(t.candidate_users)")
    where.when(candidate_group, "{} = ANY(t.candidate_groups)")
    where.when(list(candidate_groups) if candidate_groups else None, "t.candidate_groups && {}")
    if suspended is not None:
        where.add("(p.state = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.equals("t.priority", priority)
    where.at_least("t.priority", min_priority)
    where.at_most("t.priority", max_priority)
    where.equals("t.token_id", execution_id)
    source = sql.SQL("FROM user_task t JOIN process_instance p ON p.id = t.instance_id")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_TASK_COLUMNS} ")
        + source
        + where.sql()
        + order_by(page.sort, TASK_SORT, "t.created_at, t.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, TaskRow, statement, where.params())


# -- external tasks -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExternalTaskRow(ExternalTaskInfo):
    """An external task with its definition's version tag, its instance's state and the
    activity instance of its token."""

    version_tag: str | None
    instance_state: str
    activity_instance_id: UUID | None


EXTERNAL_TASK_SORT: dict[str, LiteralString] = {
    "id": "e.id",
    "lockExpirationTime": "e.lock_expires_at",
    "processInstanceId": "e.instance_id",
    "processDefinitionId": "p.definition_id",
    "processDefinitionKey": "p.definition_key",
    "taskPriority": "e.priority",
    "createTime": "e.created_at",
}

_EXTERNAL_COLUMNS = sql.SQL(
    "SELECT "
    + select_list(
        ExternalTaskRow,
        [("e", "external_task"), ("p", "process_instance"), ("d", "process_definition")],
        {"instance_state": "p.state", "activity_instance_id": "t.visit_id"},
    )
    + " "
)
_EXTERNAL_FROM = sql.SQL(
    "FROM external_task e JOIN process_instance p ON p.id = e.instance_id "
    "JOIN process_definition d ON d.id = p.definition_id "
    "LEFT JOIN token t ON t.id = e.token_id"
)


@query
def external_tasks(
    conn: Connection,
    page: Page,
    now: datetime,
    *,
    task_id: UUID | None = None,
    task_ids: Sequence[UUID] | None = None,
    topic: str | None = None,
    worker_id: str | None = None,
    locked: bool | None = None,
    with_retries_left: bool | None = None,
    lock_expires_after: datetime | None = None,
    lock_expires_before: datetime | None = None,
    node_id: str | None = None,
    node_ids: Sequence[str] | None = None,
    execution_id: UUID | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    definition_id: str | None = None,
    suspended: bool | None = None,
    min_priority: int | None = None,
    max_priority: int | None = None,
    count: bool = False,
) -> list[ExternalTaskRow] | int:
    """Open external tasks."""
    where = Where()
    where.state("e.state", TaskState.OPEN)
    where.equals("e.id", task_id)
    where.any_of("e.id", task_ids or None)
    where.equals("e.topic", topic)
    where.equals("e.worker_id", worker_id)
    if locked is not None:
        where.add("(e.worker_id IS NOT NULL AND e.lock_expires_at > {}) = {}", now, locked)
    if with_retries_left is not None:
        where.add("(e.retries IS NULL OR e.retries > 0) = {}", with_retries_left)
    where.above("e.lock_expires_at", lock_expires_after)
    where.below("e.lock_expires_at", lock_expires_before)
    where.equals("e.node_id", node_id)
    where.any_of("e.node_id", node_ids or None)
    where.equals("e.token_id", execution_id)
    where.equals("e.instance_id", instance_id)
    where.any_of("e.instance_id", instance_ids or None)
    where.equals("p.definition_id", definition_id)
    if suspended is not None:
        where.add("(p.state = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.at_least("e.priority", min_priority)
    where.at_most("e.priority", max_priority)
    if count:
        return count_rows(conn, _EXTERNAL_FROM, where)
    statement = (
        _EXTERNAL_COLUMNS
        + _EXTERNAL_FROM
        + where.sql()
        + order_by(page.sort, EXTERNAL_TASK_SORT, "e.created_at, e.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, ExternalTaskRow, statement, where.params())


@dataclass(frozen=True)
class LockedTaskDetails:
    token_id: UUID
    activity_instance_id: UUID | None
    version_tag: str | None


@query
def locked_task_details(
    conn: Connection, task_ids: Sequence[UUID]
) -> dict[UUID, LockedTaskDetails]:
    """What a fetchAndLock answer carries beyond the engine's fetch result."""
    rows = fetch_dicts(
        conn,
        "SELECT e.id, e.token_id, t.visit_id AS activity_instance_id, d.version_tag "
        "FROM external_task e "
        "JOIN process_instance p ON p.id = e.instance_id "
        "JOIN process_definition d ON d.id = p.definition_id "
        "LEFT JOIN token t ON t.id = e.token_id WHERE e.id = ANY(%s)",
        (list(task_ids),),
    )
    return {
        row["id"]: LockedTaskDetails(
            token_id=row["token_id"],
            activity_instance_id=row["activity_instance_id"],
            version_tag=row["version_tag"],
        )
        for row in rows
    }


# -- incidents ------------------------------------------------------------------------------------


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
    page: Page,
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


# -- jobs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRow(JobInfo):
    """A job with its definition's key (none for the history cleanup job) and its instance's
    state (none for a start timer)."""

    definition_key: str | None
    instance_state: str | None


JOB_SORT: dict[str, LiteralString] = {
    "jobId": "j.id",
    "executionId": "COALESCE(j.token_id, j.instance_id)",
    "processInstanceId": "j.instance_id",
    "processDefinitionId": "j.definition_id",
    "processDefinitionKey": "d.key",
    "jobRetries": "j.retries",
    "jobDueDate": "j.due_at",
    "jobPriority": "j.id",
}


_JOB_COLUMNS = select_list(
    JobRow, [("j", "job")], {"definition_key": "d.key", "instance_state": "p.state"}
)


@query
def jobs(
    conn: Connection,
    page: Page,
    now: datetime,
    *,
    job_id: UUID | None = None,
    job_ids: Sequence[UUID] | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    execution_id: UUID | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    node_id: str | None = None,
    with_retries_left: bool | None = None,
    executable: bool | None = None,
    timers: bool | None = None,
    messages: bool | None = None,
    with_exception: bool | None = None,
    suspended: bool | None = None,
    due_before: datetime | None = None,
    due_after: datetime | None = None,
    count: bool = False,
) -> list[JobRow] | int:
    where = Where()
    where.equals("j.id", job_id)
    where.any_of("j.id", job_ids or None)
    where.equals("j.instance_id", instance_id)
    where.any_of("j.instance_id", instance_ids or None)
    # A process-level event subprocess's timer belongs to the instance's own execution.
    where.equals("COALESCE(j.token_id, j.instance_id)", execution_id)
    where.equals("j.definition_id", definition_id)
    where.equals("d.key", definition_key)
    where.equals("j.node_id", node_id)
    if with_retries_left is not None:
        where.add("(j.retries > 0) = {}", with_retries_left)
    if executable:
        where.add("j.retries > 0 AND j.due_at <= {}", now)
    if timers:
        where.any_of("j.kind", (JobKind.TIMER, JobKind.TIMER_START))
    if messages:
        where.any_of("j.kind", (JobKind.ASYNC, JobKind.ASYNC_AFTER))
    if with_exception:
        where.fixed("j.error_message IS NOT NULL")
    if suspended is not None:
        where.add("(coalesce(p.state, '') = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.below("j.due_at", due_before)
    where.above("j.due_at", due_after)
    source = sql.SQL(
        "FROM job j LEFT JOIN process_definition d ON d.id = j.definition_id "
        "LEFT JOIN process_instance p ON p.id = j.instance_id"
    )
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_JOB_COLUMNS} ")
        + source
        + where.sql()
        # By id, as Camunda's default: job ids are time-ordered and the primary key walks them.
        + order_by(page.sort, JOB_SORT, "j.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, JobRow, statement, where.params())


# -- event subscriptions --------------------------------------------------------------------------


@dataclass(frozen=True)
class EventSubscriptionRow:
    """A message, signal or conditional wait (no instance: a definition's start event); the
    execution is the waiting token, else the instance whose scope waits."""

    id: UUID
    kind: str
    name: str
    instance_id: UUID | None
    execution_id: UUID | None
    node_id: str
    created_at: datetime


EVENT_SUBSCRIPTION_SORT: dict[str, LiteralString] = {"created": "s.created_at", "tenantId": "s.id"}


@query
def event_subscriptions(
    conn: Connection,
    page: Page,
    *,
    subscription_id: UUID | None = None,
    event_name: str | None = None,
    event_type: str | None = None,
    execution_id: UUID | None = None,
    instance_id: UUID | None = None,
    node_id: str | None = None,
    count: bool = False,
) -> list[EventSubscriptionRow] | int:
    where = Where()
    where.equals("s.id", subscription_id)
    where.equals("s.name", event_name)
    where.equals("s.kind", event_type)
    where.equals("coalesce(s.token_id, s.instance_id)", execution_id)
    where.equals("s.instance_id", instance_id)
    where.equals("s.node_id", node_id)
    source = sql.SQL("FROM event_subscription s")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT s.id, s.kind, s.name, s.instance_id, "
            "coalesce(s.token_id, s.instance_id) AS execution_id, s.node_id, s.created_at "
        )
        + source
        + where.sql()
        + order_by(page.sort, EVENT_SUBSCRIPTION_SORT, "s.created_at, s.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, EventSubscriptionRow, statement, where.params())


# -- deployments ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeploymentRow:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime


@query
def deployment(conn: Connection, deployment_id: UUID) -> DeploymentRow | None:
    return fetch_one(
        conn,
        DeploymentRow,
        "SELECT id, name, source, created_at FROM deployment WHERE id = %s",
        (deployment_id,),
    )
