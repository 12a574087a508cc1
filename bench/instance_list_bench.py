"""The instance list's first page with a million instances in the database: server time.

    python -m bench.instance_list_bench [--instances 1000000] [--database-url URL]

Fills `process_instance` with generated rows (most completed, some active, a share with business
keys), analyzes, then times `Engine.list_instances` first pages: unfiltered, by state, by
definition, and a second page through the cursor.
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.store.instances import InstanceFilter


def fill(engine: Engine, count: int) -> None:
    engine.deploy(
        ProcessBuilder("bench-list")
        .start_event("start")
        .user_task("t")
        .end_event("end")
        .chain("start", "t", "end")
        .build()
    )
    definition = engine.latest_definition("bench-list")
    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        have = conn.execute("SELECT count(*) FROM process_instance").fetchone()
        missing = count - (have[0] if have else 0)
        if missing > 0:
            conn.execute(
                "INSERT INTO process_instance (id, root_instance_id, definition_id, "
                "definition_key, business_key, state, version, started_at, ended_at) "
                "SELECT u, u, %s, %s, "
                "CASE WHEN n %% 10 = 0 THEN 'order-' || n END, "
                "CASE WHEN n %% 50 = 0 THEN 'Active' ELSE 'Completed' END, 0, "
                "now() - n * interval '1 second', now() - n * interval '1 second' "
                "FROM (SELECT gen_random_uuid() AS u, n FROM generate_series(1, %s) AS n) AS ids",
                (definition.id, definition.key, missing),
            )
        conn.execute("ANALYZE process_instance")


def timed(engine: Engine, where: InstanceFilter, runs: int, second_page: bool = False) -> float:
    samples = []
    for _ in range(runs):
        after = engine.list_instances(where, limit=50).next if second_page else None
        started = time.perf_counter()
        page = engine.list_instances(where, limit=50, after=after)
        samples.append((time.perf_counter() - started) * 1000)
        assert len(page.items) == 50
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with scratch_engine(args.database_url) as engine:
        started = time.perf_counter()
        fill(engine, args.instances)
        print(f"{args.instances} instances in place ({time.perf_counter() - started:.0f} s)")
        cases = {
            "first page, no filter": (InstanceFilter(), False),
            "first page, state=Active": (InstanceFilter(state="Active"), False),
            "first page, definition key": (InstanceFilter(definition_key="bench-list"), False),
            "second page, no filter (cursor)": (InstanceFilter(), True),
        }
        for label, (where, second) in cases.items():
            print(f"{label}: p50 {timed(engine, where, args.runs, second):.2f} ms")


if __name__ == "__main__":
    main()
