"""Straight-through instances per second against the same server's minimal-transaction rate.

(a) one connection loops minimal transactions: INSERT one row, UPDATE one row, COMMIT;
(b) start -> three handler tasks -> end, started one after another through the Python API.
The figure that matters is b/a: what a whole instance costs in units of a minimal transaction.
Beside it: the rows (b) wrote per instance and the WAL bytes per instance, from the server's
statistics over the timed run, and then what the parallel demo order (app/demo.py's model) costs
per ended instance in WAL and in table and index bytes (bench/write_profile.py measures both in
detail, table by table).
"""

from __future__ import annotations

import argparse
import time

import psycopg

from bench.scratch import scratch_engine
from bench.write_profile import (
    STRAIGHT_KEY,
    Cost,
    cost,
    deploy_order,
    deploy_straight,
    flag_handler,
    order_cost,
    snapshot,
    wait_for_statistics,
)
from engine.api import Engine

__all__ = ["flag_handler", "minimal_transactions", "run"]


def minimal_transactions(url: str, seconds: float) -> float:
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_minimal (id bigserial PRIMARY KEY, n int)")
        conn.commit()
        count = 0
        deadline = time.perf_counter() + seconds
        start = time.perf_counter()
        while time.perf_counter() < deadline:
            row = conn.execute("INSERT INTO bench_minimal (n) VALUES (0) RETURNING id").fetchone()
            assert row is not None
            conn.execute("UPDATE bench_minimal SET n = n + 1 WHERE id = %s", (row[0],))
            conn.commit()
            count += 1
        elapsed = time.perf_counter() - start
        conn.execute("DROP TABLE bench_minimal")
        conn.commit()
    return count / elapsed


def straight_through(engine: Engine, seconds: float) -> tuple[float, Cost]:
    """Instances per second, and what each cost the database."""
    deploy_straight(engine)
    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        # The deployment's rows reach the statistics before the first snapshot (the pools'
        # sessions report when drained); the instances that warm the new sessions, the definition
        # cache and prepared statements are counted with the timed ones.
        wait_for_statistics(engine, conn, snapshot(conn), 0)
        before = snapshot(conn)
        warming = 50
        for n in range(warming):
            engine.start_latest(STRAIGHT_KEY, {"n": n})
        count = 0
        deadline = time.perf_counter() + seconds
        start = time.perf_counter()
        while time.perf_counter() < deadline:
            engine.start_latest(STRAIGHT_KEY, {"n": count})
            count += 1
        rate = count / (time.perf_counter() - start)
        wait_for_statistics(engine, conn, before, warming + count)
        return rate, cost(conn, before, snapshot(conn), warming + count)


def run(url: str | None, seconds: float, orders: int) -> dict[str, float]:
    with scratch_engine(url) as engine:
        db_url = engine.database.url
        baseline = minimal_transactions(db_url, seconds)
        instances, straight = straight_through(engine, seconds)
        baseline_after = minimal_transactions(db_url, seconds)
        deploy_order(engine)
        order = order_cost(engine, orders)
    a = (baseline + baseline_after) / 2
    return {
        "minimal_tx_per_s": a,
        "instances_per_s": instances,
        "ratio": instances / a,
        "rows_per_instance": straight.rows_written,
        "wal_per_instance": straight.wal_bytes,
        "bytes_per_instance": straight.table_bytes,
        "order_rows": order.rows_written,
        "order_wal": order.wal_bytes,
        "order_bytes": order.table_bytes,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--orders", type=int, default=200, help="parallel demo orders run")
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = run(args.database_url, args.seconds, args.orders)
    print(f"(a) minimal transactions/s (INSERT+UPDATE+COMMIT): {figures['minimal_tx_per_s']:.0f}")
    print(
        "(b) straight-through instances/s (start -> 3 handlers -> end): "
        f"{figures['instances_per_s']:.0f}"
    )
    print(
        f"b/a = {figures['ratio']:.2f}  (target >= 0.35); per instance: "
        f"{figures['rows_per_instance']:.1f} rows written, "
        f"{figures['wal_per_instance']:.0f} B WAL, "
        f"{figures['bytes_per_instance']:.0f} B tables and indexes"
    )
    print(
        f"parallel demo order, per ended instance: {figures['order_rows']:.1f} rows written, "
        f"{figures['order_wal']:.0f} B WAL, {figures['order_bytes']:.0f} B tables and indexes"
    )


if __name__ == "__main__":
    main()
