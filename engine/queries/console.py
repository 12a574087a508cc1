"""Read models of the operations console: summaries, per-node statistics, joins, workers.

Plain committed reads, no locks. Every statement is bounded: by an index, by a LIMIT, or by a
window over the newest outbox rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, fetch_dicts, query, retrying
from engine.queries import summaries as summary_reads
from engine.sql import covers
from engine.sql.filters import Where, state_literal
from engine.sql.filters import count as count_rows
from engine.states import IncidentState, JobKind, SubscriptionKind, TaskState
from engine.store.columns import select_list
from engine.store.incidents import IncidentInfo

# Open tasks and incidents as their partial indexes name them (see engine/sql/filters.py).
_OPEN_TASK = state_literal(TaskState.OPEN)
_OPEN_INCIDENT = state_literal(IncidentState.OPEN)
# Outbox rows, which carry their instance's id and definition key (their tenant is the
# instance's).
_OF_OUTBOX = covers.instance(
    "definition_key", "instance_id", tenant=covers.tenant_of("instance_id")
)
# External tasks, which carry their instance's id, definition key and tenant.
_OF_EXTERNAL_TASK = covers.instance("definition_key", "instance_id", tenant="tenant_id")
# A job (alias j) with its definition (alias jd, left-joined by `definition_id`; a principal
# whose reads are not narrowed references no column of it, so PostgreSQL leaves the join out).
_JOB_READABLE = covers.instance("jd.key", "j.instance_id", tenant="j.tenant_id")

# How many of the newest outbox events the "last hour" activity counts look at.
ACTIVITY_WINDOW = 50_000


@dataclass(frozen=True)
class JoinState:
    """Tokens that arrived at a join gateway and wait for the other branches."""

    gateway_id: str
    scope_key: str
    arrived: list[UUID]
    flows: list[str]


@query
def join_states(conn: Connection, instance_id: UUID) -> list[JoinState]:
    rows = fetch_dicts(
        conn,
        "SELECT gateway_id, scope_key, arrivals FROM join_state WHERE instance_id = %s "
        "ORDER BY gateway_id, scope_key",
        (instance_id,),
    )
    return [
        JoinState(
            gateway_id=row["gateway_id"],
            scope_key=row["scope_key"],
            arrived=[UUID(a["token"]) for a in row["arrivals"]],
            flows=[a.get("flow", "") for a in row["arrivals"]],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class EventWait:
    """One event a token listens for: a message or signal subscription, or a timer job. A
    process-level event subprocess's start event listens for no token (`token_id` None)."""

    token_id: UUID | None
    node_id: str
    kind: str  # "message", "signal" or "timer"
    name: str | None
    due_at: datetime | None


@query
def event_waits(conn: Connection, instance_id: UUID) -> list[EventWait]:
    rows = fetch_dicts(
        conn,
        "SELECT token_id, node_id, kind, name, NULL::timestamptz AS due_at "
        "FROM event_subscription WHERE instance_id = %(instance)s AND kind <> %(compensate)s "
        "UNION ALL SELECT token_id, node_id, 'timer', NULL, due_at FROM job "
        "WHERE instance_id = %(instance)s AND kind = %(timer)s "
        "ORDER BY node_id",
        {
            "instance": instance_id,
            "timer": JobKind.TIMER.value,
            "compensate": SubscriptionKind.COMPENSATE.value,
        },
    )
    return [EventWait(**row) for row in rows]


@dataclass(frozen=True)
class Activity:
    """The console's overview numbers."""

    states: dict[str, int]
    open_incidents: int
    events_last_hour: dict[str, int]
    jobs_due: int
    jobs_locked: int
    jobs_failing: int
    jobs_without_retries: int
    external_open: int
    external_locked: int
    workers: list[tuple[str, int]]
    # Started, completed and incidents over the last hour and the last day.
    trends: summary_reads.Trends
    # Instances whose failed jobs or external tasks have retries left (engine/store/retrying.py).
    retrying: int = 0


@query
def activity(conn: Connection, now: datetime) -> Activity:
    """The overview's numbers: counts from the summary rows (engine/db/summaries.py), the last
    hour's events from a window over the newest outbox rows, and the open work of now."""
    states = summary_reads.state_counts(conn)
    open_incidents = summary_reads.open_incident_count(conn)
    trend = summary_reads.trends(conn, now)
    recent = Where()
    recent.add("created_at >= {} - interval '1 hour'", now)
    recent.authorized(_OF_OUTBOX)
    events = {
        event: count
        for event, count in conn.execute(
            sql.SQL("SELECT event, count(*) FROM (")
            + sql.SQL(
                "SELECT event, created_at, instance_id, definition_key FROM outbox_event "
                "ORDER BY row_seq DESC LIMIT "
            )
            + recent.bind(ACTIVITY_WINDOW)
            + sql.SQL(") recent")
            + recent.sql()
            + sql.SQL(" GROUP BY event"),
            recent.params(),
        ).fetchall()
    }
    readable = Where()
    readable.authorized(_JOB_READABLE)
    (jobs,) = fetch_dicts(
        conn,
        sql.SQL("SELECT count(*) FILTER (WHERE j.retries > 0 AND j.due_at <= ")
        + readable.bind(now)
        + sql.SQL(" AND (j.lock_expires_at IS NULL OR j.lock_expires_at < ")
        + readable.bind(now)
        + sql.SQL(")) AS jobs_due, count(*) FILTER (WHERE j.lock_expires_at >= ")
        + readable.bind(now)
        + sql.SQL(
            ") AS jobs_locked, "
            "count(*) FILTER (WHERE j.retries > 0 AND j.error_message IS NOT NULL) "
            "AS jobs_failing, "
            "count(*) FILTER (WHERE j.retries = 0) AS jobs_without_retries FROM job j "
            "LEFT JOIN process_definition jd ON jd.id = j.definition_id"
        )
        + readable.sql(),
        readable.params(),
    )
    open_tasks = Where()
    open_tasks.fixed("state = " + _OPEN_TASK)
    open_tasks.authorized(_OF_EXTERNAL_TASK)
    (external,) = fetch_dicts(
        conn,
        sql.SQL("SELECT count(*) AS external_open, count(*) FILTER (WHERE lock_expires_at > ")
        + open_tasks.bind(now)
        + sql.SQL(") AS external_locked FROM external_task")
        + open_tasks.sql(),
        open_tasks.params(),
    )
    open_tasks.fixed("worker_id IS NOT NULL")
    open_tasks.above("lock_expires_at", now)
    workers = conn.execute(
        sql.SQL("SELECT worker_id, count(*) FROM external_task")
        + open_tasks.sql()
        + sql.SQL(" GROUP BY worker_id ORDER BY worker_id"),
        open_tasks.params(),
    ).fetchall()
    return Activity(
        states=states,
        open_incidents=open_incidents,
        events_last_hour=events,
        workers=[(w, n) for w, n in workers],
        trends=trend,
        retrying=retrying.count(conn),
        **jobs,
        **external,
    )


@dataclass(frozen=True)
class DefinitionSummary:
    key: str
    name: str | None
    latest_id: str
    versions: list[int]
    states: dict[str, int]
    open_incidents: int


@query
def definition_summaries(conn: Connection) -> list[DefinitionSummary]:
    where = Where()
    where.authorized(covers.definition("key", tenant="tenant_id"))
    definitions = fetch_dicts(
        conn,
        sql.SQL(
            "SELECT key, array_agg(version ORDER BY version) AS versions, "
            "(array_agg(id ORDER BY version DESC))[1] AS latest_id, "
            "(array_agg(name ORDER BY version DESC))[1] AS name "
            "FROM process_definition"
        )
        + where.sql()
        + sql.SQL(" GROUP BY key ORDER BY key"),
        where.params(),
    )
    states, incidents = summary_reads.key_counts(conn)
    return [
        DefinitionSummary(
            key=row["key"],
            name=row["name"],
            latest_id=row["latest_id"],
            versions=list(row["versions"]),
            states=states.get(row["key"], {}),
            open_incidents=incidents.get(row["key"], 0),
        )
        for row in definitions
    ]


@query
def definition_keys(conn: Connection) -> list[str]:
    where = Where()
    where.authorized(covers.definition("key", tenant="tenant_id"))
    statement = (
        sql.SQL("SELECT DISTINCT key FROM process_definition")
        + where.sql()
        + sql.SQL(" ORDER BY key")
    )
    return [row[0] for row in conn.execute(statement, where.params())]


@query
def version_counts(conn: Connection, key: str) -> dict[str, dict[str, int]]:
    """Instances per state of each version (definition id) of `key`."""
    found: dict[str, dict[str, int]] = {}
    for (definition_id, state), count in summary_reads.key_instance_counts(conn, key).items():
        found.setdefault(definition_id, {})[state] = count
    return found


@dataclass(frozen=True)
class NodeStats:
    """One node of a definition: where tokens are now, and what its visits took."""

    node_id: str
    active_tokens: int = 0
    open_incidents: int = 0
    visits: int = 0
    completed_visits: int = 0
    average_seconds: float | None = None


@query
def definition_node_stats(conn: Connection, definition_id: str) -> list[NodeStats]:
    """Every node of `definition_id` with live tokens, open incidents or visits, from the
    summary rows: the average is the ended visits' total duration over their number."""
    return [
        NodeStats(
            node_id=node_id,
            active_tokens=counts.active_tokens,
            open_incidents=counts.open_incidents,
            visits=counts.visits,
            completed_visits=counts.completed_visits,
            average_seconds=(
                float(counts.total_seconds) / counts.completed_visits
                if counts.completed_visits
                else None
            ),
        )
        for node_id, counts in sorted(summary_reads.node_counts(conn, definition_id).items())
    ]


@query
def open_incident_counts(conn: Connection, instance_ids: list[UUID]) -> dict[UUID, int]:
    return {
        instance_id: count
        for instance_id, count in conn.execute(
            "SELECT instance_id, count(*) FROM incident "
            "WHERE instance_id = ANY(%s) AND state = %s GROUP BY instance_id",
            (instance_ids, IncidentState.OPEN),
        ).fetchall()
    }


@query
def definition_versions(conn: Connection, ids: list[str]) -> dict[str, int]:
    return {
        definition_id: version
        for definition_id, version in conn.execute(
            "SELECT id, version FROM process_definition WHERE id = ANY(%s)", (ids,)
        ).fetchall()
    }


@dataclass(frozen=True)
class IncidentRow(IncidentInfo):
    """An incident with its instance's definition key and business key."""

    definition_key: str
    business_key: str | None


_INCIDENT_COLUMNS = select_list(IncidentRow, [("i", "incident"), ("p", "process_instance")])


def _open_incidents_where(
    definition_key: str | None,
    incident_type: str | None,
    node_id: str | None,
    text: str | None,
    after: tuple[datetime, UUID] | None = None,
    message: str | None = None,
) -> Where:
    where = Where()
    where.state("i.state", IncidentState.OPEN)
    where.equals("p.definition_key", definition_key)
    where.equals("i.type", incident_type)
    where.equals("i.node_id", node_id)
    where.when(text, "strpos(lower(i.message), lower({})) > 0")
    where.equals("i.message", message)
    where.keyset("(i.created_at, i.id)", after, descending=False)
    where.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    return where


@query
def open_incidents(
    conn: Connection,
    *,
    definition_key: str | None = None,
    incident_type: str | None = None,
    node_id: str | None = None,
    text: str | None = None,
    message: str | None = None,
    limit: int = 500,
    after: tuple[datetime, UUID] | None = None,
) -> list[IncidentRow]:
    """Open incidents matching the filters, oldest first; with `after` (created_at, id), only
    those that come after it (the batches of an export)."""
    where = _open_incidents_where(definition_key, incident_type, node_id, text, after, message)
    statement = (
        sql.SQL(
            f"SELECT {_INCIDENT_COLUMNS} "
            "FROM incident i JOIN process_instance p ON p.id = i.instance_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY i.created_at, i.id")
        + where.limit(limit)
    )
    return fetch_all(conn, IncidentRow, statement, where.params())


@query
def count_open_incidents(
    conn: Connection,
    *,
    definition_key: str | None = None,
    incident_type: str | None = None,
    node_id: str | None = None,
    text: str | None = None,
) -> int:
    """How many open incidents match the filters (the caller may read), by one COUNT."""
    where = _open_incidents_where(definition_key, incident_type, node_id, text)
    source = sql.SQL(" FROM incident i JOIN process_instance p ON p.id = i.instance_id")
    return count_rows(conn, source, where)


@query
def incident_types(conn: Connection) -> list[str]:
    return [
        row[0]
        # One probe of the partial index on open incidents' types per type there is, instead
        # of reading every open incident.
        for row in conn.execute(
            "WITH RECURSIVE found AS ("
            "  SELECT min(type) AS type FROM incident WHERE state = " + _OPEN_INCIDENT + " "
            "  UNION ALL SELECT (SELECT min(i.type) FROM incident i "
            "    WHERE i.state = " + _OPEN_INCIDENT + " AND i.type > found.type) "
            "  FROM found WHERE found.type IS NOT NULL"
            ") SELECT type FROM found WHERE type IS NOT NULL ORDER BY type"
        ).fetchall()
    ]


@dataclass(frozen=True)
class TopicSummary:
    topic: str
    open: int
    available: int
    locked: int
    expired: int
    without_retries: int


@query
def topics(conn: Connection, now: datetime) -> list[TopicSummary]:
    where = Where()
    at = where.bind(now)
    where.fixed("state = " + _OPEN_TASK)
    where.authorized(_OF_EXTERNAL_TASK)
    statement = (
        sql.SQL(
            "SELECT topic, count(*) AS open, "
            "count(*) FILTER (WHERE (lock_expires_at IS NULL OR lock_expires_at <= {now}) "
            "   AND (retries IS NULL OR retries > 0)) AS available, "
            "count(*) FILTER (WHERE worker_id IS NOT NULL AND lock_expires_at > {now}) AS locked,"
            " count(*) FILTER (WHERE worker_id IS NOT NULL AND lock_expires_at <= {now} "
            "   AND (retries IS NULL OR retries > 0)) AS expired, "
            "count(*) FILTER (WHERE retries = 0) AS without_retries FROM external_task"
        ).format(now=at)
        + where.sql()
        + sql.SQL(" GROUP BY topic ORDER BY topic")
    )
    return fetch_all(conn, TopicSummary, statement, where.params())


@dataclass(frozen=True)
class LeaseRow:
    id: UUID
    instance_id: UUID
    topic: str
    node_id: str
    worker_id: str
    lock_expires_at: datetime
    retries: int | None
    business_key: str | None


@query
def leases(conn: Connection, now: datetime, *, expired: bool, limit: int = 200) -> list[LeaseRow]:
    """Locked external tasks (`expired` False) or those whose lock ran out before a report. A
    task whose worker reported a failure without retries keeps its lock until it runs out (the
    worker may still complete it); after that it is an incident, not an expired lease."""
    where = Where()
    where.state("e.state", TaskState.OPEN)
    where.fixed("e.worker_id IS NOT NULL")
    if expired:
        where.at_most("e.lock_expires_at", now)
        where.fixed("(e.retries IS NULL OR e.retries > 0)")
    else:
        where.above("e.lock_expires_at", now)
    where.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    statement = (
        sql.SQL(
            "SELECT e.id, e.instance_id, e.topic, e.node_id, e.worker_id, e.lock_expires_at, "
            "e.retries, p.business_key FROM external_task e "
            "JOIN process_instance p ON p.id = e.instance_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY e.lock_expires_at, e.id")
        + where.limit(limit)
    )
    return fetch_all(conn, LeaseRow, statement, where.params())


# How many instances of one family the inspector shows at most.
FAMILY_LIMIT = 500


@dataclass(frozen=True)
class FamilyMember:
    """One instance of a family of called instances, with the call activity that called it (its
    caller's node id and name) and its open incidents."""

    id: UUID
    definition_id: str
    definition_key: str
    version: int
    business_key: str | None
    state: str
    started_at: datetime
    ended_at: datetime | None
    super_instance_id: UUID | None
    super_token_id: UUID | None
    call_node_id: str | None
    call_node_name: str | None
    open_incidents: int


@query
def family_members(
    conn: Connection, instance_id: UUID, limit: int = FAMILY_LIMIT
) -> list[FamilyMember]:
    """The family of `instance_id`: its root and every instance called below it, at most
    `limit` (empty when the instance does not exist): the instance itself and its caller
    whatever the limit, then the others in the order they started; only those the principal
    may read."""
    where = Where()
    where.fixed(
        "(p.id = me.root OR (p.super_instance_id IS NOT NULL AND p.root_instance_id = me.root))"
    )
    where.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    params = {**where.params(), "id": instance_id, "limit": limit, "open": IncidentState.OPEN}
    return fetch_all(
        conn,
        FamilyMember,
        sql.SQL(
            "WITH me AS (SELECT root_instance_id AS root, super_instance_id AS caller "
            "  FROM process_instance WHERE id = %(id)s) "
            "SELECT p.id, p.definition_id, p.definition_key, d.version, p.business_key, p.state, "
            "p.started_at, p.ended_at, p.super_instance_id, p.super_token_id, "
            "c.node_id AS call_node_id, c.node_name AS call_node_name, "
            "(SELECT count(*) FROM incident i WHERE i.instance_id = p.id AND i.state = %(open)s) "
            "  AS open_incidents "
            "FROM me, process_instance p JOIN process_definition d ON d.id = p.definition_id "
            "LEFT JOIN LATERAL (SELECT h.node_id, h.node_name FROM history h "
            "  WHERE h.instance_id = p.super_instance_id AND h.called_instance_id = p.id "
            "  ORDER BY h.started_at LIMIT 1) c ON p.super_instance_id IS NOT NULL"
        )
        + where.sql()
        + sql.SQL(
            " ORDER BY (p.id IN (%(id)s, me.caller)) IS TRUE DESC, p.started_at, p.id "
            "LIMIT %(limit)s"
        ),
        params,
    )
