"""The SQL of stuck-instance alerts' writes: thresholds set, declared and removed, and the
raising tick's crossings with their `alert.raised` outbox rows (engine/commands/alerts.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg

from engine.db.ids import new_id
from engine.sql.filters import state_literal
from engine.states import AlertKind, AlertSource, IncidentState, OutboxEvent, VisitState

# The raising tick looks this far behind its cursor too: a visit or incident written by a
# transaction that committed after the cursor passed its start is still found (the crossings'
# unique key keeps anything from being raised twice).
LATE_COMMIT = timedelta(minutes=5)
NEVER = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Threshold:
    id: UUID
    definition_key: str
    node_id: str
    kind: AlertKind
    duration: str
    seconds: int
    source: AlertSource
    raised_until: datetime


_COLUMNS = "id, definition_key, node_id, kind, duration, seconds, source, raised_until"


def _threshold(row: Any) -> Threshold:
    return Threshold(
        row[0], row[1], row[2], AlertKind(row[3]), row[4], int(row[5]), AlertSource(row[6]), row[7]
    )


def find(conn: psycopg.Connection[Any], threshold_id: UUID) -> Threshold | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM alert_threshold WHERE id = %s FOR UPDATE", (threshold_id,)
    ).fetchone()
    return _threshold(row) if row else None


def find_by_node(
    conn: psycopg.Connection[Any], key: str, node_id: str, kind: AlertKind
) -> Threshold | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM alert_threshold "
        "WHERE definition_key = %s AND node_id = %s AND kind = %s FOR UPDATE",
        (key, node_id, kind.value),
    ).fetchone()
    return _threshold(row) if row else None


def put(
    conn: psycopg.Connection[Any],
    key: str,
    node_id: str,
    kind: AlertKind,
    duration: str,
    seconds: int,
    source: AlertSource,
    now: datetime,
    *,
    keep_console: bool = False,
) -> UUID | None:
    """Set the threshold of (key, node, kind), replacing the one there is; with `keep_console`
    (a model's declaration) one an operator set stays as it is. Its id, None when kept. A
    changed length looks at every open visit or incident again (its cursor goes back)."""
    keep = " WHERE alert_threshold.source <> 'console'" if keep_console else ""
    row = conn.execute(
        "INSERT INTO alert_threshold (id, definition_key, node_id, kind, duration, seconds, "
        "source, node_shared, raised_until, created_at, updated_at) "
        "VALUES (%(id)s, %(key)s, %(node)s, %(kind)s, %(duration)s, %(seconds)s, %(source)s, "
        + _SHARED
        + ", %(never)s, %(now)s, %(now)s) "
        "ON CONFLICT (definition_key, node_id, kind) DO UPDATE SET duration = EXCLUDED.duration, "
        "seconds = EXCLUDED.seconds, source = EXCLUDED.source, updated_at = EXCLUDED.updated_at, "
        "node_shared = EXCLUDED.node_shared, "
        "raised_until = CASE WHEN alert_threshold.seconds = EXCLUDED.seconds "
        "THEN alert_threshold.raised_until ELSE EXCLUDED.raised_until END" + keep + " RETURNING id",
        {
            "id": new_id(),
            "key": key,
            "node": node_id,
            "kind": kind.value,
            "duration": duration,
            "seconds": seconds,
            "source": source.value,
            "never": NEVER,
            "now": now,
        },
    ).fetchone()
    return row[0] if row else None


# Whether the file of a deployed definition of another key names the node's id (either quote):
# conservative, so a node id that also names another element there counts as shared too.
_SHARED = (
    "EXISTS (SELECT 1 FROM process_definition d WHERE d.key <> %(key)s "
    "AND (strpos(d.source_xml, 'id=\"' || %(node)s || '\"') > 0 "
    "OR strpos(d.source_xml, 'id=''' || %(node)s || '''') > 0))"
)


def mark_shared(conn: psycopg.Connection[Any], key: str, node_ids: list[str]) -> None:
    """A definition of `key` was deployed with `node_ids`: other keys' thresholds at those ids
    are shared from now on."""
    conn.execute(
        "UPDATE alert_threshold SET node_shared = true "
        "WHERE definition_key <> %s AND node_id = ANY(%s) AND NOT node_shared",
        (key, node_ids),
    )


def remove_model_declared(
    conn: psycopg.Connection[Any], key: str, keep: list[tuple[str, AlertKind]]
) -> int:
    """Remove the model-declared thresholds of `key` that are not in `keep` (node, kind): what
    the latest version no longer declares."""
    kept = [f"{node}\x1f{kind.value}" for node, kind in keep]
    cur = conn.execute(
        "DELETE FROM alert_threshold WHERE definition_key = %s AND source = 'model' "
        "AND NOT (node_id || chr(31) || kind = ANY(%s)) RETURNING id",
        (key, kept),
    )
    return len(cur.fetchall())


def delete(conn: psycopg.Connection[Any], threshold_id: UUID) -> bool:
    cur = conn.execute("DELETE FROM alert_threshold WHERE id = %s RETURNING id", (threshold_id,))
    return cur.fetchone() is not None


# -- raising ------------------------------------------------------------------------------------


def lock_all(conn: psycopg.Connection[Any]) -> list[Threshold]:
    """Every threshold, locked; one another tick holds is skipped (it raises that one)."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM alert_threshold ORDER BY id FOR UPDATE SKIP LOCKED"
    ).fetchall()
    return [_threshold(row) for row in rows]


_OPEN_VISIT = state_literal(VisitState.ACTIVE)
_OPEN_INCIDENT = state_literal(IncidentState.OPEN)

# The open visits (or incidents) at the threshold's node of an instance of its key that began
# in [from, cut) and have no crossing of this threshold yet, oldest first: one range of
# ix_history_open_node (ix_incident_open_since) and one probe of the crossings' key each.
_CROSSED_VISITS = (
    "SELECT h.id, h.instance_id, h.token_id, h.started_at FROM history h "
    "JOIN process_instance p ON p.id = h.instance_id "
    "WHERE h.state = " + _OPEN_VISIT + " AND h.node_id = %(node)s "
    "AND h.started_at >= %(from)s AND h.started_at < %(cut)s AND p.definition_key = %(key)s "
    "AND NOT EXISTS (SELECT 1 FROM alert_crossing c "
    "WHERE c.threshold_id = %(threshold)s AND c.subject_id = h.id) "
    "ORDER BY h.started_at LIMIT %(limit)s"
)
_CROSSED_INCIDENTS = (
    "SELECT i.id, i.instance_id, i.token_id, i.created_at FROM incident i "
    "WHERE i.state = " + _OPEN_INCIDENT + " AND i.node_id = %(node)s "
    "AND i.definition_id IN (SELECT d.id FROM process_definition d WHERE d.key = %(key)s) "
    "AND i.created_at >= %(from)s AND i.created_at < %(cut)s "
    "AND NOT EXISTS (SELECT 1 FROM alert_crossing c "
    "WHERE c.threshold_id = %(threshold)s AND c.subject_id = i.id) "
    "ORDER BY i.created_at LIMIT %(limit)s"
)
# The earliest open visit (incident) at the node that has not crossed yet: its start plus the
# threshold is the next crossing.
_NEXT_VISIT = (
    "SELECT min(h.started_at) FROM history h JOIN process_instance p ON p.id = h.instance_id "
    "WHERE h.state = " + _OPEN_VISIT + " AND h.node_id = %(node)s AND h.started_at >= %(cut)s "
    "AND p.definition_key = %(key)s"
)
_NEXT_INCIDENT = (
    "SELECT min(i.created_at) FROM incident i WHERE i.state = " + _OPEN_INCIDENT + " "
    "AND i.node_id = %(node)s AND i.created_at >= %(cut)s "
    "AND i.definition_id IN (SELECT d.id FROM process_definition d WHERE d.key = %(key)s)"
)


@dataclass(frozen=True)
class Crossed:
    subject_id: UUID
    instance_id: UUID
    token_id: UUID | None
    since: datetime


def crossed(
    conn: psycopg.Connection[Any], threshold: Threshold, cut: datetime, limit: int
) -> list[Crossed]:
    statement = _CROSSED_VISITS if threshold.kind is AlertKind.WAITING else _CROSSED_INCIDENTS
    rows = conn.execute(
        statement,
        {
            "node": threshold.node_id,
            "key": threshold.definition_key,
            "from": threshold.raised_until - LATE_COMMIT,
            "cut": cut,
            "threshold": threshold.id,
            "limit": limit,
        },
    ).fetchall()
    return [Crossed(*row) for row in rows]


def next_start(
    conn: psycopg.Connection[Any], threshold: Threshold, cut: datetime
) -> datetime | None:
    statement = _NEXT_VISIT if threshold.kind is AlertKind.WAITING else _NEXT_INCIDENT
    row = conn.execute(
        statement, {"node": threshold.node_id, "key": threshold.definition_key, "cut": cut}
    ).fetchone()
    return row[0] if row else None


def record(
    conn: psycopg.Connection[Any], threshold: Threshold, found: list[Crossed], now: datetime
) -> int:
    """The crossings of `found` not recorded yet, each with its `alert.raised` outbox row (the
    crossing's id as its history id); how many were new."""
    if not found:
        return 0
    step = timedelta(seconds=threshold.seconds)
    rows = [
        (new_id(), threshold.id, c.subject_id, c.instance_id, c.token_id, c.since, c.since + step)
        for c in found
    ]
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
    cur = conn.execute(
        "WITH given (id, threshold_id, subject_id, instance_id, token_id, since, crossed_at) AS "
        f"(VALUES {values}), "
        "inserted AS (INSERT INTO alert_crossing (id, threshold_id, subject_id, instance_id, "
        "definition_key, node_id, kind, since, crossed_at, raised_at) "
        "SELECT g.id::uuid, g.threshold_id::uuid, g.subject_id::uuid, g.instance_id::uuid, "
        "%s, %s, %s, g.since::timestamptz, g.crossed_at::timestamptz, %s FROM given g "
        "ON CONFLICT (threshold_id, subject_id) DO NOTHING RETURNING id, subject_id) "
        "INSERT INTO outbox (instance_id, events, definition_key) "
        "SELECT g.instance_id::uuid, jsonb_build_array(jsonb_strip_nulls(jsonb_build_object("
        "'event', %s::text, 'token_id', g.token_id::uuid, 'node_id', %s::text, 'history_id', "
        "n.id))), %s "
        "FROM inserted n JOIN given g ON g.subject_id::uuid = n.subject_id RETURNING seq",
        [
            *(value for row in rows for value in row),
            threshold.definition_key,
            threshold.node_id,
            threshold.kind.value,
            now,
            OutboxEvent.ALERT_RAISED.value,
            threshold.node_id,
            threshold.definition_key,
        ],
    )
    return len(cur.fetchall())


def advance(conn: psycopg.Connection[Any], threshold_id: UUID, until: datetime) -> None:
    conn.execute(
        "UPDATE alert_threshold SET raised_until = greatest(raised_until, %s) WHERE id = %s",
        (until, threshold_id),
    )
