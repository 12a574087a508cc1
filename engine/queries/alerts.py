"""Reads of stuck-instance alerts (engine/commands/alerts.py): the thresholds, the instances past
one now, and their counts per definition key and kind.

An alert is an open visit (kind waiting) or an open incident (kind incident) at a threshold's
node, of an instance of its key, that began before `now` minus the threshold: read as of `now`,
so it shows as soon as the time passes, and goes when the token moves on or the incident is
resolved. Each threshold is one range of ix_history_open_node (node, since) or
ix_incident_open_since (definition, node, since) up to its cut; a visit's instance is read by its
primary key for the definition key and the reader's grants.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.identity.permissions import READ, ResourceType
from engine.queries import Connection, fetch_all, query
from engine.sql import covers
from engine.sql.filters import Cover, Covers, Where, state_literal
from engine.states import AlertKind, IncidentState, VisitState

_OPEN_VISIT = state_literal(VisitState.ACTIVE)
_OPEN_INCIDENT = state_literal(IncidentState.OPEN)

# Thresholds are read under READ on their definition key; they belong to no tenant.
_THRESHOLDS = Covers((Cover(READ, ResourceType.PROCESS_DEFINITION, "t.definition_key"),), None)


@dataclass(frozen=True)
class ThresholdRow:
    id: UUID
    definition_key: str
    node_id: str
    kind: str
    duration: str
    seconds: int
    source: str
    updated_at: datetime


@query
def thresholds(conn: Connection, definition_key: str | None = None) -> list[ThresholdRow]:
    where = Where()
    where.equals("t.definition_key", definition_key)
    where.authorized(_THRESHOLDS)
    statement = (
        sql.SQL(
            "SELECT t.id, t.definition_key, t.node_id, t.kind, t.duration, t.seconds, t.source, "
            "t.updated_at FROM alert_threshold t"
        )
        + where.sql()
        + sql.SQL(" ORDER BY t.definition_key, t.node_id, t.kind")
    )
    return fetch_all(conn, ThresholdRow, statement, where.params())


@dataclass(frozen=True)
class AlertRow:
    threshold_id: UUID
    kind: str
    definition_key: str
    node_id: str
    node_name: str | None
    seconds: int
    instance_id: UUID
    business_key: str | None
    since: datetime
    # How long past the threshold, in seconds, as of the read's `now`.
    over_seconds: int


# One lateral read per threshold: its oldest `limit` subjects past the cut, so that the page's
# `limit` oldest crossings overall are among them.
_WAITING: LiteralString = (
    "SELECT t.id, t.kind, t.definition_key, t.node_id, a.node_name, t.seconds, a.instance_id, "
    "a.business_key, a.since FROM alert_threshold t CROSS JOIN LATERAL ("
    "SELECT h.instance_id, h.node_name, p.business_key, h.started_at AS since FROM history h "
    "JOIN process_instance p ON p.id = h.instance_id "
    "WHERE h.state = " + _OPEN_VISIT + " AND h.node_id = t.node_id "
    "AND h.started_at < {now} - make_interval(secs => t.seconds) "
    "AND p.definition_key = t.definition_key AND {visible} "
    "ORDER BY h.started_at LIMIT {limit}) a WHERE t.kind = 'waiting' AND {outer}"
)
_INCIDENT: LiteralString = (
    "SELECT t.id, t.kind, t.definition_key, t.node_id, NULL::text, t.seconds, a.instance_id, "
    "a.business_key, a.since FROM alert_threshold t CROSS JOIN LATERAL ("
    "SELECT i.instance_id, p.business_key, i.created_at AS since FROM incident i "
    "JOIN process_instance p ON p.id = i.instance_id "
    "WHERE i.state = " + _OPEN_INCIDENT + " AND i.node_id = t.node_id "
    "AND i.definition_id IN (SELECT d.id FROM process_definition d WHERE d.key = t.definition_key) "
    "AND i.created_at < {now} - make_interval(secs => t.seconds) AND {visible} "
    "ORDER BY i.created_at LIMIT {limit}) a WHERE t.kind = 'incident' AND {outer}"
)


def _visible() -> tuple[Where, sql.Composable]:
    """A statement's one Where (its placeholders) and the reader's narrowing of instances `p`."""
    where = Where()
    where.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    return where, where.conditions()


def _of_key(where: Where, definition_key: str | None) -> sql.Composable:
    if definition_key is None:
        return sql.SQL("TRUE")
    return sql.SQL("t.definition_key = {}").format(where.bind(definition_key))


@query
def open_alerts(
    conn: Connection,
    now: datetime,
    definition_key: str | None = None,
    kind: AlertKind | None = None,
    limit: int = 200,
) -> list[AlertRow]:
    """The instances past a threshold as of `now`, longest over first, at most `limit`."""
    where, visible = _visible()
    at, most, outer = where.bind(now), where.bind(limit), _of_key(where, definition_key)
    parts = [
        sql.SQL(shape).format(now=at, visible=visible, limit=most, outer=outer)
        for shape, what in ((_WAITING, AlertKind.WAITING), (_INCIDENT, AlertKind.INCIDENT))
        if kind is None or kind is what
    ]
    statement = (
        sql.SQL("SELECT * FROM (")
        + sql.SQL(" UNION ALL ").join(parts)
        + sql.SQL(") found ORDER BY since + make_interval(secs => seconds), instance_id LIMIT ")
        + most
    )
    rows = conn.execute(statement, where.params()).fetchall()
    return [
        AlertRow(
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            int(row[5]),
            row[6],
            row[7],
            row[8],
            int((now - row[8]).total_seconds()) - int(row[5]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class AlertCount:
    definition_key: str
    kind: str
    alerts: int


# A threshold's count: its subjects `s` (open visits or incidents) at its node past its cut, of
# its key, that the reader may see. An incident's definition names its key. An open visit's node
# names it too, unless another key's definition has a node of that id (`node_shared`): then the
# visit's instance tells them apart. The reader's grants and tenants are asked of the threshold's
# key and the subject's instance id (its tenant only when the reader's tenants are narrowed), so
# each count is one range of ix_history_open_node or ix_incident_open_since, read from the index
# alone.
_COUNT_WAITING: LiteralString = (
    "CASE WHEN t.node_shared THEN (SELECT count(*) FROM history s "
    "JOIN process_instance p ON p.id = s.instance_id "
    "WHERE s.state = " + _OPEN_VISIT + " AND s.node_id = t.node_id "
    "AND s.started_at < {now} - make_interval(secs => t.seconds) "
    "AND p.definition_key = t.definition_key AND {visible}) "
    "ELSE (SELECT count(*) FROM history s "
    "WHERE s.state = " + _OPEN_VISIT + " AND s.node_id = t.node_id "
    "AND s.started_at < {now} - make_interval(secs => t.seconds) AND {visible}) END"
)
_COUNT_INCIDENT: LiteralString = (
    "(SELECT count(*) FROM incident s WHERE s.state = " + _OPEN_INCIDENT + " "
    "AND s.node_id = t.node_id "
    "AND s.definition_id IN (SELECT d.id FROM process_definition d WHERE d.key = t.definition_key) "
    "AND s.created_at < {now} - make_interval(secs => t.seconds) AND {visible})"
)


@query
def counts(conn: Connection, now: datetime, definition_key: str | None = None) -> list[AlertCount]:
    """How many instances are past a threshold as of `now`, per definition key and kind (only
    those with any): one count per threshold."""
    where = Where()
    where.authorized(
        covers.instance(
            "t.definition_key", "s.instance_id", tenant=covers.tenant_of("s.instance_id")
        )
    )
    visible = where.conditions()
    at, outer = where.bind(now), _of_key(where, definition_key)
    # Materialized: each threshold's count runs once, not once per use of the sum.
    statement = sql.SQL(
        "WITH c AS MATERIALIZED (SELECT t.definition_key, t.kind, CASE t.kind WHEN 'waiting' "
        "THEN " + _COUNT_WAITING + " ELSE " + _COUNT_INCIDENT + " END AS alerts "
        "FROM alert_threshold t WHERE {outer}) SELECT definition_key, kind, sum(alerts) FROM c "
        "GROUP BY definition_key, kind HAVING sum(alerts) > 0 ORDER BY 1, 2"
    ).format(now=at, visible=visible, outer=outer)
    return [
        AlertCount(row[0], row[1], int(row[2]))
        for row in conn.execute(statement, where.params()).fetchall()
    ]


def total(found: list[AlertCount]) -> int:
    return sum(count.alerts for count in found)
