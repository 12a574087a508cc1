"""What the summary triggers write: one summary_delta row per definition and trigger statement,
its counts in arrays aligned with their keys (a count array that is null: zeros), nothing for a
statement that changes no count, and the summaries exact over them (engine/db/summaries.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.summaries import FoldSummaries
from engine.db import migrate
from engine.queries import summaries
from engine.queries.summaries import NodeCounts
from tests.engine.test_summaries import assert_exact, quick_model


def deltas(url: str) -> list[dict[str, Any]]:
    with psycopg.connect(url) as conn:
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        return cur.execute(
            "SELECT definition_id, states, instances, buckets, started, completed, incidents, "
            "node_ids, active_tokens, open_incidents, visits, completed_visits, total_seconds, "
            "canceled_visits FROM summary_delta ORDER BY seq"
        ).fetchall()


def pairs(row: dict[str, Any], keys: str, *counts: str) -> dict[Any, tuple[Any, ...]]:
    """The row's counts `counts` by the elements of its array `keys`."""
    return {key: tuple(row[count][n] for count in counts) for n, key in enumerate(row[keys])}


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
    instance_row = next(row for row in rows if row["states"] is not None)
    assert instance_row["definition_id"] == definition
    assert (instance_row["states"], instance_row["instances"]) == (["Completed"], [1])
    assert len(instance_row["buckets"]) == 1
    assert (instance_row["started"], instance_row["completed"]) == ([1], [1])
    assert instance_row["incidents"] is None
    assert instance_row["node_ids"] is None
    [visits_row] = [row for row in rows if row["node_ids"] is not None]
    assert visits_row["definition_id"] == definition
    assert (visits_row["states"], visits_row["buckets"]) == (None, None)
    assert sorted(visits_row["node_ids"]) == ["end", "one", "start", "three", "two"]
    assert visits_row["visits"] == [1] * 5
    assert visits_row["completed_visits"] == [1] * 5
    assert all(seconds >= 0 for seconds in visits_row["total_seconds"])
    # Counts no visit changed, and the token inserted already Completed, write nothing.
    assert visits_row["active_tokens"] is None
    assert visits_row["open_incidents"] is None
    assert visits_row["canceled_visits"] is None
    assert_exact(database_url)


def test_one_statement_over_two_definitions_and_two_buckets(
    engine: Engine, database_url: str
) -> None:
    """A statement typed into psql inserts instances of two definitions, those of one started
    in two buckets, then one inserts their visits: one delta row per definition and statement,
    and the summaries equal the recount, before and after the fold."""
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

    # The instances' statement: one row per definition, first's two states and two buckets in
    # it. The visits' statement: one row per definition.
    instance_rows = {r["definition_id"]: r for r in rows if r["states"] is not None}
    assert {d: pairs(r, "states", "instances") for d, r in instance_rows.items()} == {
        first: {"Active": (2,), "Suspended": (1,)},
        second: {"Active": (1,)},
    }
    assert {d: pairs(r, "buckets", "started", "completed") for d, r in instance_rows.items()} == {
        first: {
            datetime(2026, 1, 1, 10, 0, tzinfo=UTC): (1, 0),
            datetime(2026, 1, 1, 10, 5, tzinfo=UTC): (2, 0),
        },
        second: {datetime(2026, 1, 1, 10, 0, tzinfo=UTC): (1, 0)},
    }
    node_rows = {r["definition_id"]: r for r in rows if r["node_ids"] is not None}
    assert {
        d: pairs(r, "node_ids", "visits", "completed_visits") for d, r in node_rows.items()
    } == {
        first: {"start": (3, 0), "end": (3, 0)},
        second: {"start": (1, 0), "end": (1, 0)},
    }
    assert len(rows) == 4
    counted = assert_exact(database_url)
    assert counted.nodes[(first, "start")] == NodeCounts(0, 0, 3, 0, Decimal(0), 0)
    engine.run(FoldSummaries())
    assert deltas(database_url) == []
    assert assert_exact(database_url) == counted


def test_updates_write_only_what_they_change(engine: Engine, database_url: str) -> None:
    """An instance waits at a user task. A version bump of its row, and a token update that
    keeps node and state, write no delta row; suspending it writes one row, its old state -1 and
    its new +1 and no bucket; moving its token one row, the old node -1 and the new +1."""
    engine.deploy(
        ProcessBuilder("waits")
        .start_event("start")
        .user_task("first")
        .user_task("second")
        .end_event("end")
        .chain("start", "first", "second", "end")
        .build()
    )
    definition = engine.latest_definition("waits").id
    instance = engine.start_latest("waits").id
    engine.run(FoldSummaries())
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE process_instance SET version = version + 1 WHERE id = %s", (instance,))
        conn.execute("UPDATE token SET version = version + 1 WHERE instance_id = %s", (instance,))
        assert deltas(database_url) == []

        conn.execute("UPDATE process_instance SET state = 'Suspended' WHERE id = %s", (instance,))
        [suspended] = deltas(database_url)
        assert suspended["definition_id"] == definition
        assert pairs(suspended, "states", "instances") == {"Active": (-1,), "Suspended": (1,)}
        assert (suspended["buckets"], suspended["node_ids"]) == (None, None)
        conn.execute("UPDATE process_instance SET state = 'Active' WHERE id = %s", (instance,))
        engine.run(FoldSummaries())

        conn.execute(
            "UPDATE token SET node_id = 'second' WHERE instance_id = %s AND node_id = 'first'",
            (instance,),
        )
        [moved] = deltas(database_url)
        assert pairs(moved, "node_ids", "active_tokens") == {"first": (-1,), "second": (1,)}
        assert (moved["states"], moved["visits"], moved["open_incidents"]) == (None, None, None)
    assert_exact(database_url)


OLD_FORM = (
    "SELECT definition_id, state, node_id, bucket, instances, active_tokens, open_incidents, "
    "visits, completed_visits, total_seconds, canceled_visits, started, completed, incidents "
    "FROM summary_delta"
)


def test_unfolded_deltas_keep_their_counts_through_the_migration_both_ways(
    empty_database_url: str,
) -> None:
    """Deltas of the form before revision 0044 (one row per state, node or bucket) lie unfolded:
    the upgrade rewrites them in arrays with the same counts, and the downgrade back."""
    url = empty_database_url
    migrate.upgrade(url, "0043")
    bucket = datetime(2026, 1, 1, 10, 5, tzinfo=UTC)
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO summary_delta (definition_id, state, instances) "
            "VALUES ('d', 'Active', 2), ('d', 'Completed', -1)"
        )
        conn.execute(
            "INSERT INTO summary_delta (definition_id, node_id, active_tokens, open_incidents, "
            "visits, completed_visits, total_seconds, canceled_visits) "
            "VALUES ('d', 'task', 1, 0, 3, 2, 1.5, 1), ('d', 'task', 0, 1, 0, 0, 0, 0)"
        )
        conn.execute(
            "INSERT INTO summary_delta (definition_id, bucket, started, completed, incidents) "
            "VALUES ('d', %s, 1, 0, 2)",
            (bucket,),
        )
        conn.commit()
        before = sorted(map(str, conn.execute(OLD_FORM).fetchall()))

    migrate.upgrade(url)

    with psycopg.connect(url) as conn:
        assert len(deltas(url)) == 5
        now = summaries.current(conn)
    assert now.instances == {("d", "Active"): 2, ("d", "Completed"): -1}
    assert now.nodes == {("d", "task"): NodeCounts(1, 1, 3, 2, Decimal("1.5"), 1)}
    assert now.buckets == {(bucket, "d"): (1, 0, 2)}

    migrate.downgrade(url, "0043")

    with psycopg.connect(url) as conn:
        assert sorted(map(str, conn.execute(OLD_FORM).fetchall())) == before
