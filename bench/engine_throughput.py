"""Straight-through instances per second against the same server's minimal-transaction rate.

(a) one connection loops minimal transactions: INSERT one row, UPDATE one row, COMMIT;
(b) start -> three handler tasks -> end, started one after another through the Python API.
The figure that matters is b/a: what a whole instance costs in units of a minimal transaction.
"""

from __future__ import annotations

import argparse
import time

import psycopg

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import Handler


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


def flag_handler(name: str) -> Handler:
    """A handler that sets the variable `name` to true."""
    return lambda ctx: {name: True}


def straight_through(engine: Engine, seconds: float) -> float:
    for name in ("one", "two", "three"):
        engine.register_handler(name, flag_handler(name))
    model = (
        ProcessBuilder("bench-straight")
        .start_event("start")
        .service_task("one", handler="one")
        .service_task("two", handler="two")
        .service_task("three", handler="three")
        .end_event("end")
        .chain("start", "one", "two", "three", "end")
        .build()
    )
    engine.deploy(model)
    for _ in range(50):  # warm the pool, the definition cache and prepared statements
        engine.start_latest("bench-straight")
    count = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        engine.start_latest("bench-straight", {"n": count})
        count += 1
    return count / (time.perf_counter() - start)


def run(url: str | None, seconds: float) -> dict[str, float]:
    with scratch_engine(url) as engine:
        db_url = engine.database.url
        baseline = minimal_transactions(db_url, seconds)
        instances = straight_through(engine, seconds)
        baseline_after = minimal_transactions(db_url, seconds)
    a = (baseline + baseline_after) / 2
    return {"minimal_tx_per_s": a, "instances_per_s": instances, "ratio": instances / a}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = run(args.database_url, args.seconds)
    print(f"(a) minimal transactions/s (INSERT+UPDATE+COMMIT): {figures['minimal_tx_per_s']:.0f}")
    print(
        "(b) straight-through instances/s (start -> 3 handlers -> end): "
        f"{figures['instances_per_s']:.0f}"
    )
    print(f"b/a = {figures['ratio']:.2f}  (target >= 0.5)")


if __name__ == "__main__":
    main()
