"""The console's filtered lists (instances, incidents, user tasks): the filters each page reads
from its URL, a page of each, and every row of each in batches, for the exports. A page and its
export run the same statement, so an export holds exactly the rows its list shows, in the same
order; the pages of incidents and tasks continue by keyset after a cursor, as the instances'."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from psycopg import sql

from engine.db.paging import Key, Page, keyset
from engine.queries import Connection, batched, fetch_all, query
from engine.queries.console import (
    IncidentRow,
    definition_versions,
    open_incident_counts,
    open_incidents,
)
from engine.queries.retrying import counts as retrying_counts
from engine.sql import covers
from engine.sql.filters import Where
from engine.states import IncidentState, ListPage, TaskState
from engine.store import instances as instance_store
from engine.store import tasks as task_store
from engine.store.instance_reads import InstanceInfo
from engine.store.instances import InstanceFilter, InstanceSort, Sort
from engine.store.tasks import TaskRow

__all__ = [
    "FILTERS",
    "IncidentFilter",
    "IncidentGroup",
    "IncidentRow",
    "InstanceRow",
    "InstanceSort",
    "Sort",
    "TaskFilter",
    "TaskRow",
    "PAGE_SIZE",
    "incident_groups",
    "incident_page",
    "incidents",
    "instance_infos",
    "instance_rows",
    "instances",
    "task_page",
    "tasks",
]

# How many incidents or tasks a console page shows.
PAGE_SIZE = 100

# The query parameters each list page reads as its filters, in the order its form shows them.
FILTERS: dict[ListPage, tuple[str, ...]] = {
    ListPage.INSTANCES: (
        "definition",
        "version",
        "state",
        "business_key",
        "incident",
        "retrying",
        "started_from",
        "started_to",
        "var_name",
        "var_value",
        "root",
        "called_by",
        "sort",
        "order",
    ),
    ListPage.INCIDENTS: ("definition", "type", "node", "text", "message", "group"),
    ListPage.TASKS: ("show", "definition"),
}


# -- instances ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceRow:
    """An instance as the list shows it: with its definition's version, its open incidents and
    its failed jobs and external tasks that have retries left (`retrying`)."""

    info: InstanceInfo
    version: int | None
    incidents: int
    retrying: int = 0


@query
def instance_rows(conn: Connection, infos: list[InstanceInfo]) -> list[InstanceRow]:
    """`infos` with their versions, open incident counts and retrying counts (three statements
    for all of them)."""
    ids = [i.id for i in infos]
    versions = definition_versions(conn, sorted({i.definition_id for i in infos}))
    counts, retrying = open_incident_counts(conn, ids), retrying_counts(conn, ids)
    return [
        InstanceRow(i, versions.get(i.definition_id), counts.get(i.id, 0), retrying.get(i.id, 0))
        for i in infos
    ]


@batched
def instances(
    conn: Connection,
    after: InstanceRow | None,
    limit: int,
    where: InstanceFilter,
    sort: Sort | None = None,
) -> list[InstanceRow]:
    """Every instance matching `where` in the order `sort` (None: newest first), as the list's
    pages show them."""
    order = sort or Sort()
    key = order.key(after.info) if after else None
    return instance_rows(conn, instance_store.rows_after(conn, where, key, limit, order))


@batched
def instance_infos(
    conn: Connection, after: InstanceInfo | None, limit: int, where: InstanceFilter
) -> list[InstanceInfo]:
    """Every instance matching `where`, newest first, as it is (without what the list adds)."""
    key = (after.started_at, after.id) if after else None
    return instance_store.rows_after(conn, where, key, limit)


# -- incidents ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IncidentFilter:
    """The incident list's filters; None means "any". `text`: the message contains it (in any
    case); `message`: the message is exactly it (a group's incidents)."""

    definition_key: str | None = None
    incident_type: str | None = None
    node_id: str | None = None
    text: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class IncidentGroup:
    """The open incidents of one node of a definition with one message: how many, since when,
    and one definition version of them (to name the node)."""

    definition_key: str
    node_id: str
    message: str
    count: int
    oldest: datetime
    definition_id: str


# The most groups the incident page shows (the largest first).
GROUP_LIMIT = 200


def _incidents(
    conn: Connection, where: IncidentFilter, limit: int, after: Key | None
) -> list[IncidentRow]:
    return open_incidents(
        conn,
        definition_key=where.definition_key,
        incident_type=where.incident_type,
        node_id=where.node_id,
        text=where.text,
        message=where.message,
        limit=limit,
        after=after,
    )


@query
def incident_groups(
    conn: Connection, where: IncidentFilter, limit: int = GROUP_LIMIT
) -> list[IncidentGroup]:
    """The open incidents matching `where` grouped by definition key, node and message, the
    largest group first (then the oldest): at most `limit` groups. One pass over the open
    incidents (their partial index), narrowed as the list is."""
    found = Where()
    found.state("i.state", IncidentState.OPEN)
    found.equals("p.definition_key", where.definition_key)
    found.equals("i.type", where.incident_type)
    found.equals("i.node_id", where.node_id)
    found.when(where.text, "strpos(lower(i.message), lower({})) > 0")
    found.equals("i.message", where.message)
    found.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    statement = (
        sql.SQL(
            "SELECT p.definition_key, i.node_id, i.message, count(*) AS count, "
            "min(i.created_at) AS oldest, max(i.definition_id) AS definition_id "
            "FROM incident i JOIN process_instance p ON p.id = i.instance_id"
        )
        + found.sql()
        + sql.SQL(
            " GROUP BY p.definition_key, i.node_id, i.message "
            "ORDER BY count(*) DESC, min(i.created_at), p.definition_key, i.node_id, i.message"
        )
        + found.limit(limit)
    )
    return fetch_all(conn, IncidentGroup, statement, found.params())


@query
def incident_page(
    conn: Connection, where: IncidentFilter, after: str | None, limit: int = PAGE_SIZE
) -> Page[IncidentRow]:
    """The open incidents matching `where`, oldest first, after the cursor `after`: a page of
    the list (a cursor that is not one is a BadRequest naming `after`)."""
    return keyset(
        lambda n, key: _incidents(conn, where, n, key),
        lambda i: (i.created_at, i.id),
        limit=limit,
        after=after,
    )


@batched
def incidents(
    conn: Connection, after: IncidentRow | None, limit: int, where: IncidentFilter
) -> list[IncidentRow]:
    """Every open incident matching `where`, oldest first, as the list shows them."""
    return _incidents(conn, where, limit, (after.created_at, after.id) if after else None)


# -- user tasks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskFilter:
    """The task inbox's filters: open tasks of a definition (None: any), assigned to `assignee`
    (None: anyone), or only those nobody holds (`unassigned`); those `candidate` is a candidate
    for, directly or through their groups (the same condition as /engine-rest's
    `candidateUser`); those `held_or_candidate` holds or is such a candidate for unassigned."""

    definition_key: str | None = None
    assignee: str | None = None
    unassigned: bool = False
    candidate: str | None = None
    held_or_candidate: str | None = None


def _tasks(conn: Connection, where: TaskFilter, limit: int, after: Key | None) -> list[TaskRow]:
    return task_store.query(
        conn,
        state=TaskState.OPEN,
        definition_key=where.definition_key,
        assignee=where.assignee,
        unassigned=where.unassigned,
        candidate_of=where.candidate,
        held_or_candidate_of=where.held_or_candidate,
        limit=limit,
        after=after,
    )


@query
def task_page(
    conn: Connection, where: TaskFilter, after: str | None, limit: int = PAGE_SIZE
) -> Page[TaskRow]:
    """The open tasks matching `where`, oldest first, after the cursor `after`: a page of the
    inbox (a cursor that is not one is a BadRequest naming `after`)."""
    return keyset(
        lambda n, key: _tasks(conn, where, n, key),
        lambda t: (t.created_at, t.id),
        limit=limit,
        after=after,
    )


@batched
def tasks(conn: Connection, after: TaskRow | None, limit: int, where: TaskFilter) -> list[TaskRow]:
    """Every open task matching `where`, oldest first, as the inbox shows them."""
    return _tasks(conn, where, limit, (after.created_at, after.id) if after else None)
