"""What the summary triggers write: one summary_delta row per definition and trigger statement
(per bucket when the statement's rows fall into several), the changed nodes' counts together in
`nodes`, and the summaries exact over them (engine/db/summaries.py)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.summaries import FoldSummaries
from engine.queries.summaries import NodeCounts
from tests.engine.test_summaries import assert_exact, quick_model


def deltas(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as conn:
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        return cur.execute(
            "SELECT definition_id, state, instances, bucket, started, completed, incidents, nodes "
            "FROM summary_delta ORDER BY seq"
        ).fetchall()


def test_a_straight_through_instance_leaves_two_delta_rows(
    engine: Engine, database_url: str
) -> None:
    engine.register_handler("flag", lambda ctx: {"flag": True})
    engine.deploy(
        ProcessBuilder("straight-deltas")
        .start_event("start")
        .service_task("one", handler="flag")
        .service_task("two", handler="flag")
        .service_task("three", handler="flag")
        .end_event("end")
        .chain("start", "one", "two", "three", "end")
        .build()
    )
    engine.run(FoldSummaries())
    definition = engine.latest_definition("straight-deltas").id
    engine.start_latest("straight-deltas")

    rows = deltas(database_url)

    assert len(rows) == 2
    instance_row = next(row for row in rows if row["state"] is not None)
    assert instance_row["definition_id"] == definition
    assert (instance_row["state"], instance_row["instances"]) == ("Completed", 1)
    assert instance_row["bucket"] is not None
    assert (instance_row["started"], instance_row["completed"]) == (1, 1)
    assert instance_row["nodes"] is None
    [visits_row] = [row for row in rows if row["nodes"] is not None]
    assert (visits_row["state"], visits_row["bucket"]) == (None, None)
    assert sorted(visits_row["nodes"]) == ["end", "one", "start", "three", "two"]
    for counts in visits_row["nodes"].values():
        active, incidents, visits, ended, seconds, canceled = counts
        assert (active, incidents, visits, ended, canceled) == (0, 0, 1, 1, 0)
        assert Decimal(str(seconds)) >= 0
    assert_exact(database_url)


def test_one_statement_over_two_definitions_and_two_buckets(
    engine: Engine, database_url: str
) -> None:
    """A statement typed into psql inserts instances of two definitions, those of one started
    in two buckets, with visits and tokens: one delta row per definition and bucket pairing, and
    the summaries equal the recount, before and after the fold."""
    engine.deploy(quick_model())
    first = engine.latest_definition("quick").id
    engine.deploy(
        ProcessBuilder("quick", "second")
        .start_event("start")
        .end_event("end")
        .chain("start", "end")
        .build()
    )
    second = engine.latest_definition("quick").id
    assert first != second
    engine.run(FoldSummaries())
    with psycopg.connect(database_url) as conn:
        conn.execute(
            """
            WITH i AS (
                INSERT INTO process_instance (id, definition_id, definition_key, state, version,
                    started_at, root_instance_id)
                SELECT v.id, v.definition_id, 'quick', v.state, 0, v.started_at, v.id
                FROM (VALUES
                    ('00000000-0000-4000-8000-000000000001'::uuid, %(a)s, 'Active',
                        '2026-01-01 10:01:00+00'::timestamptz),
                    ('00000000-0000-4000-8000-000000000002'::uuid, %(a)s, 'Active',
                        '2026-01-01 10:07:00+00'::timestamptz),
                    ('00000000-0000-4000-8000-000000000003'::uuid, %(a)s, 'Suspended',
                        '2026-01-01 10:08:00+00'::timestamptz),
                    ('00000000-0000-4000-8000-000000000004'::uuid, %(b)s, 'Active',
                        '2026-01-01 10:02:00+00'::timestamptz)
                ) v (id, definition_id, state, started_at)
                RETURNING id
            )
            SELECT count(*) FROM i
            """,
            {"a": first, "b": second},
        )
        conn.execute(
            "INSERT INTO history (id, instance_id, token_id, node_id, node_type, state, "
            "started_at) SELECT gen_random_uuid(), p.id, gen_random_uuid(), n, 'task', 'Active', "
            "p.started_at FROM process_instance p, unnest(ARRAY['start', 'end']) n "
            "WHERE p.definition_key = 'quick' AND p.started_at < '2027-01-01'"
        )
        conn.commit()
    rows = deltas(database_url)

    # The instances: first has two states and two buckets (paired into two rows), second one
    # of each (one row). The visits: one row per definition.
    instance_rows = [row for row in rows if row["nodes"] is None]
    assert sorted((r["definition_id"], r["state"], r["instances"]) for r in instance_rows) == [
        (first, "Active", 2),
        (first, "Suspended", 1),
        (second, "Active", 1),
    ]
    assert sorted(
        (r["definition_id"], r["bucket"].isoformat(), r["started"]) for r in instance_rows
    ) == [
        (first, "2026-01-01T10:00:00+00:00", 1),
        (first, "2026-01-01T10:05:00+00:00", 2),
        (second, "2026-01-01T10:00:00+00:00", 1),
    ]
    node_rows = {r["definition_id"]: r["nodes"] for r in rows if r["nodes"] is not None}
    assert node_rows == {
        first: {"start": [0, 0, 3, 0, 0, 0], "end": [0, 0, 3, 0, 0, 0]},
        second: {"start": [0, 0, 1, 0, 0, 0], "end": [0, 0, 1, 0, 0, 0]},
    }
    counted = assert_exact(database_url)
    assert counted.nodes[(first, "start")] == NodeCounts(0, 0, 3, 0, Decimal(0), 0)
    engine.run(FoldSummaries())
    assert deltas(database_url) == []
    assert assert_exact(database_url) == counted
