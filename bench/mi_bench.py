"""A parallel multi-instance of automatic iterations followed by a join, against the same
server's minimal-transaction rate.

(a) one connection loops minimal transactions: INSERT one row, UPDATE one row, COMMIT;
(b) start -> split -> [a service task run as a parallel multi-instance of 100 iterations |
    one service task] -> join -> end, started one after another through the Python API;
(c) the cost of one such instance at 10, 100 and 1,000 iterations, and per iteration: it should
    stay flat (linear growth: no round trip per iteration, no scan of every iteration per step).
Every instance runs in one command, so each costs one write transaction whatever its iterations.
"""

from __future__ import annotations

import argparse
import time

from bench.engine_throughput import minimal_transactions
from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.model import ProcessModel
from engine.states import InstanceState

SIZES = (10, 100, 1000)


def fan_out(iterations: int) -> ProcessModel:
    return (
        ProcessBuilder(f"bench-mi-{iterations}")
        .start_event("start")
        .parallel_gateway("split")
        .service_task("each", handler="each")
        .multi_instance("each", cardinality=iterations)
        .service_task("other", handler="other")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split", "each", "join", "end")
        .chain("split", "other", "join")
        .build()
    )


def each(ctx: TaskContext) -> None:
    return None


def other(ctx: TaskContext) -> dict[str, bool]:
    return {"other": True}


def instances_per_second(engine: Engine, iterations: int, seconds: float, warm: int) -> float:
    key = f"bench-mi-{iterations}"
    for _ in range(warm):  # the pool, the definition cache and prepared statements
        engine.start_latest(key)
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline or count < 3:
        instance = engine.start_latest(key, {"n": count})
        count += 1
    assert instance.state is InstanceState.COMPLETED
    return count / (time.perf_counter() - start)


def transactions_per_instance(engine: Engine, iterations: int) -> int:
    """Write transactions while one instance runs: transaction ids handed out by the server
    (this server is the benchmark's own), less the one the second probe takes."""

    def next_xid() -> int:
        with engine.connection() as conn:
            row = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
        assert row is not None
        return int(row[0])

    before = next_xid()
    engine.start_latest(f"bench-mi-{iterations}")
    return next_xid() - before - 1


def run(url: str | None, seconds: float) -> dict[str, float]:
    with scratch_engine(url) as engine:
        engine.register_handler("each", each)
        engine.register_handler("other", other)
        for size in SIZES:
            engine.deploy(fan_out(size))
        db_url = engine.database.url
        baseline = minimal_transactions(db_url, seconds)
        figures: dict[str, float] = {}
        figures["instances_per_s_100"] = instances_per_second(engine, 100, seconds, 20)
        baseline_after = minimal_transactions(db_url, seconds)
        for size in SIZES:
            rate = instances_per_second(engine, size, seconds, 3)
            figures[f"ms_per_instance_{size}"] = 1000 / rate
            figures[f"us_per_iteration_{size}"] = 1_000_000 / rate / size
        figures["commits_per_instance_1000"] = transactions_per_instance(engine, 1000)
    a = (baseline + baseline_after) / 2
    figures["minimal_tx_per_s"] = a
    figures["ratio_100"] = figures["instances_per_s_100"] / a
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    figures = run(args.database_url, args.seconds)
    print(f"(a) minimal transactions/s (INSERT+UPDATE+COMMIT): {figures['minimal_tx_per_s']:.0f}")
    print(
        "(b) instances/s, parallel multi-instance of 100 handler iterations + a join: "
        f"{figures['instances_per_s_100']:.1f}"
    )
    print(f"b/a = {figures['ratio_100']:.3f}")
    print("(c) iterations   ms/instance   us/iteration")
    for size in SIZES:
        print(
            f"    {size:>10}   {figures[f'ms_per_instance_{size}']:>11.1f}   "
            f"{figures[f'us_per_iteration_{size}']:>12.0f}"
        )
    print(
        "    growth 10 -> 1,000 per iteration: "
        f"{figures['us_per_iteration_1000'] / figures['us_per_iteration_10']:.2f}x "
        "(1.0 = linear in the iterations)"
    )
    print(
        "write transactions for one instance of 1,000 iterations: "
        f"{figures['commits_per_instance_1000']:.0f}"
    )


if __name__ == "__main__":
    main()
