"""Read models of the operations console: summaries, per-node statistics, joins, workers.

Plain committed reads, no locks. Every statement is bounded: by an index, by a LIMIT, or by a
window over the newest outbox rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

# How many of the newest outbox rows the "last hour" activity counts look at.
ACTIVITY_WINDOW = 50_000


@dataclass(frozen=True)
class JoinState:
    """Tokens that arrived at a join gateway and wait for the other branches."""

    gateway_id: str
    scope_key: str
    arrived: list[UUID]
    flows: list[str]


def join_states(conn: psycopg.Connection[Any], instance_id: UUID) -> list[JoinState]:
    rows = conn.execute(
        "SELECT gateway_id, scope_key, arrivals FROM join_state WHERE instance_id = %s "
        "ORDER BY gateway_id, scope_key",
        (instance_id,),
    ).fetchall()
    return [
        JoinState(
            gateway,
            scope,
            [UUID(a["token"]) for a in arrivals],
            [a.get("flow", "") for a in arrivals],
        )
        for gateway, scope, arrivals in rows
    ]


@dataclass(frozen=True)
class Activity:
    """The console's overview numbers."""

    states: dict[str, int]
    open_incidents: int
    started_last_hour: int
    events_last_hour: dict[str, int]
    jobs_due: int
    jobs_locked: int
    jobs_failing: int
    jobs_without_retries: int
    external_open: int
    external_locked: int
    workers: list[tuple[str, int]]
    # Twelve five-minute buckets, oldest first: (instances started, instances completed).
    buckets: list[tuple[int, int]]


def activity(conn: psycopg.Connection[Any], now: datetime) -> Activity:
    states = {
        state: count
        for state, count in conn.execute(
            "SELECT state, count(*) FROM process_instance GROUP BY state"
        ).fetchall()
    }
    incidents = conn.execute("SELECT count(*) FROM incident WHERE state = 'Open'").fetchone()
    started = conn.execute(
        "SELECT count(*) FROM process_instance WHERE started_at >= %s - interval '1 hour'",
        (now,),
    ).fetchone()
    events = {
        event: count
        for event, count in conn.execute(
            "SELECT event, count(*) FROM ("
            "  SELECT event, created_at FROM outbox ORDER BY seq DESC LIMIT %s"
            ") recent WHERE created_at >= %s - interval '1 hour' GROUP BY event",
            (ACTIVITY_WINDOW, now),
        ).fetchall()
    }
    jobs = conn.execute(
        "SELECT count(*) FILTER (WHERE retries > 0 AND due_at <= %(now)s "
        "   AND (lock_expires_at IS NULL OR lock_expires_at < %(now)s)), "
        "count(*) FILTER (WHERE lock_expires_at >= %(now)s), "
        "count(*) FILTER (WHERE retries > 0 AND error_message IS NOT NULL), "
        "count(*) FILTER (WHERE retries = 0) FROM job",
        {"now": now},
    ).fetchone()
    external = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE lock_expires_at > %s) "
        "FROM external_task WHERE state = 'Open'",
        (now,),
    ).fetchone()
    workers = conn.execute(
        "SELECT worker_id, count(*) FROM external_task "
        "WHERE state = 'Open' AND worker_id IS NOT NULL AND lock_expires_at > %s "
        "GROUP BY worker_id ORDER BY worker_id",
        (now,),
    ).fetchall()
    buckets = [[0, 0] for _ in range(12)]
    for bucket, count in conn.execute(
        "SELECT floor(extract(epoch FROM %(now)s - started_at) / 300)::int, count(*) "
        "FROM process_instance WHERE started_at >= %(now)s - interval '1 hour' "
        "AND started_at <= %(now)s GROUP BY 1",
        {"now": now},
    ).fetchall():
        buckets[11 - min(bucket, 11)][0] += count
    for bucket, count in conn.execute(
        "SELECT floor(extract(epoch FROM %(now)s - created_at) / 300)::int, count(*) FROM ("
        "  SELECT event, created_at FROM outbox ORDER BY seq DESC LIMIT %(window)s"
        ") recent WHERE event = 'instance.completed' "
        "AND created_at >= %(now)s - interval '1 hour' AND created_at <= %(now)s GROUP BY 1",
        {"now": now, "window": ACTIVITY_WINDOW},
    ).fetchall():
        buckets[11 - min(bucket, 11)][1] += count
    assert incidents and started and jobs and external
    return Activity(
        states=states,
        open_incidents=incidents[0],
        started_last_hour=started[0],
        events_last_hour=events,
        jobs_due=jobs[0],
        jobs_locked=jobs[1],
        jobs_failing=jobs[2],
        jobs_without_retries=jobs[3],
        external_open=external[0],
        external_locked=external[1],
        workers=[(w, n) for w, n in workers],
        buckets=[(a, b) for a, b in buckets],
    )


@dataclass(frozen=True)
class DefinitionSummary:
    key: str
    name: str | None
    latest_id: str
    versions: list[int]
    states: dict[str, int]
    open_incidents: int


def definition_summaries(conn: psycopg.Connection[Any]) -> list[DefinitionSummary]:
    definitions = conn.execute(
        "SELECT key, array_agg(version ORDER BY version), "
        "(array_agg(id ORDER BY version DESC))[1], (array_agg(name ORDER BY version DESC))[1] "
        "FROM process_definition GROUP BY key ORDER BY key"
    ).fetchall()
    states: dict[str, dict[str, int]] = {}
    for key, state, count in conn.execute(
        "SELECT definition_key, state, count(*) FROM process_instance "
        "GROUP BY definition_key, state"
    ).fetchall():
        states.setdefault(key, {})[state] = count
    incidents = {
        key: count
        for key, count in conn.execute(
            "SELECT p.definition_key, count(*) FROM incident i "
            "JOIN process_instance p ON p.id = i.instance_id WHERE i.state = 'Open' "
            "GROUP BY p.definition_key"
        ).fetchall()
    }
    return [
        DefinitionSummary(
            key, name, latest, list(versions), states.get(key, {}), incidents.get(key, 0)
        )
        for key, versions, latest, name in definitions
    ]


def definition_keys(conn: psycopg.Connection[Any]) -> list[str]:
    return [
        row[0] for row in conn.execute("SELECT DISTINCT key FROM process_definition ORDER BY key")
    ]


def version_counts(conn: psycopg.Connection[Any], key: str) -> dict[str, dict[str, int]]:
    """Instances per state of each version (definition id) of `key`."""
    found: dict[str, dict[str, int]] = {}
    for definition_id, state, count in conn.execute(
        "SELECT definition_id, state, count(*) FROM process_instance WHERE definition_key = %s "
        "GROUP BY definition_id, state",
        (key,),
    ).fetchall():
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


def definition_node_stats(conn: psycopg.Connection[Any], definition_id: str) -> list[NodeStats]:
    stats: dict[str, dict[str, Any]] = {}
    for node_id, count in conn.execute(
        "SELECT t.node_id, count(*) FROM token t JOIN process_instance p ON p.id = t.instance_id "
        "WHERE p.definition_id = %s AND p.ended_at IS NULL "
        "AND t.state NOT IN ('Completed', 'Terminated') GROUP BY t.node_id",
        (definition_id,),
    ).fetchall():
        stats.setdefault(node_id, {})["active_tokens"] = count
    for node_id, count in conn.execute(
        "SELECT node_id, count(*) FROM incident WHERE definition_id = %s AND state = 'Open' "
        "GROUP BY node_id",
        (definition_id,),
    ).fetchall():
        stats.setdefault(node_id, {})["open_incidents"] = count
    for node_id, visits, completed, average in conn.execute(
        "SELECT h.node_id, count(*), count(h.ended_at), "
        "avg(extract(epoch FROM h.ended_at - h.started_at)) "
        "FROM history h JOIN process_instance p ON p.id = h.instance_id "
        "WHERE p.definition_id = %s GROUP BY h.node_id",
        (definition_id,),
    ).fetchall():
        entry = stats.setdefault(node_id, {})
        entry["visits"] = visits
        entry["completed_visits"] = completed
        entry["average_seconds"] = float(average) if average is not None else None
    return [NodeStats(node_id, **values) for node_id, values in sorted(stats.items())]


def open_incident_counts(
    conn: psycopg.Connection[Any], instance_ids: list[UUID]
) -> dict[UUID, int]:
    return {
        instance_id: count
        for instance_id, count in conn.execute(
            "SELECT instance_id, count(*) FROM incident "
            "WHERE instance_id = ANY(%s) AND state = 'Open' GROUP BY instance_id",
            (instance_ids,),
        ).fetchall()
    }


def definition_versions(conn: psycopg.Connection[Any], ids: list[str]) -> dict[str, int]:
    return {
        definition_id: version
        for definition_id, version in conn.execute(
            "SELECT id, version FROM process_definition WHERE id = ANY(%s)", (ids,)
        ).fetchall()
    }


@dataclass(frozen=True)
class IncidentRow:
    id: UUID
    type: str
    instance_id: UUID
    definition_id: str
    definition_key: str
    business_key: str | None
    node_id: str
    message: str
    details: str | None
    created_at: datetime
    job_id: UUID | None
    external_task_id: UUID | None


def open_incidents(
    conn: psycopg.Connection[Any],
    *,
    definition_key: str | None = None,
    incident_type: str | None = None,
    node_id: str | None = None,
    text: str | None = None,
    limit: int = 500,
) -> list[IncidentRow]:
    rows = conn.execute(
        "SELECT i.id, i.type, i.instance_id, i.definition_id, p.definition_key, p.business_key, "
        "i.node_id, i.message, i.details, i.created_at, i.job_id, i.external_task_id "
        "FROM incident i JOIN process_instance p ON p.id = i.instance_id "
        "WHERE i.state = 'Open' "
        "AND (%(key)s::text IS NULL OR p.definition_key = %(key)s) "
        "AND (%(type)s::text IS NULL OR i.type = %(type)s) "
        "AND (%(node)s::text IS NULL OR i.node_id = %(node)s) "
        "AND (%(text)s::text IS NULL OR strpos(lower(i.message), lower(%(text)s)) > 0) "
        "ORDER BY i.created_at, i.id LIMIT %(limit)s",
        {
            "key": definition_key,
            "type": incident_type,
            "node": node_id,
            "text": text,
            "limit": limit,
        },
    ).fetchall()
    return [IncidentRow(*row) for row in rows]


def incident_types(conn: psycopg.Connection[Any]) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT type FROM incident WHERE state = 'Open' ORDER BY type"
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


def topics(conn: psycopg.Connection[Any], now: datetime) -> list[TopicSummary]:
    rows = conn.execute(
        "SELECT topic, count(*), "
        "count(*) FILTER (WHERE (lock_expires_at IS NULL OR lock_expires_at <= %(now)s) "
        "   AND (retries IS NULL OR retries > 0)), "
        "count(*) FILTER (WHERE worker_id IS NOT NULL AND lock_expires_at > %(now)s), "
        "count(*) FILTER (WHERE worker_id IS NOT NULL AND lock_expires_at <= %(now)s), "
        "count(*) FILTER (WHERE retries = 0) "
        "FROM external_task WHERE state = 'Open' GROUP BY topic ORDER BY topic",
        {"now": now},
    ).fetchall()
    return [TopicSummary(*row) for row in rows]


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


def leases(
    conn: psycopg.Connection[Any], now: datetime, *, expired: bool, limit: int = 200
) -> list[LeaseRow]:
    """Locked external tasks (`expired` False) or those whose lock ran out before a report."""
    comparison = "<=" if expired else ">"
    rows = conn.execute(
        "SELECT e.id, e.instance_id, e.topic, e.node_id, e.worker_id, e.lock_expires_at, "
        "e.retries, p.business_key FROM external_task e "
        "JOIN process_instance p ON p.id = e.instance_id "
        "WHERE e.state = 'Open' AND e.worker_id IS NOT NULL "
        f"AND e.lock_expires_at {comparison} %s "
        "ORDER BY e.lock_expires_at, e.id LIMIT %s",
        (now, limit),
    ).fetchall()
    return [LeaseRow(*row) for row in rows]
