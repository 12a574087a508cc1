"""Summary rows: the counts the console shows, exact in every committed state, read without
scanning the big tables.

Statement-level triggers on process_instance, token, incident and history (engine/sql/
functions.sql) append each statement's net change to `summary_delta`, in the writing transaction:
nothing is locked, so concurrent commands never queue on a hot counter, and any write path (the
engine's one-statement persist, the history cleanup, a statement typed into psql) is counted. The
fold moves the deltas into the base rows (`instance_summary`, `node_summary`, `activity_bucket`)
in one statement, one folder at a time; a read sums base rows and unfolded deltas in one
statement, so it is exact whether the fold ran or not. `recount` computes every summary from the
big tables: the rebuild writes it, and the tests compare with it.

What the rows count, per definition (the definition an instance has now; tokens, incidents and
visits count under their instance's):
- instance_summary: instances per state;
- node_summary: per node, live tokens (not Completed or Terminated; an ended instance has none),
  open incidents, visits (history rows), ended visits and the sum of their durations in seconds;
- activity_bucket: per five minutes, instances started (by started_at), instances that ended
  Completed (by ended_at), incidents created (by created_at). Deleted instances and incidents
  (the history cleanup) leave their buckets, so buckets go when their history goes.

A statement that changes an instance's definition must not write that instance's tokens,
incidents or visits too (see the trigger of process_instance); separate statements in one
transaction are counted right in any order. Rows of a summary whose counts all reach zero are
deleted by the fold.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import psycopg

from engine.outage import is_database_outage

if TYPE_CHECKING:
    from engine.executor import Command, Idempotency, Result

T = TypeVar("T", bound="Result")

Connection = psycopg.Connection[Any]
log = logging.getLogger(__name__)

# The five-minute bucket of a timestamp, as the triggers compute it.
BUCKET_SECONDS = 300


def bucket_of(column: str) -> str:
    return f"date_bin('5 minutes', {column}, TIMESTAMPTZ '2000-01-01 00:00:00+00')"


LIVE_TOKEN = "NOT IN ('Completed', 'Terminated')"

# Only one fold at a time (pg_try_advisory_xact_lock): a second folder finds the lock taken and
# leaves the deltas to the first. The rebuild takes it too.
FOLD_LOCK = 0x1A7E_5E55

# -- recount: every summary from the big tables --------------------------------------------------

RECOUNT_INSTANCES = (
    "SELECT definition_id, state, count(*) AS instances FROM process_instance "
    "GROUP BY definition_id, state"
)

RECOUNT_NODES = f"""
SELECT definition_id, node_id, sum(a) AS active_tokens, sum(o) AS open_incidents,
    sum(v) AS visits, sum(cv) AS completed_visits, sum(s) AS total_seconds
FROM (
    SELECT p.definition_id, t.node_id, count(*) AS a, 0 AS o, 0 AS v, 0 AS cv, 0::numeric AS s
    FROM token t JOIN process_instance p ON p.id = t.instance_id
    WHERE t.state {LIVE_TOKEN} GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, i.node_id, 0, count(*), 0, 0, 0
    FROM incident i JOIN process_instance p ON p.id = i.instance_id
    WHERE i.state = 'Open' GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, h.node_id, 0, 0, count(*), count(h.ended_at),
        coalesce(sum(extract(epoch FROM h.ended_at - h.started_at)), 0)
    FROM history h JOIN process_instance p ON p.id = h.instance_id GROUP BY 1, 2
) x
GROUP BY definition_id, node_id
"""

RECOUNT_BUCKETS = f"""
SELECT bucket, definition_id, sum(st) AS started, sum(co) AS completed, sum(inc) AS incidents
FROM (
    SELECT {bucket_of("started_at")} AS bucket, definition_id, count(*) AS st, 0 AS co,
        0 AS inc
    FROM process_instance GROUP BY 1, 2
    UNION ALL
    SELECT {bucket_of("ended_at")}, definition_id, 0, count(*), 0 FROM process_instance
    WHERE state = 'Completed' AND ended_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT {bucket_of("i.created_at")}, p.definition_id, 0, 0, count(*)
    FROM incident i JOIN process_instance p ON p.id = i.instance_id GROUP BY 1, 2
) x
GROUP BY bucket, definition_id
"""

# -- the summaries as they are now: base rows plus unfolded deltas, in one statement --------------

_NODE_COUNTS = "active_tokens, open_incidents, visits, completed_visits, total_seconds"

# Each summary as it is now, as a FROM item: its base rows and its unfolded deltas. A query
# filters and sums it (PostgreSQL pushes the filters down into both arms).
LIVE_INSTANCES = (
    "(SELECT definition_id, state, instances FROM instance_summary "
    "UNION ALL SELECT definition_id, state, instances FROM summary_delta "
    "WHERE state IS NOT NULL)"
)
LIVE_NODES = (
    f"(SELECT definition_id, node_id, {_NODE_COUNTS} FROM node_summary "
    f"UNION ALL SELECT definition_id, node_id, {_NODE_COUNTS} FROM summary_delta "
    "WHERE node_id IS NOT NULL)"
)
LIVE_BUCKETS = (
    "(SELECT bucket, definition_id, started, completed, incidents FROM activity_bucket "
    "UNION ALL SELECT bucket, definition_id, started, completed, incidents FROM summary_delta "
    "WHERE bucket IS NOT NULL)"
)

_OF_DEFINITIONS = "%(definitions)s::text[] IS NULL OR definition_id = ANY(%(definitions)s::text[])"

INSTANCES = f"""
SELECT definition_id, state, sum(instances) AS instances FROM {LIVE_INSTANCES} s
WHERE {_OF_DEFINITIONS}
GROUP BY definition_id, state HAVING sum(instances) <> 0
"""

NODES = f"""
SELECT definition_id, node_id, sum(active_tokens) AS active_tokens,
    sum(open_incidents) AS open_incidents, sum(visits) AS visits,
    sum(completed_visits) AS completed_visits, sum(total_seconds) AS total_seconds
FROM {LIVE_NODES} s
WHERE {_OF_DEFINITIONS}
GROUP BY definition_id, node_id
HAVING sum(active_tokens) <> 0 OR sum(open_incidents) <> 0 OR sum(visits) <> 0
    OR sum(completed_visits) <> 0 OR sum(total_seconds) <> 0
"""

BUCKETS = f"""
SELECT bucket, definition_id, sum(started) AS started, sum(completed) AS completed,
    sum(incidents) AS incidents
FROM {LIVE_BUCKETS} s
WHERE %(since)s::timestamptz IS NULL OR bucket >= %(since)s::timestamptz
GROUP BY bucket, definition_id
HAVING sum(started) <> 0 OR sum(completed) <> 0 OR sum(incidents) <> 0
"""

# -- the fold -------------------------------------------------------------------------------------

FOLD = """
WITH gone AS (DELETE FROM summary_delta RETURNING *),
instances AS (
    INSERT INTO instance_summary AS b (definition_id, state, instances)
    SELECT definition_id, state, sum(instances) FROM gone WHERE state IS NOT NULL
    GROUP BY definition_id, state
    ON CONFLICT (definition_id, state) DO UPDATE SET instances = b.instances + excluded.instances
    RETURNING b.definition_id, b.state, b.instances = 0 AS empty
),
nodes AS (
    INSERT INTO node_summary AS b (definition_id, node_id, active_tokens, open_incidents, visits,
        completed_visits, total_seconds)
    SELECT definition_id, node_id, sum(active_tokens), sum(open_incidents), sum(visits),
        sum(completed_visits), sum(total_seconds)
    FROM gone WHERE node_id IS NOT NULL GROUP BY definition_id, node_id
    ON CONFLICT (definition_id, node_id) DO UPDATE SET
        active_tokens = b.active_tokens + excluded.active_tokens,
        open_incidents = b.open_incidents + excluded.open_incidents,
        visits = b.visits + excluded.visits,
        completed_visits = b.completed_visits + excluded.completed_visits,
        total_seconds = b.total_seconds + excluded.total_seconds
    RETURNING b.definition_id, b.node_id,
        (b.active_tokens, b.open_incidents, b.visits, b.completed_visits, b.total_seconds)
        = (0, 0, 0, 0, 0) AS empty
),
buckets AS (
    INSERT INTO activity_bucket AS b (bucket, definition_id, started, completed, incidents)
    SELECT bucket, definition_id, sum(started), sum(completed), sum(incidents)
    FROM gone WHERE bucket IS NOT NULL GROUP BY bucket, definition_id
    ON CONFLICT (bucket, definition_id) DO UPDATE SET
        started = b.started + excluded.started,
        completed = b.completed + excluded.completed,
        incidents = b.incidents + excluded.incidents
    RETURNING b.bucket, b.definition_id, (b.started, b.completed, b.incidents) = (0, 0, 0) AS empty
)
SELECT (SELECT count(*) FROM gone),
    (SELECT array_agg(definition_id) FROM instances WHERE empty),
    (SELECT array_agg(state) FROM instances WHERE empty),
    (SELECT array_agg(definition_id) FROM nodes WHERE empty),
    (SELECT array_agg(node_id) FROM nodes WHERE empty),
    (SELECT array_agg(bucket) FROM buckets WHERE empty),
    (SELECT array_agg(definition_id) FROM buckets WHERE empty)
"""

# Rows whose counts all reached zero go (they were returned empty by the fold's upserts).
DROP_EMPTY = (
    (
        "DELETE FROM instance_summary WHERE (definition_id, state) IN "
        "(SELECT * FROM unnest(%s::text[], %s::text[])) AND instances = 0"
    ),
    (
        "DELETE FROM node_summary WHERE (definition_id, node_id) IN "
        "(SELECT * FROM unnest(%s::text[], %s::text[])) "
        "AND (active_tokens, open_incidents, visits, completed_visits, total_seconds) "
        "= (0, 0, 0, 0, 0)"
    ),
    (
        "DELETE FROM activity_bucket WHERE (bucket, definition_id) IN "
        "(SELECT * FROM unnest(%s::timestamptz[], %s::text[])) "
        "AND (started, completed, incidents) = (0, 0, 0)"
    ),
)


def fold(conn: Connection) -> int | None:
    """Fold every committed delta into the base rows, in the caller's transaction (`conn` not
    in autocommit; the caller commits). The number of deltas folded; None when another fold
    holds the lock."""
    locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (FOLD_LOCK,)).fetchone()
    if not locked or not locked[0]:
        return None
    row = conn.execute(FOLD).fetchone()
    assert row is not None
    count, *empty = row
    pairs = zip(empty[::2], empty[1::2], strict=True)
    for statement, (first, second) in zip(DROP_EMPTY, pairs, strict=True):
        if first:
            conn.execute(statement, (first, second))
    return int(count)


def rebuild(conn: Connection) -> None:
    """Replace every summary row with the recount, in the caller's transaction, which must be
    REPEATABLE READ: the recount and the deltas deleted are of one snapshot, so a delta
    committed after it stays and counts once. Folds wait for it."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (FOLD_LOCK,))
    for table in ("summary_delta", "instance_summary", "node_summary", "activity_bucket"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        f"INSERT INTO instance_summary (definition_id, state, instances) {RECOUNT_INSTANCES}"
    )
    conn.execute(
        "INSERT INTO node_summary (definition_id, node_id, active_tokens, open_incidents, "
        f"visits, completed_visits, total_seconds) {RECOUNT_NODES}"
    )
    conn.execute(
        "INSERT INTO activity_bucket (bucket, definition_id, started, completed, incidents) "
        f"{RECOUNT_BUCKETS}"
    )


# -- whole summaries, for comparisons -----------------------------------------------------------


@dataclass(frozen=True)
class NodeCounts:
    active_tokens: int
    open_incidents: int
    visits: int
    completed_visits: int
    total_seconds: Decimal


@dataclass(frozen=True)
class Summaries:
    """Every summary: instances by (definition, state), node counts by (definition, node),
    (started, completed, incidents) by (bucket, definition). Rows of zeros are left out."""

    instances: dict[tuple[str, str], int]
    nodes: dict[tuple[str, str], NodeCounts]
    buckets: dict[tuple[datetime, str], tuple[int, int, int]]


def _summaries(conn: Connection, instances: str, nodes: str, buckets: str) -> Summaries:
    params = {"definitions": None, "since": None}
    return Summaries(
        instances={(d, s): int(n) for d, s, n in conn.execute(instances, params).fetchall() if n},
        nodes={
            (d, node): NodeCounts(int(a), int(o), int(v), int(cv), Decimal(s))
            for d, node, a, o, v, cv, s in conn.execute(nodes, params).fetchall()
            if (a, o, v, cv, s) != (0, 0, 0, 0, 0)
        },
        buckets={
            (b, d): (int(st), int(co), int(inc))
            for b, d, st, co, inc in conn.execute(buckets, params).fetchall()
            if (st, co, inc) != (0, 0, 0)
        },
    )


def recount(conn: Connection) -> Summaries:
    """Every summary computed from the big tables (a full scan of each)."""
    return _summaries(conn, RECOUNT_INSTANCES, RECOUNT_NODES, RECOUNT_BUCKETS)


def current(conn: Connection) -> Summaries:
    """Every summary as the summary rows and the unfolded deltas say."""
    return _summaries(conn, INSTANCES, NODES, BUCKETS)


# -- the folder: a background thread of the serve and jobs processes ------------------------------

# Seconds between folds. Reads are exact either way; folding keeps the deltas they add up few.
FOLD_INTERVAL_SECONDS = 1.0
_MAX_BACKOFF_SECONDS = 30.0


class FoldingEngine(Protocol):
    """What the folder needs of an engine (engine.api.Engine is one)."""

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T: ...


class Folder:
    """Folds the deltas every `interval` seconds in a daemon thread, until stopped. Any number
    of processes may run one: a fold that finds another running leaves the deltas to it."""

    def __init__(self, engine: FoldingEngine, interval: float = FOLD_INTERVAL_SECONDS) -> None:
        from engine.loops import Loops

        self.engine = engine
        self.interval = interval
        self._loops = Loops("interlock-summaries", "summary folder")

    def start(self) -> None:
        self._loops.start(self._loop, 1)

    def request_stop(self) -> None:
        self._loops.request_stop()

    def stop(self, timeout: float = 5.0) -> bool:
        return self._loops.stop(timeout)

    @property
    def running(self) -> bool:
        return self._loops.running

    def _loop(self) -> None:
        from engine.commands.summaries import FoldSummaries

        failures = 0
        stopping = self._loops.stopping
        while not stopping.wait(self.interval if failures == 0 else self._backoff(failures)):
            try:
                self.engine.run(FoldSummaries())
                failures = 0
            except Exception as exc:
                failures += 1
                if is_database_outage(exc):
                    log.warning(
                        "summary fold: the database is away; again in %.1fs",
                        self._backoff(failures),
                    )
                else:
                    log.exception("summary fold failed; again in %.1fs", self._backoff(failures))

    def _backoff(self, failures: int) -> float:
        return float(min(_MAX_BACKOFF_SECONDS, self.interval * 2 ** min(failures, 10)))
