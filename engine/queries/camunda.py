"""Read SQL for the Camunda-compatible REST surface: list queries with Camunda's filters, sorting
and paging, and the few joins its DTOs need (activity instance ids, version tags, scopes).

Every function is a plain committed read. Filters left as None do not apply. `sort` names are
Camunda's `sortBy` values; unknown names are refused by the caller before they get here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from psycopg import sql
from psycopg.types.json import Jsonb

from engine.queries import Connection, fetch_all, fetch_dicts, fetch_one, query
from engine.store import tasks as task_store
from engine.store.external_tasks import ExternalTaskInfo
from engine.store.incidents import IncidentInfo
from engine.store.jobs import JobInfo
from engine.store.queries import StepVisit

RUNNING_STATES = ("Created", "Active", "Suspended", "Terminating")


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


class _Where:
    """A WHERE clause composed of SQL fragments; every value is a bound parameter."""

    def __init__(self) -> None:
        self.clauses: list[sql.Composable] = []
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> sql.Placeholder:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return sql.Placeholder(name)

    def add(self, clause: LiteralString, *values: Any) -> None:
        """`clause` with `{}` placeholders, one per value."""
        self.clauses.append(sql.SQL(clause).format(*(self.param(v) for v in values)))

    def fixed(self, clause: LiteralString) -> None:
        """A condition without values."""
        self.clauses.append(sql.SQL(clause))

    def when(self, value: Any, clause: LiteralString) -> None:
        if value is not None:
            self.add(clause, *([value] * clause.count("{}")))

    def clause(self) -> sql.Composable:
        if not self.clauses:
            return sql.SQL("")
        return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(self.clauses)


LIKE_ESCAPE = "ESCAPE '\\'"


def like_pattern(text: str) -> str:
    r"""Camunda's `*Like` value as a LIKE pattern with backslash as its escape character (see
    LIKE_ESCAPE). `%` and `_` are wildcards, as in Camunda; `\%`, `\_` and `\\` stand for the
    character itself; any other backslash (a trailing one, which PostgreSQL refuses) is a literal
    backslash."""
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        following = next(chars, None)
        if following in ("%", "_", "\\"):
            out.append("\\" + following)
        else:
            out.append("\\\\")
            if following is not None:
                out.append(following)
    return "".join(out)


def like_matches(value: str, text: str) -> bool:
    """Whether `value` matches Camunda's `*Like` value `text`, as `like_pattern` matches in SQL:
    for filters applied to rows already in memory."""
    out: list[str] = []
    chars = iter(like_pattern(text))
    for char in chars:
        if char == "\\":
            out.append(re.escape(next(chars)))
        else:
            out.append({"%": ".*", "_": "."}.get(char) or re.escape(char))
    return re.fullmatch("".join(out), value, re.DOTALL) is not None


def _like(text: str | None) -> str | None:
    return None if text is None else like_pattern(text)


def _order(page: Page, columns: dict[str, LiteralString], default: LiteralString) -> sql.Composed:
    parts = [
        sql.SQL("{} DESC" if desc else "{} ASC").format(sql.SQL(columns[key]))
        for key, desc in page.sort
    ]
    return sql.SQL(" ORDER BY ") + sql.SQL(", ").join([*parts, sql.SQL(default)])


def _limit(where: _Where, page: Page) -> sql.Composed:
    text = sql.SQL(" OFFSET {}").format(where.param(max(page.first, 0)))
    if page.max is not None:
        text += sql.SQL(" LIMIT {}").format(where.param(max(page.max, 0)))
    return text


_COMPARISONS: dict[str, LiteralString] = {"gt": ">", "gteq": ">=", "lt": "<", "lteq": "<="}


def _variable_clauses(
    where: _Where, alias: LiteralString, filters: Sequence[VariableFilter]
) -> None:
    for f in filters:
        value = where.param(f.name)
        test: sql.Composable
        match f.op:
            case "eq" | "neq":
                any_of = where.param([Jsonb(v) for v in f.values])
                test = sql.SQL("v.value = ANY({}::jsonb[])").format(any_of)
                if f.op == "neq":
                    test = sql.SQL("NOT ({})").format(test)
            case "like":
                test = sql.SQL(
                    "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' LIKE {} " + LIKE_ESCAPE
                ).format(where.param(like_pattern(f.text)))
            case _:
                symbol = sql.SQL(_COMPARISONS[f.op])
                if f.number is not None:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'number' AND (v.value)::numeric {} {}::numeric"
                    ).format(symbol, where.param(f.number))
                else:
                    test = sql.SQL(
                        "jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' {} {}"
                    ).format(symbol, where.param(f.text))
        where.clauses.append(
            sql.SQL(
                "EXISTS (SELECT 1 FROM variable v WHERE v.instance_id = {}.id "
                "AND v.scope_key = '' AND v.name = {} AND {})"
            ).format(sql.SQL(alias), value, test)
        )


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
    where = _Where()
    where.add("p.state = ANY({})", list(RUNNING_STATES))
    # Implied by the states (an instance gets its end time as it ends): lets the partial index
    # of unfinished instances serve the list in start order.
    where.fixed("p.ended_at IS NULL")
    if family is not None:
        _family_clauses(where, family, running=True)
    where.when(list(ids) if ids is not None else None, "p.id = ANY({})")
    where.when(business_key, "p.business_key = {}")
    where.when(_like(business_key_like), "p.business_key LIKE {} " + LIKE_ESCAPE)
    where.when(definition_id, "p.definition_id = {}")
    where.when(definition_key, "p.definition_key = {}")
    where.when(list(definition_keys) if definition_keys else None, "p.definition_key = ANY({})")
    if suspended is not None:
        where.add("(p.state = 'Suspended') = {}", suspended)
    if with_incident:
        where.fixed(
            "EXISTS (SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = 'Open')"
        )
    _variable_clauses(where, "p", variables)
    source = sql.SQL("FROM process_instance p")
    if count:
        return _count(conn, source, where)
    statement = (
        sql.SQL("SELECT p.id, p.definition_id, p.definition_key, p.business_key, p.state ")
        + source
        + where.clause()
        + _order(page, INSTANCE_SORT, "p.started_at, p.id")
        + _limit(where, page)
    )
    return fetch_all(conn, InstanceRow, statement, where.params)


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


def _family_clauses(where: _Where, family: FamilyFilter, *, running: bool) -> None:
    """The family filters on `p`; `running`: a leaf calls no running instance (the runtime's
    view), else no instance at all (the history's)."""
    where.when(family.super_instance, "p.super_instance_id = {}")
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
            where.add(
                "NOT EXISTS (SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id "
                "AND c.state = ANY({}))",
                list(RUNNING_STATES),
            )
        else:
            where.fixed(
                "NOT EXISTS (SELECT 1 FROM process_instance c WHERE c.super_instance_id = p.id)"
            )


def _count(conn: Connection, source: sql.Composable, where: _Where) -> int:
    row = conn.execute(
        sql.SQL("SELECT count(*) ") + source + where.clause(), where.params
    ).fetchone()
    return int(row[0]) if row else 0


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
HISTORIC_STATE_FILTERS: dict[str, tuple[str, ...]] = {
    "active": ("Created", "Active", "Terminating"),
    "suspended": ("Suspended",),
    "completed": ("Completed",),
    "externallyTerminated": ("Terminated",),
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
    where = _Where()
    where.when(instance_id, "p.id = {}")
    where.when(list(ids) if ids is not None else None, "p.id = ANY({})")
    where.when(business_key, "p.business_key = {}")
    where.when(_like(business_key_like), "p.business_key LIKE {} " + LIKE_ESCAPE)
    where.when(definition_id, "p.definition_id = {}")
    where.when(definition_key, "p.definition_key = {}")
    where.when(list(definition_keys) if definition_keys else None, "p.definition_key = ANY({})")
    if finished is not None:
        where.fixed("p.ended_at IS NOT NULL" if finished else "p.ended_at IS NULL")
    where.when(list(states) if states is not None else None, "p.state = ANY({})")
    if with_incidents:
        where.fixed(
            "EXISTS (SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = 'Open')"
        )
    where.when(started_before, "p.started_at <= {}")
    where.when(started_after, "p.started_at >= {}")
    where.when(finished_before, "p.ended_at <= {}")
    where.when(finished_after, "p.ended_at >= {}")
    if family is not None:
        _family_clauses(where, family, running=False)
    if count:
        return _count(conn, _HISTORIC_FROM, where)
    statement = (
        _HISTORIC_COLUMNS
        + _HISTORIC_FROM
        + where.clause()
        + _order(page, HISTORIC_INSTANCE_SORT, "p.started_at, p.id")
        + _limit(where, page)
    )
    return fetch_all(conn, HistoricInstanceRow, statement, where.params)


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
        "WHERE instance_id = %s AND state NOT IN ('Completed', 'Terminated') "
        "ORDER BY created_at, id",
        (instance_id,),
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
    where = _Where()
    where.when(activity_instance_id, "h.id = {}")
    where.when(instance_id, "h.instance_id = {}")
    where.when(definition_id, "p.definition_id = {}")
    where.when(execution_id, "h.token_id = {}")
    where.when(activity_id, "h.node_id = {}")
    where.when(activity_name, "h.node_name = {}")
    where.when(list(node_types) if node_types is not None else None, "h.node_type = ANY({})")
    where.when(assignee, "ut.assignee = {}")
    if finished is not None:
        where.fixed("h.ended_at IS NOT NULL" if finished else "h.ended_at IS NULL")
    if canceled is not None:
        where.add("(h.state = 'Terminated') = {}", canceled)
    where.when(started_before, "h.started_at <= {}")
    where.when(started_after, "h.started_at >= {}")
    where.when(finished_before, "h.ended_at <= {}")
    where.when(finished_after, "h.ended_at >= {}")
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
            + where.clause()
            + sql.SQL(
                " GROUP BY p.definition_id, p.definition_key, h.node_id, h.node_type, h.state"
            )
        )
        return fetch_all(conn, ActivityCount, statement, where.params)
    if count:
        # Only what the filters read: a count joins nothing else.
        source: sql.Composable = sql.SQL("FROM history h")
        if definition_id is not None:
            source += sql.SQL(" JOIN process_instance p ON p.id = h.instance_id")
        if assignee is not None:
            source += task
        return _count(conn, source, where)
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
        + where.clause()
        # By id, as Camunda's default: visit ids are time-ordered, and the primary key walks
        # them in order, so a first page reads only the rows it shows.
        + _order(page, ACTIVITY_SORT, "h.id")
        + _limit(where, page)
    )
    return fetch_all(conn, ActivityRow, statement, where.params)


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
    where = _Where()
    where.fixed("t.state = 'Open'")
    where.when(task_id, "t.id = {}")
    where.when(instance_id, "t.instance_id = {}")
    where.when(list(instance_ids) if instance_ids else None, "t.instance_id = ANY({})")
    where.when(business_key, "p.business_key = {}")
    where.when(definition_id, "p.definition_id = {}")
    where.when(definition_key, "p.definition_key = {}")
    where.when(list(definition_keys) if definition_keys else None, "p.definition_key = ANY({})")
    where.when(node_id, "t.node_id = {}")
    where.when(list(node_ids) if node_ids else None, "t.node_id = ANY({})")
    where.when(name, "t.name = {}")
    where.when(_like(name_like), "t.name LIKE {} " + LIKE_ESCAPE)
    where.when(assignee, "t.assignee = {}")
    where.when(_like(assignee_like), "t.assignee LIKE {} " + LIKE_ESCAPE)
    if assigned is not None:
        where.fixed("t.assignee IS NOT NULL" if assigned else "t.assignee IS NULL")
    where.when(candidate_user, "{} = ANY(t.candidate_users)")
    where.when(candidate_group, "{} = ANY(t.candidate_groups)")
    where.when(list(candidate_groups) if candidate_groups else None, "t.candidate_groups && {}")
    if suspended is not None:
        where.add("(p.state = 'Suspended') = {}", suspended)
    where.when(priority, "t.priority = {}")
    where.when(min_priority, "t.priority >= {}")
    where.when(max_priority, "t.priority <= {}")
    where.when(execution_id, "t.token_id = {}")
    source = sql.SQL("FROM user_task t JOIN process_instance p ON p.id = t.instance_id")
    if count:
        return _count(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT t.id, t.instance_id, t.token_id, t.node_id, t.name, t.state, t.created_at, "
            "t.ended_at, t.assignee, t.candidate_users, t.candidate_groups, t.due_at, "
            "t.priority, p.definition_id, p.definition_key, p.business_key, "
            "p.state AS instance_state "
        )
        + source
        + where.clause()
        + _order(page, TASK_SORT, "t.created_at, t.id")
        + _limit(where, page)
    )
    return fetch_all(conn, TaskRow, statement, where.params)


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
    "SELECT e.id, e.instance_id, e.token_id, e.node_id, e.topic, e.state, e.priority, "
    "e.worker_id, e.lock_expires_at, e.retries, e.error_message, e.error_details, e.created_at, "
    "p.definition_id, p.definition_key, d.version_tag, p.business_key, "
    "p.state AS instance_state, t.visit_id AS activity_instance_id "
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
    where = _Where()
    where.fixed("e.state = 'Open'")
    where.when(task_id, "e.id = {}")
    where.when(list(task_ids) if task_ids else None, "e.id = ANY({})")
    where.when(topic, "e.topic = {}")
    where.when(worker_id, "e.worker_id = {}")
    if locked is not None:
        where.add("(e.worker_id IS NOT NULL AND e.lock_expires_at > {}) = {}", now, locked)
    if with_retries_left is not None:
        where.add("(e.retries IS NULL OR e.retries > 0) = {}", with_retries_left)
    where.when(lock_expires_after, "e.lock_expires_at > {}")
    where.when(lock_expires_before, "e.lock_expires_at < {}")
    where.when(node_id, "e.node_id = {}")
    where.when(list(node_ids) if node_ids else None, "e.node_id = ANY({})")
    where.when(execution_id, "e.token_id = {}")
    where.when(instance_id, "e.instance_id = {}")
    where.when(list(instance_ids) if instance_ids else None, "e.instance_id = ANY({})")
    where.when(definition_id, "p.definition_id = {}")
    if suspended is not None:
        where.add("(p.state = 'Suspended') = {}", suspended)
    where.when(min_priority, "e.priority >= {}")
    where.when(max_priority, "e.priority <= {}")
    if count:
        return _count(conn, _EXTERNAL_FROM, where)
    statement = (
        _EXTERNAL_COLUMNS
        + _EXTERNAL_FROM
        + where.clause()
        + _order(page, EXTERNAL_TASK_SORT, "e.created_at, e.id")
        + _limit(where, page)
    )
    return fetch_all(conn, ExternalTaskRow, statement, where.params)


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


def _incident_filters(
    where: _Where,
    *,
    incident_id: UUID | None,
    incident_type: str | None,
    message: str | None,
    message_like: str | None,
    definition_id: str | None,
    definition_keys: list[str] | None,
    instance_id: UUID | None,
    execution_id: UUID | None,
    node_id: str | None,
    configuration: UUID | None,
) -> None:
    """Camunda's filters of incidents, runtime and historic, over `incident i` joined to its
    `process_instance p` (None: not filtered; `configuration` is the incident's job or external
    task)."""
    where.when(incident_id, "i.id = {}")
    where.when(incident_type, "i.type = {}")
    where.when(message, "i.message = {}")
    where.when(_like(message_like), "i.message LIKE {} " + LIKE_ESCAPE)
    where.when(definition_id, "i.definition_id = {}")
    where.when(definition_keys, "p.definition_key = ANY({})")
    where.when(instance_id, "i.instance_id = {}")
    where.when(execution_id, "i.token_id = {}")
    where.when(node_id, "i.node_id = {}")
    where.when(configuration, "(i.job_id = {} OR i.external_task_id = {})")


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
    where = _Where()
    where.fixed("i.state = 'Open'")
    _incident_filters(
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
        return _count(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT i.id, i.type, i.instance_id, i.definition_id, i.token_id, i.node_id, "
            "i.job_id, i.external_task_id, i.message, i.details, i.state, i.created_at, "
            "i.resolved_at "
        )
        + source
        + where.clause()
        + _order(page, INCIDENT_SORT, "i.created_at, i.id")
        + _limit(where, page)
    )
    return fetch_all(conn, IncidentInfo, statement, where.params)


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
    where = _Where()
    where.when(job_id, "j.id = {}")
    where.when(list(job_ids) if job_ids else None, "j.id = ANY({})")
    where.when(instance_id, "j.instance_id = {}")
    where.when(list(instance_ids) if instance_ids else None, "j.instance_id = ANY({})")
    # A process-level event subprocess's timer belongs to the instance's own execution.
    where.when(execution_id, "COALESCE(j.token_id, j.instance_id) = {}")
    where.when(definition_id, "j.definition_id = {}")
    where.when(definition_key, "d.key = {}")
    where.when(node_id, "j.node_id = {}")
    if with_retries_left is not None:
        where.add("(j.retries > 0) = {}", with_retries_left)
    if executable:
        where.add("j.retries > 0 AND j.due_at <= {}", now)
    if timers:
        where.fixed("j.kind IN ('timer', 'timer-start')")
    if messages:
        where.fixed("j.kind IN ('async', 'async-after')")
    if with_exception:
        where.fixed("j.error_message IS NOT NULL")
    if suspended is not None:
        where.add("(coalesce(p.state, '') = 'Suspended') = {}", suspended)
    where.when(due_before, "j.due_at < {}")
    where.when(due_after, "j.due_at > {}")
    source = sql.SQL(
        "FROM job j LEFT JOIN process_definition d ON d.id = j.definition_id "
        "LEFT JOIN process_instance p ON p.id = j.instance_id"
    )
    if count:
        return _count(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT j.id, j.kind, j.instance_id, j.token_id, j.node_id, j.definition_id, "
            "j.due_at, j.lock_owner, j.lock_expires_at, j.retries, j.timer_text, "
            "j.repetitions_left, j.error_message, j.created_at, d.key AS definition_key, "
            "p.state AS instance_state "
        )
        + source
        + where.clause()
        # By id, as Camunda's default: job ids are time-ordered and the primary key walks them.
        + _order(page, JOB_SORT, "j.id")
        + _limit(where, page)
    )
    return fetch_all(conn, JobRow, statement, where.params)


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
    where = _Where()
    where.when(subscription_id, "s.id = {}")
    where.when(event_name, "s.name = {}")
    where.when(event_type, "s.kind = {}")
    where.when(execution_id, "coalesce(s.token_id, s.instance_id) = {}")
    where.when(instance_id, "s.instance_id = {}")
    where.when(node_id, "s.node_id = {}")
    source = sql.SQL("FROM event_subscription s")
    if count:
        return _count(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT s.id, s.kind, s.name, s.instance_id, "
            "coalesce(s.token_id, s.instance_id) AS execution_id, s.node_id, s.created_at "
        )
        + source
        + where.clause()
        + _order(page, EVENT_SUBSCRIPTION_SORT, "s.created_at, s.id")
        + _limit(where, page)
    )
    return fetch_all(conn, EventSubscriptionRow, statement, where.params)


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
