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
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

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
    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = value
        return f"%({name})s"

    def add(self, clause: str, *values: Any) -> None:
        """`clause` with `{}` placeholders, one per value."""
        self.clauses.append(clause.format(*(self.param(v) for v in values)))

    def when(self, value: Any, clause: str) -> None:
        if value is not None:
            self.add(clause, *([value] * clause.count("{}")))

    def sql(self) -> str:
        return " WHERE " + " AND ".join(self.clauses) if self.clauses else ""


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


def _order(page: Page, columns: dict[str, str], default: str) -> str:
    parts = [f"{columns[key]} {'DESC' if desc else 'ASC'}" for key, desc in page.sort]
    return " ORDER BY " + ", ".join([*parts, default])


def _limit(where: _Where, page: Page) -> str:
    text = f" OFFSET {where.param(max(page.first, 0))}"
    if page.max is not None:
        text += f" LIMIT {where.param(max(page.max, 0))}"
    return text


def _variable_clauses(where: _Where, alias: str, filters: Sequence[VariableFilter]) -> None:
    for f in filters:
        value = where.param(f.name)
        match f.op:
            case "eq" | "neq":
                any_of = where.param([Jsonb(v) for v in f.values])
                test = f"v.value = ANY({any_of}::jsonb[])"
                if f.op == "neq":
                    test = f"NOT ({test})"
            case "like":
                test = "jsonb_typeof(v.value) = 'string' AND v.value #>> '{}' " + (
                    f"LIKE {where.param(like_pattern(f.text))} {LIKE_ESCAPE}"
                )
            case _:
                symbol = {"gt": ">", "gteq": ">=", "lt": "<", "lteq": "<="}[f.op]
                if f.number is not None:
                    test = (
                        f"jsonb_typeof(v.value) = 'number' AND (v.value)::numeric {symbol} "
                        f"{where.param(f.number)}::numeric"
                    )
                else:
                    test = (
                        f"jsonb_typeof(v.value) = 'string' AND v.value #>> '{{}}' {symbol} "
                        f"{where.param(f.text)}"
                    )
        where.clauses.append(
            f"EXISTS (SELECT 1 FROM variable v WHERE v.instance_id = {alias}.id "
            f"AND v.scope_key = '' AND v.name = {value} AND {test})"
        )


# -- process instances ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceRow:
    id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str


INSTANCE_SORT = {
    "instanceId": "p.id",
    "definitionKey": "p.definition_key",
    "definitionId": "p.definition_id",
    "businessKey": "p.business_key",
}


def process_instances(
    conn: psycopg.Connection[Any],
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
    count: bool = False,
) -> list[InstanceRow] | int:
    """Running instances (Camunda's runtime: ended ones are history only)."""
    where = _Where()
    where.add("p.state = ANY({})", list(RUNNING_STATES))
    where.when(list(ids) if ids is not None else None, "p.id = ANY({})")
    where.when(business_key, "p.business_key = {}")
    where.when(_like(business_key_like), "p.business_key LIKE {} " + LIKE_ESCAPE)
    where.when(definition_id, "p.definition_id = {}")
    where.when(definition_key, "p.definition_key = {}")
    where.when(list(definition_keys) if definition_keys else None, "p.definition_key = ANY({})")
    if suspended is not None:
        where.add("(p.state = 'Suspended') = {}", suspended)
    if with_incident:
        where.clauses.append(
            "EXISTS (SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = 'Open')"
        )
    _variable_clauses(where, "p", variables)
    if count:
        return _count(conn, f"SELECT count(*) FROM process_instance p{where.sql()}", where)
    sql = (
        "SELECT p.id, p.definition_id, p.definition_key, p.business_key, p.state "
        f"FROM process_instance p{where.sql()}"
        + _order(page, INSTANCE_SORT, "p.started_at, p.id")
        + _limit(where, page)
    )
    return [InstanceRow(*row) for row in conn.execute(sql, where.params).fetchall()]


def _count(conn: psycopg.Connection[Any], sql: str, where: _Where) -> int:
    row = conn.execute(sql, where.params).fetchone()
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


def historic_instance(
    conn: psycopg.Connection[Any], instance_id: UUID
) -> HistoricInstanceRow | None:
    row = conn.execute(
        "SELECT p.id, p.definition_id, p.definition_key, d.name, d.version, p.business_key, "
        "p.state, p.started_at, p.ended_at, "
        "(SELECT h.node_id FROM history h WHERE h.instance_id = p.id "
        " ORDER BY h.started_at, h.id LIMIT 1) "
        "FROM process_instance p JOIN process_definition d ON d.id = p.definition_id "
        "WHERE p.id = %s",
        (instance_id,),
    ).fetchone()
    return HistoricInstanceRow(*row) if row else None


# -- activity instances ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveToken:
    id: UUID
    node_id: str
    state: str
    scope_id: UUID | None
    visit_id: UUID | None


def live_tokens(conn: psycopg.Connection[Any], instance_id: UUID) -> list[LiveToken]:
    rows = conn.execute(
        "SELECT id, node_id, state, scope_id, visit_id FROM token "
        "WHERE instance_id = %s AND state NOT IN ('Completed', 'Terminated') "
        "ORDER BY created_at, id",
        (instance_id,),
    ).fetchall()
    return [LiveToken(*row) for row in rows]


@dataclass(frozen=True)
class ActivityRow:
    id: UUID
    instance_id: UUID
    definition_id: str
    definition_key: str
    token_id: UUID
    scope_token_id: UUID | None
    node_id: str
    node_name: str | None
    node_type: str
    state: str
    started_at: datetime
    ended_at: datetime | None
    task_id: UUID | None
    assignee: str | None


ACTIVITY_SORT = {
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


def activity_instances(
    conn: psycopg.Connection[Any],
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
) -> list[ActivityRow] | int:
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
        where.clauses.append("h.ended_at IS NOT NULL" if finished else "h.ended_at IS NULL")
    if canceled is not None:
        where.add("(h.state = 'Terminated') = {}", canceled)
    where.when(started_before, "h.started_at <= {}")
    where.when(started_after, "h.started_at >= {}")
    where.when(finished_before, "h.ended_at <= {}")
    where.when(finished_after, "h.ended_at >= {}")
    source = (
        "FROM history h JOIN process_instance p ON p.id = h.instance_id "
        "LEFT JOIN token t ON t.id = h.token_id "
        "LEFT JOIN LATERAL (SELECT u.id, u.assignee FROM user_task u "
        "  WHERE u.token_id = h.token_id AND u.node_id = h.node_id "
        "  AND u.created_at >= h.started_at ORDER BY u.created_at LIMIT 1) ut "
        "  ON h.node_type = 'userTask'"
    )
    if count:
        return _count(conn, f"SELECT count(*) {source}{where.sql()}", where)
    sql = (
        "SELECT h.id, h.instance_id, p.definition_id, p.definition_key, h.token_id, t.scope_id, "
        "h.node_id, h.node_name, h.node_type, h.state, h.started_at, h.ended_at, ut.id, "
        f"ut.assignee {source}{where.sql()}"
        + _order(page, ACTIVITY_SORT, "h.started_at, h.id")
        + _limit(where, page)
    )
    return [ActivityRow(*row) for row in conn.execute(sql, where.params).fetchall()]


@dataclass(frozen=True)
class ScopeVisit:
    id: UUID
    token_id: UUID
    node_id: str
    started_at: datetime


def visits_of_tokens(conn: psycopg.Connection[Any], token_ids: Sequence[UUID]) -> list[ScopeVisit]:
    """Every visit of the given tokens: a child activity's parent is its scope token's visit to
    the enclosing subprocess."""
    if not token_ids:
        return []
    rows = conn.execute(
        "SELECT id, token_id, node_id, started_at FROM history WHERE token_id = ANY(%s) "
        "ORDER BY started_at, id",
        (list(token_ids),),
    ).fetchall()
    return [ScopeVisit(*row) for row in rows]


# -- user tasks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    id: UUID
    instance_id: UUID
    token_id: UUID
    node_id: str
    name: str | None
    created_at: datetime
    assignee: str | None
    due_at: datetime | None
    priority: int
    definition_id: str
    definition_key: str
    instance_state: str


TASK_SORT = {
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


def user_tasks(
    conn: psycopg.Connection[Any],
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
    where.clauses.append("t.state = 'Open'")
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
        where.clauses.append("t.assignee IS NOT NULL" if assigned else "t.assignee IS NULL")
    where.when(candidate_user, "{} = ANY(t.candidate_users)")
    where.when(candidate_group, "{} = ANY(t.candidate_groups)")
    where.when(list(candidate_groups) if candidate_groups else None, "t.candidate_groups && {}")
    if suspended is not None:
        where.add("(p.state = 'Suspended') = {}", suspended)
    where.when(priority, "t.priority = {}")
    where.when(min_priority, "t.priority >= {}")
    where.when(max_priority, "t.priority <= {}")
    where.when(execution_id, "t.token_id = {}")
    source = "FROM user_task t JOIN process_instance p ON p.id = t.instance_id"
    if count:
        return _count(conn, f"SELECT count(*) {source}{where.sql()}", where)
    sql = (
        "SELECT t.id, t.instance_id, t.token_id, t.node_id, t.name, t.created_at, t.assignee, "
        f"t.due_at, t.priority, p.definition_id, p.definition_key, p.state {source}{where.sql()}"
        + _order(page, TASK_SORT, "t.created_at, t.id")
        + _limit(where, page)
    )
    return [TaskRow(*row) for row in conn.execute(sql, where.params).fetchall()]


# -- external tasks -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExternalTaskRow:
    id: UUID
    instance_id: UUID
    token_id: UUID
    node_id: str
    topic: str
    priority: int
    worker_id: str | None
    lock_expires_at: datetime | None
    retries: int | None
    error_message: str | None
    error_details: str | None
    created_at: datetime
    definition_id: str
    definition_key: str
    version_tag: str | None
    business_key: str | None
    instance_state: str
    activity_instance_id: UUID | None


EXTERNAL_TASK_SORT = {
    "id": "e.id",
    "lockExpirationTime": "e.lock_expires_at",
    "processInstanceId": "e.instance_id",
    "processDefinitionId": "p.definition_id",
    "processDefinitionKey": "p.definition_key",
    "taskPriority": "e.priority",
    "createTime": "e.created_at",
}

_EXTERNAL_COLUMNS = (
    "e.id, e.instance_id, e.token_id, e.node_id, e.topic, e.priority, e.worker_id, "
    "e.lock_expires_at, e.retries, e.error_message, e.error_details, e.created_at, "
    "p.definition_id, p.definition_key, d.version_tag, p.business_key, p.state, t.visit_id"
)
_EXTERNAL_FROM = (
    "FROM external_task e JOIN process_instance p ON p.id = e.instance_id "
    "JOIN process_definition d ON d.id = p.definition_id "
    "LEFT JOIN token t ON t.id = e.token_id"
)


def external_tasks(
    conn: psycopg.Connection[Any],
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
    where.clauses.append("e.state = 'Open'")
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
        return _count(conn, f"SELECT count(*) {_EXTERNAL_FROM}{where.sql()}", where)
    sql = (
        f"SELECT {_EXTERNAL_COLUMNS} {_EXTERNAL_FROM}{where.sql()}"
        + _order(page, EXTERNAL_TASK_SORT, "e.created_at, e.id")
        + _limit(where, page)
    )
    return [ExternalTaskRow(*row) for row in conn.execute(sql, where.params).fetchall()]


@dataclass(frozen=True)
class LockedTaskDetails:
    token_id: UUID
    activity_instance_id: UUID | None
    version_tag: str | None


def locked_task_details(
    conn: psycopg.Connection[Any], task_ids: Sequence[UUID]
) -> dict[UUID, LockedTaskDetails]:
    """What a fetchAndLock answer carries beyond the engine's fetch result."""
    rows = conn.execute(
        "SELECT e.id, e.token_id, t.visit_id, d.version_tag FROM external_task e "
        "JOIN process_instance p ON p.id = e.instance_id "
        "JOIN process_definition d ON d.id = p.definition_id "
        "LEFT JOIN token t ON t.id = e.token_id WHERE e.id = ANY(%s)",
        (list(task_ids),),
    ).fetchall()
    return {row[0]: LockedTaskDetails(row[1], row[2], row[3]) for row in rows}


# -- incidents ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IncidentRow:
    id: UUID
    type: str
    instance_id: UUID
    definition_id: str
    token_id: UUID | None
    node_id: str
    job_id: UUID | None
    external_task_id: UUID | None
    message: str
    created_at: datetime


INCIDENT_SORT = {
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


def incidents(
    conn: psycopg.Connection[Any],
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
) -> list[IncidentRow] | int:
    """Open incidents."""
    where = _Where()
    where.clauses.append("i.state = 'Open'")
    where.when(incident_id, "i.id = {}")
    where.when(incident_type, "i.type = {}")
    where.when(message, "i.message = {}")
    where.when(_like(message_like), "i.message LIKE {} " + LIKE_ESCAPE)
    where.when(definition_id, "i.definition_id = {}")
    where.when(list(definition_keys) if definition_keys else None, "p.definition_key = ANY({})")
    where.when(instance_id, "i.instance_id = {}")
    where.when(execution_id, "i.token_id = {}")
    where.when(node_id, "i.node_id = {}")
    where.when(configuration, "(i.job_id = {} OR i.external_task_id = {})")
    source = "FROM incident i JOIN process_instance p ON p.id = i.instance_id"
    if count:
        return _count(conn, f"SELECT count(*) {source}{where.sql()}", where)
    sql = (
        "SELECT i.id, i.type, i.instance_id, i.definition_id, i.token_id, i.node_id, i.job_id, "
        f"i.external_task_id, i.message, i.created_at {source}{where.sql()}"
        + _order(page, INCIDENT_SORT, "i.created_at, i.id")
        + _limit(where, page)
    )
    return [IncidentRow(*row) for row in conn.execute(sql, where.params).fetchall()]


# -- jobs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRow:
    id: UUID
    kind: str
    instance_id: UUID | None
    token_id: UUID | None
    node_id: str
    definition_id: str
    definition_key: str
    due_at: datetime
    retries: int
    error_message: str | None
    created_at: datetime
    instance_state: str | None


JOB_SORT = {
    "jobId": "j.id",
    "executionId": "j.token_id",
    "processInstanceId": "j.instance_id",
    "processDefinitionId": "j.definition_id",
    "processDefinitionKey": "d.key",
    "jobRetries": "j.retries",
    "jobDueDate": "j.due_at",
    "jobPriority": "j.id",
}


def jobs(
    conn: psycopg.Connection[Any],
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
    where.when(execution_id, "j.token_id = {}")
    where.when(definition_id, "j.definition_id = {}")
    where.when(definition_key, "d.key = {}")
    where.when(node_id, "j.node_id = {}")
    if with_retries_left is not None:
        where.add("(j.retries > 0) = {}", with_retries_left)
    if executable:
        where.add("j.retries > 0 AND j.due_at <= {}", now)
    if timers:
        where.clauses.append("j.kind IN ('timer', 'timer-start')")
    if messages:
        where.clauses.append("j.kind = 'async'")
    if with_exception:
        where.clauses.append("j.error_message IS NOT NULL")
    if suspended is not None:
        where.add("(coalesce(p.state, '') = 'Suspended') = {}", suspended)
    where.when(due_before, "j.due_at < {}")
    where.when(due_after, "j.due_at > {}")
    source = (
        "FROM job j JOIN process_definition d ON d.id = j.definition_id "
        "LEFT JOIN process_instance p ON p.id = j.instance_id"
    )
    if count:
        return _count(conn, f"SELECT count(*) {source}{where.sql()}", where)
    sql = (
        "SELECT j.id, j.kind, j.instance_id, j.token_id, j.node_id, j.definition_id, d.key, "
        f"j.due_at, j.retries, j.error_message, j.created_at, p.state {source}{where.sql()}"
        + _order(page, JOB_SORT, "j.due_at, j.id")
        + _limit(where, page)
    )
    return [JobRow(*row) for row in conn.execute(sql, where.params).fetchall()]


# -- deployments ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeploymentRow:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime


def deployment(conn: psycopg.Connection[Any], deployment_id: UUID) -> DeploymentRow | None:
    row = conn.execute(
        "SELECT id, name, source, created_at FROM deployment WHERE id = %s", (deployment_id,)
    ).fetchone()
    return DeploymentRow(*row) if row else None
