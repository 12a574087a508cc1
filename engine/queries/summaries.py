"""Reads of the summary rows (engine/db/summaries.py says what they count): instances per
definition and state, per-node counts, activity buckets and the trends drawn from them. Each is
one statement over the base rows and the unfolded deltas (and process_definition, for keys):
exact, and never a scan of the big tables. `current` and `recount` read whole summaries, for
comparisons."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from psycopg import sql
from psycopg.abc import QueryNoTemplate

from engine.queries import Connection, query
from engine.sql import covers
from engine.sql.filters import Where
from engine.states import InstanceState
from engine.store.summaries import (
    NODE_COUNTS,
    RECOUNT_BUCKETS,
    RECOUNT_INSTANCES,
    RECOUNT_NODES,
    RECOUNT_PARAMS,
    delta_buckets,
    delta_instances,
    delta_nodes,
    delta_open_incidents,
)

# The five-minute bucket of a timestamp, as the triggers compute it.
BUCKET_SECONDS = 300

# -- the summaries as they are now: base rows plus unfolded deltas, in one statement --------------

_NODE_COUNTS = ", ".join(NODE_COUNTS)

# Each summary as it is now, as a FROM item: its base rows and its unfolded deltas. A query
# filters and sums it (PostgreSQL pushes the filters down into both arms).
LIVE_INSTANCES = (
    f"(SELECT definition_id, state, instances FROM instance_summary UNION ALL {delta_instances()})"
)
LIVE_NODES = (
    f"(SELECT definition_id, node_id, {_NODE_COUNTS} FROM node_summary UNION ALL {delta_nodes()})"
)
# The open incidents alone: what the overview counts, without reading every node's deltas.
LIVE_OPEN_INCIDENTS = (
    "(SELECT definition_id, node_id, open_incidents FROM node_summary WHERE open_incidents <> 0 "
    f"UNION ALL {delta_open_incidents()})"
)
LIVE_BUCKETS = (
    "(SELECT definition_id, bucket, started, completed, incidents FROM activity_bucket "
    f"UNION ALL {delta_buckets()})"
)


def _instances(where: Where) -> sql.Composed:
    """Instances by (definition, state) where `where` holds, rows of zeros left out."""
    return (
        sql.SQL(
            "SELECT s.definition_id, s.state, sum(instances) AS instances "
            f"FROM {LIVE_INSTANCES} s{_DEFINED}"
        )
        + where.sql()
        + sql.SQL(" GROUP BY s.definition_id, s.state HAVING sum(instances) <> 0")
    )


def _nodes(where: Where) -> sql.Composed:
    """The counts by (definition, node) where `where` holds, rows of zeros left out."""
    return (
        sql.SQL(
            "SELECT definition_id, node_id, sum(active_tokens) AS active_tokens, "
            "sum(open_incidents) AS open_incidents, sum(visits) AS visits, "
            "sum(completed_visits) AS completed_visits, sum(total_seconds) AS total_seconds, "
            "sum(canceled_visits) AS canceled_visits "
            f"FROM {LIVE_NODES} s{_DEFINED}"
        )
        + where.sql()
        + sql.SQL(
            " GROUP BY definition_id, node_id "
            "HAVING sum(active_tokens) <> 0 OR sum(open_incidents) <> 0 OR sum(visits) <> 0 "
            "OR sum(completed_visits) <> 0 OR sum(total_seconds) <> 0 "
            "OR sum(canceled_visits) <> 0"
        )
    )


BUCKETS = f"""
SELECT bucket, definition_id, sum(started) AS started, sum(completed) AS completed,
    sum(incidents) AS incidents
FROM {LIVE_BUCKETS} s
GROUP BY bucket, definition_id
HAVING sum(started) <> 0 OR sum(completed) <> 0 OR sum(incidents) <> 0
"""

# -- whole summaries, for comparisons (tests and the fuzzer) ------------------------------------


@dataclass(frozen=True)
class NodeCounts:
    active_tokens: int
    open_incidents: int
    visits: int
    completed_visits: int
    total_seconds: Decimal
    # Visits ended canceled (state Terminated).
    canceled_visits: int


@dataclass(frozen=True)
class Summaries:
    """Every summary: instances by (definition, state), node counts by (definition, node),
    (started, completed, incidents) by (bucket, definition). Rows of zeros are left out."""

    instances: dict[tuple[str, str], int]
    nodes: dict[tuple[str, str], NodeCounts]
    buckets: dict[tuple[datetime, str], tuple[int, int, int]]


def _summaries(
    conn: Connection,
    instances: QueryNoTemplate,
    nodes: QueryNoTemplate,
    buckets: QueryNoTemplate,
    params: dict[str, Any],
) -> Summaries:
    return Summaries(
        instances={(d, s): int(n) for d, s, n in conn.execute(instances, params).fetchall() if n},
        nodes={
            (d, node): NodeCounts(int(a), int(o), int(v), int(cv), Decimal(s), int(cn))
            for d, node, a, o, v, cv, s, cn in conn.execute(nodes, params).fetchall()
            if (a, o, v, cv, s, cn) != (0, 0, 0, 0, 0, 0)
        },
        buckets={
            (b, d): (int(st), int(co), int(inc))
            for b, d, st, co, inc in conn.execute(buckets, params).fetchall()
            if (st, co, inc) != (0, 0, 0)
        },
    )


def recount(conn: Connection) -> Summaries:
    """Every summary computed from the big tables (a full scan of each)."""
    return _summaries(conn, RECOUNT_INSTANCES, RECOUNT_NODES, RECOUNT_BUCKETS, RECOUNT_PARAMS)


def current(conn: Connection) -> Summaries:
    """Every summary as the summary rows and the unfolded deltas say."""
    return _summaries(conn, _instances(Where()), _nodes(Where()), BUCKETS, {})


FIVE_MINUTES = timedelta(seconds=BUCKET_SECONDS)
HOUR = timedelta(hours=1)
# The trends: twelve five-minute points (the last hour) and twenty-four hourly points (the day).
HOUR_POINTS = 12
DAY_POINTS = 24

# The definition ids of the key {}, and of any of the keys {}.
_KEY_DEFINITIONS = "definition_id IN (SELECT id FROM process_definition WHERE key = {})"
_KEYS_DEFINITIONS = "definition_id IN (SELECT id FROM process_definition WHERE key = ANY({}))"
# A summary's rows (alias s) with their definition (alias d), which a principal's reads are
# narrowed by: one hash join with the small definition table instead of a look-up per row. A
# read that narrows nothing references no column of d, and PostgreSQL leaves the join out.
_DEFINED = " LEFT JOIN process_definition d ON d.id = s.definition_id"
# The summary rows of the definitions whose instances the request's principal may read.
_READABLE = covers.instances_of("d.key", tenant="d.tenant_id")


def _readable(where: Where, history: bool = False) -> None:
    """Only the summary rows (`s`, joined with `_DEFINED`) of definitions the principal may
    read (their instances, or with `history` their history), by grant and tenant."""
    where.authorized(covers.history_of("d.key", tenant="d.tenant_id") if history else _READABLE)


def key_instance_counts(conn: Connection, key: str) -> dict[tuple[str, str], int]:
    """Instances by (definition id, state) of every version of `key`."""
    where = Where()
    where.add(_KEY_DEFINITIONS, key)
    _readable(where)
    rows = conn.execute(_instances(where), where.params()).fetchall()
    return {(d, s): int(n) for d, s, n in rows}


def key_counts(conn: Connection) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """Instances by state and open incidents, per definition key."""
    where = Where()
    where.authorized(covers.instances_of("d.key", tenant="d.tenant_id"))
    states: dict[str, dict[str, int]] = {}
    statement = (
        sql.SQL(
            f"SELECT d.key, s.state, sum(s.instances) FROM {LIVE_INSTANCES} s "
            "JOIN process_definition d ON d.id = s.definition_id"
        )
        + where.sql()
        + sql.SQL(" GROUP BY d.key, s.state HAVING sum(s.instances) <> 0")
    )
    for key, state, count in conn.execute(statement, where.params()).fetchall():
        states.setdefault(key, {})[state] = int(count)
    where.fixed("s.open_incidents <> 0")
    statement = (
        sql.SQL(
            f"SELECT d.key, sum(s.open_incidents) FROM {LIVE_OPEN_INCIDENTS} s "
            "JOIN process_definition d ON d.id = s.definition_id"
        )
        + where.sql()
        + sql.SQL(" GROUP BY d.key HAVING sum(s.open_incidents) <> 0")
    )
    incidents = {
        key: int(count) for key, count in conn.execute(statement, where.params()).fetchall()
    }
    return states, incidents


def running_counts(conn: Connection) -> dict[str, int]:
    """Running instances (in a state that is not final) per definition id."""
    where = Where()
    where.any_of("s.state", [s.value for s in InstanceState if not s.is_final])
    _readable(where)
    running: dict[str, int] = {}
    for definition_id, _, count in conn.execute(_instances(where), where.params()):
        running[definition_id] = running.get(definition_id, 0) + int(count)
    return running


@query
def state_counts(conn: Connection) -> dict[str, int]:
    """Instances by state, over every definition (the principal may read instances of)."""
    where = Where()
    _readable(where)
    statement = (
        sql.SQL(f"SELECT s.state, sum(instances) FROM {LIVE_INSTANCES} s{_DEFINED}")
        + where.sql()
        + sql.SQL(" GROUP BY s.state HAVING sum(instances) <> 0")
    )
    return {state: int(count) for state, count in conn.execute(statement, where.params())}


def open_incident_count(conn: Connection) -> int:
    """Open incidents, over every definition (the principal may read instances of)."""
    where = Where()
    where.fixed("open_incidents <> 0")
    _readable(where)
    statement = sql.SQL(
        f"SELECT coalesce(sum(open_incidents), 0) FROM {LIVE_OPEN_INCIDENTS} s{_DEFINED}"
    )
    row = conn.execute(statement + where.sql(), where.params()).fetchone()
    assert row is not None
    return int(row[0])


def node_counts(
    conn: Connection, definition_id: str, *, history: bool = False
) -> dict[str, NodeCounts]:
    """The counts of every node of `definition_id` that has any (of a definition whose
    instances the principal may read, or with `history` whose history)."""
    where = Where()
    where.equals("definition_id", definition_id)
    _readable(where, history)
    rows = conn.execute(_nodes(where), where.params()).fetchall()
    return {
        node: NodeCounts(int(a), int(o), int(v), int(cv), s, int(cn))
        for _, node, a, o, v, cv, s, cn in rows
    }


@query
def visit_count(conn: Connection, node_id: str | None, definition_id: str | None) -> int:
    """History rows (visits), of `node_id` and of `definition_id` when given."""
    where = Where()
    where.equals("node_id", node_id)
    where.equals("definition_id", definition_id)
    _readable(where)
    statement = sql.SQL(f"SELECT coalesce(sum(visits), 0) FROM {LIVE_NODES} s{_DEFINED}") + (
        where.sql()
    )
    row = conn.execute(statement, where.params()).fetchone()
    assert row is not None
    return int(row[0])


@query
def instance_count(
    conn: Connection,
    states: list[str],
    *,
    definition_id: str | None = None,
    definition_key: str | None = None,
    definition_keys: list[str] | None = None,
) -> int:
    """Instances in `states`, of `definition_id`, `definition_key` and `definition_keys` (each
    when given)."""
    where = Where()
    where.any_of("s.state", states)
    where.equals("s.definition_id", definition_id)
    where.when(definition_key, _KEY_DEFINITIONS)
    where.when(definition_keys, _KEYS_DEFINITIONS)
    _readable(where)
    statement = (
        sql.SQL(f"SELECT coalesce(sum(instances), 0) FROM {LIVE_INSTANCES} s{_DEFINED}")
        + where.sql()
    )
    row = conn.execute(statement, where.params()).fetchone()
    assert row is not None
    return int(row[0])


def _bucket_rows(conn: Connection, since: datetime, key: str | None) -> list[tuple[Any, ...]]:
    """(definition key, bucket, started, completed, incidents) of every bucket from `since`."""
    where = Where()
    where.add("s.bucket >= {}", since)
    where.when(key, _KEY_DEFINITIONS)
    where.authorized(covers.instances_of("d.key", tenant="d.tenant_id"))
    statement = (
        sql.SQL(
            "SELECT d.key, s.bucket, sum(s.started), sum(s.completed), sum(s.incidents) "
            f"FROM {LIVE_BUCKETS} s JOIN process_definition d ON d.id = s.definition_id"
        )
        + where.sql()
        + sql.SQL(" GROUP BY d.key, s.bucket")
    )
    return conn.execute(statement, where.params()).fetchall()


@dataclass(frozen=True)
class TrendPoint:
    """One interval of a trend: when it starts, and the instances started, the instances
    completed and the incidents created in it."""

    start: datetime
    started: int = 0
    completed: int = 0
    incidents: int = 0


@dataclass(frozen=True)
class Trends:
    """The last hour in five-minute points and the last day in hourly points, oldest first; the
    last point of each is the one `now` is in."""

    hour: list[TrendPoint]
    day: list[TrendPoint]

    @property
    def hour_started(self) -> int:
        return sum(p.started for p in self.hour)


def bucket_start(moment: datetime) -> datetime:
    """The start of the five-minute bucket `moment` is in (as the triggers bin)."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % BUCKET_SECONDS, UTC)


def _trends(now: datetime, rows: list[tuple[datetime, int, int, int]]) -> Trends:
    last_bucket = bucket_start(now)
    hour_first = last_bucket - FIVE_MINUTES * (HOUR_POINTS - 1)
    last_hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    day_first = last_hour - HOUR * (DAY_POINTS - 1)
    hour = [[0, 0, 0] for _ in range(HOUR_POINTS)]
    day = [[0, 0, 0] for _ in range(DAY_POINTS)]
    for bucket, started, completed, incidents in rows:
        values = (int(started), int(completed), int(incidents))
        if hour_first <= bucket <= last_bucket:
            point = hour[int((bucket - hour_first) / FIVE_MINUTES)]
            point[:] = [a + b for a, b in zip(point, values, strict=True)]
        if day_first <= bucket <= now:
            point = day[int((bucket - day_first) / HOUR)]
            point[:] = [a + b for a, b in zip(point, values, strict=True)]
    return Trends(
        hour=[TrendPoint(hour_first + FIVE_MINUTES * n, *p) for n, p in enumerate(hour)],
        day=[TrendPoint(day_first + HOUR * n, *p) for n, p in enumerate(day)],
    )


def _since(now: datetime) -> datetime:
    last_hour = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    return min(last_hour - HOUR * (DAY_POINTS - 1), bucket_start(now) - FIVE_MINUTES * HOUR_POINTS)


@query
def trends(conn: Connection, now: datetime, definition_key: str | None = None) -> Trends:
    """Started, completed and incidents over the last hour (per five minutes) and the last day
    (per hour), of every definition or of `definition_key`'s versions."""
    merged: dict[datetime, list[int]] = {}
    for _, bucket, started, completed, incidents in _bucket_rows(conn, _since(now), definition_key):
        point = merged.setdefault(bucket, [0, 0, 0])
        point[0] += int(started)
        point[1] += int(completed)
        point[2] += int(incidents)
    return _trends(now, [(b, *p) for b, p in merged.items()])  # type: ignore[misc]


@query
def trends_by_key(conn: Connection, now: datetime) -> dict[str, Trends]:
    """`trends` of each definition key with activity in the last day."""
    rows: dict[str, list[tuple[datetime, int, int, int]]] = {}
    for key, bucket, started, completed, incidents in _bucket_rows(conn, _since(now), None):
        rows.setdefault(key, []).append((bucket, started, completed, incidents))
    return {key: _trends(now, found) for key, found in rows.items()}
