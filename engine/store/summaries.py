"""Writes of the summary rows (engine/db/summaries.py says what they count): the fold, which moves
the committed deltas into the base rows, and the rebuild, which replaces every row with a recount
of the big tables. Both run in a command's transaction (engine/commands/summaries.py)."""

from __future__ import annotations

from typing import Any

import psycopg

from engine.states import IncidentState, InstanceState, TokenState, VisitState

Connection = psycopg.Connection[Any]


def bucket_of(column: str) -> str:
    return f"date_bin('5 minutes', {column}, TIMESTAMPTZ '2000-01-01 00:00:00+00')"


# The values of the states the recounts name (the `RECOUNT_*` statements' parameters).
RECOUNT_PARAMS: dict[str, Any] = {
    # A live token: not Completed or Terminated.
    "final_tokens": [state.value for state in TokenState if state.is_final],
    "open_incident": IncidentState.OPEN.value,
    "completed": InstanceState.COMPLETED.value,
    # A visit ended canceled.
    "canceled_visit": VisitState.TERMINATED.value,
}

# Only one fold at a time (pg_try_advisory_xact_lock): a second folder finds the lock taken and
# leaves the deltas to the first. The rebuild takes it too.
FOLD_LOCK = 0x1A7E_5E55

# -- recount: every summary from the big tables --------------------------------------------------

RECOUNT_INSTANCES = (
    "SELECT definition_id, state, count(*) AS instances FROM process_instance "
    "GROUP BY definition_id, state"
)

RECOUNT_NODES = """
SELECT definition_id, node_id, sum(a) AS active_tokens, sum(o) AS open_incidents,
    sum(v) AS visits, sum(cv) AS completed_visits, sum(s) AS total_seconds,
    sum(cn) AS canceled_visits
FROM (
    SELECT p.definition_id, t.node_id, count(*) AS a, 0 AS o, 0 AS v, 0 AS cv, 0::numeric AS s,
        0 AS cn
    FROM token t JOIN process_instance p ON p.id = t.instance_id
    WHERE t.state <> ALL(%(final_tokens)s) GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, i.node_id, 0, count(*), 0, 0, 0, 0
    FROM incident i JOIN process_instance p ON p.id = i.instance_id
    WHERE i.state = %(open_incident)s GROUP BY 1, 2
    UNION ALL
    SELECT p.definition_id, h.node_id, 0, 0, count(*), count(h.ended_at),
        coalesce(sum(extract(epoch FROM h.ended_at - h.started_at)), 0),
        count(*) FILTER (WHERE h.state = %(canceled_visit)s)
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
    WHERE state = %(completed)s AND ended_at IS NOT NULL GROUP BY 1, 2
    UNION ALL
    SELECT {bucket_of("i.created_at")}, p.definition_id, 0, 0, count(*)
    FROM incident i JOIN process_instance p ON p.id = i.instance_id GROUP BY 1, 2
) x
GROUP BY bucket, definition_id
"""

# -- the fold -------------------------------------------------------------------------------------

# The counts of each summary, as its base table and summary_delta's arrays name them.
NODE_COUNTS = (
    "active_tokens",
    "open_incidents",
    "visits",
    "completed_visits",
    "total_seconds",
    "canceled_visits",
)
BUCKET_COUNTS = ("started", "completed", "incidents")


def _unnested(source: str, keys: str, key: str, counts: tuple[str, ...]) -> str:
    """The deltas of the summary_delta rows of `source` for one summary, a row per element of
    their `keys` array: definition_id, `key` and `counts` (a count array that is null: zeros).
    The key array is unnested with its positions, the counts taken by subscript (cheaper than
    unnesting every array; unnest, unlike generate_subscripts, tells the planner how many
    elements to expect, so a read of a few deltas is not planned as a parallel scan of many)."""
    values = ", ".join(f"coalesce(d.{count}[u.i], 0) AS {count}" for count in counts)
    return (
        f"SELECT d.definition_id, u.{key}, {values} FROM {source} d "
        f"CROSS JOIN LATERAL unnest(d.{keys}) WITH ORDINALITY u({key}, i) "
        f"WHERE d.{keys} IS NOT NULL"
    )


def delta_instances(source: str = "summary_delta") -> str:
    """Unfolded instance counts: definition_id, state, instances."""
    return _unnested(source, "states", "state", ("instances",))


def delta_nodes(source: str = "summary_delta") -> str:
    """Unfolded node counts: definition_id, node_id and the `NODE_COUNTS`."""
    return _unnested(source, "node_ids", "node_id", NODE_COUNTS)


def delta_open_incidents(source: str = "summary_delta") -> str:
    """Unfolded open incident counts: definition_id, node_id, open_incidents, of the rows that
    change any (most rows change none, and are passed over without a look at their elements)."""
    return (
        f"SELECT d.definition_id, d.node_ids[u.i] AS node_id, u.open_incidents FROM {source} d "
        "CROSS JOIN LATERAL unnest(d.open_incidents) WITH ORDINALITY u(open_incidents, i) "
        "WHERE d.open_incidents IS NOT NULL"
    )


def delta_buckets(source: str = "summary_delta") -> str:
    """Unfolded bucket counts: definition_id, bucket and the `BUCKET_COUNTS`."""
    return _unnested(source, "buckets", "bucket", BUCKET_COUNTS)


FOLD = f"""
WITH gone AS (DELETE FROM summary_delta RETURNING *),
instances AS (
    INSERT INTO instance_summary AS b (definition_id, state, instances)
    SELECT definition_id, state, sum(instances) FROM ({delta_instances("gone")}) g
    GROUP BY definition_id, state
    ON CONFLICT (definition_id, state) DO UPDATE SET instances = b.instances + excluded.instances
    RETURNING b.definition_id, b.state, b.instances = 0 AS empty
),
nodes AS (
    INSERT INTO node_summary AS b (definition_id, node_id, active_tokens, open_incidents, visits,
        completed_visits, total_seconds, canceled_visits)
    SELECT definition_id, node_id, sum(active_tokens), sum(open_incidents), sum(visits),
        sum(completed_visits), sum(total_seconds), sum(canceled_visits)
    FROM ({delta_nodes("gone")}) g
    GROUP BY definition_id, node_id
    ON CONFLICT (definition_id, node_id) DO UPDATE SET
        active_tokens = b.active_tokens + excluded.active_tokens,
        open_incidents = b.open_incidents + excluded.open_incidents,
        visits = b.visits + excluded.visits,
        completed_visits = b.completed_visits + excluded.completed_visits,
        total_seconds = b.total_seconds + excluded.total_seconds,
        canceled_visits = b.canceled_visits + excluded.canceled_visits
    RETURNING b.definition_id, b.node_id,
        (b.active_tokens, b.open_incidents, b.visits, b.completed_visits, b.total_seconds,
            b.canceled_visits) = (0, 0, 0, 0, 0, 0) AS empty
),
buckets AS (
    INSERT INTO activity_bucket AS b (bucket, definition_id, started, completed, incidents)
    SELECT bucket, definition_id, sum(started), sum(completed), sum(incidents)
    FROM ({delta_buckets("gone")}) g GROUP BY bucket, definition_id
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
        "AND (active_tokens, open_incidents, visits, completed_visits, total_seconds, "
        "canceled_visits) = (0, 0, 0, 0, 0, 0)"
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


def rebuild(conn: Connection) -> tuple[int, int, int]:
    """Replace every summary row with the recount, in the caller's transaction, made REPEATABLE
    READ here (this must be its first statement): the recount and the deltas deleted are of one
    snapshot, so a delta committed after it stays and counts once. Folds wait for it. The rows
    written to instance_summary, node_summary and activity_bucket."""
    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (FOLD_LOCK,))
    for table in ("summary_delta", "instance_summary", "node_summary", "activity_bucket"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        f"INSERT INTO instance_summary (definition_id, state, instances) {RECOUNT_INSTANCES}"
    )
    conn.execute(
        "INSERT INTO node_summary (definition_id, node_id, active_tokens, open_incidents, "
        f"visits, completed_visits, total_seconds, canceled_visits) {RECOUNT_NODES}",
        RECOUNT_PARAMS,
    )
    conn.execute(
        "INSERT INTO activity_bucket (bucket, definition_id, started, completed, incidents) "
        f"{RECOUNT_BUCKETS}",
        RECOUNT_PARAMS,
    )
    counts = conn.execute(
        "SELECT (SELECT count(*) FROM instance_summary), (SELECT count(*) FROM node_summary), "
        "(SELECT count(*) FROM activity_bucket)"
    ).fetchone()
    assert counts is not None
    instance_rows, node_rows, bucket_rows = (int(n) for n in counts)
    return instance_rows, node_rows, bucket_rows
