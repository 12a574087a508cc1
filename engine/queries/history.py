"""The executed path of one instance and a definition's history over a period: what the
inspector draws on an instance's diagram and the definition page's heatmap in history mode.

A visit (a `history` row) records the sequence flow it was entered by, so the path is counted
from the visits alone: a parallel or inclusive join opens one visit per arriving token (the merged
ones end at the join), which makes every arrival count once. A token parked before a node (an
asynchronous continuation) has taken its flow but not visited yet: its job carries the flow.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.sql import covers
from engine.sql.filters import Where
from engine.states import AuditEntity, AuditOperation, IncidentState, JobKind


@query
def taken_flows(conn: Connection, instance_id: UUID) -> dict[str, int]:
    """How often each sequence flow of the instance was taken (flows never taken are absent)."""
    rows = conn.execute(
        "SELECT flow_id, count(*) FROM ("
        "SELECT flow_id FROM history WHERE instance_id = %(id)s AND flow_id IS NOT NULL "
        "UNION ALL SELECT flow_id FROM job WHERE instance_id = %(id)s AND kind = %(kind)s "
        "AND flow_id IS NOT NULL) AS taken GROUP BY flow_id ORDER BY flow_id",
        {"id": instance_id, "kind": JobKind.ASYNC.value},
    ).fetchall()
    return {flow_id: count for flow_id, count in rows}


@dataclass(frozen=True)
class EndedIncident:
    """An ended incident of the instance, with how it ended: the operator command that ended it
    (Retry or Resolve, from the audit log) and who ran it, when the log tells; an incident
    resolved otherwise (its job's retries set, its token cancelled) has neither."""

    id: UUID
    type: str
    node_id: str
    message: str
    state: str
    created_at: datetime
    resolved_at: datetime | None
    operation: str | None
    user_id: str | None


@query
def ended_incidents(conn: Connection, instance_id: UUID) -> list[EndedIncident]:
    """The incidents of the instance that ended, oldest first (the open ones are the
    inspector's own rows)."""
    return fetch_all(
        conn,
        EndedIncident,
        "SELECT i.id, i.type, i.node_id, i.message, i.state, i.created_at, i.resolved_at, "
        "a.operation, a.user_id FROM incident i LEFT JOIN LATERAL (SELECT operation, user_id "
        "FROM audit_entry WHERE instance_id = i.instance_id AND entity = %(entity)s "
        "AND entity_id = i.id::text AND operation = ANY(%(operations)s) "
        "ORDER BY at DESC LIMIT 1) a ON true WHERE i.instance_id = %(id)s "
        "AND i.state <> %(open)s ORDER BY i.created_at, i.id",
        {
            "id": instance_id,
            "open": IncidentState.OPEN.value,
            "entity": AuditEntity.INCIDENT.value,
            "operations": [
                AuditOperation.RETRY_INCIDENT.value,
                AuditOperation.RESOLVE_INCIDENT.value,
            ],
        },
    )


@dataclass(frozen=True)
class NodeHistory:
    """One node of a definition over a period: the visits that started in it, the average and
    95th percentile of the durations of those that ended, and the incidents created in it."""

    node_id: str
    visits: int
    ended: int
    average_seconds: float | None
    p95_seconds: float | None
    incidents: int


# The definition's instances alive at some moment of [start, end): started before its end, and
# running (ix_process_instance_unfinished) or ended after its start
# (ix_process_instance_definition_ended).
_ALIVE = (
    "SELECT id FROM process_instance WHERE definition_id = %(definition)s "
    "AND (ended_at IS NULL OR ended_at >= %(start)s) AND started_at < %(end)s"
)


@query
def definition_history(
    conn: Connection, definition_id: str, start: datetime, end: datetime
) -> list[NodeHistory]:
    """Per node of the definition, its visits and incidents of the period [start, end): each
    instance alive in the period is read through its index on history (instance_id, started_at)
    and on incident (instance_id), bounded by the period."""
    readable = Where()
    readable.authorized(covers.history("definition_key", "id", tenant="tenant_id"))
    params = {**readable.params(), "definition": definition_id, "start": start, "end": end}
    return fetch_all(
        conn,
        NodeHistory,
        sql.SQL("WITH alive AS MATERIALIZED (" + _ALIVE + " AND ")
        + readable.conditions()
        + sql.SQL(
            "), visits AS (SELECT h.node_id, count(*) AS visits, count(h.ended_at) AS ended, "
            "avg(extract(epoch FROM h.ended_at - h.started_at))::float AS average_seconds, "
            "(percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM "
            "h.ended_at - h.started_at)))::float AS p95_seconds "
            "FROM alive a JOIN history h ON h.instance_id = a.id "
            "AND h.started_at >= %(start)s AND h.started_at < %(end)s GROUP BY h.node_id), "
            "incidents AS (SELECT i.node_id, count(*) AS incidents FROM alive a "
            "JOIN incident i ON i.instance_id = a.id "
            "AND i.created_at >= %(start)s AND i.created_at < %(end)s GROUP BY i.node_id) "
            "SELECT coalesce(v.node_id, i.node_id) AS node_id, coalesce(v.visits, 0) AS visits, "
            "coalesce(v.ended, 0) AS ended, v.average_seconds, v.p95_seconds, "
            "coalesce(i.incidents, 0) AS incidents "
            "FROM visits v FULL JOIN incidents i ON i.node_id = v.node_id ORDER BY 1"
        ),
        params,
    )
