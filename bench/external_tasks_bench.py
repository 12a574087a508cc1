"""External-task round trips per second against the same server's minimal-transaction rate.

(a) four connections, one thread each, loop minimal transactions: INSERT one row, UPDATE one row,
    COMMIT;
(b) four worker threads each loop one round trip: fetch-and-lock one task, complete it (which
    completes its instance), against a backlog of open tasks topped up before each window.
The figure that matters is b/a: what a worker's round trip costs in units of a minimal transaction.
The run alternates windows of (a) and (b), a, b, a, b, ..., a, and takes each (b) against the mean
of the (a) windows on either side of it: on a shared machine the rate of either swings by tens of
per cent within a minute, and a ratio of windows seconds apart follows those swings least. The
median of the rounds is the figure reported.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder

WORKERS = 4
TOPIC = "bench-topic"


# What one thread of a race does: set up, wait at the barrier, loop until the event is set (or
# its work runs out), and return how many iterations it made.
Loop = Callable[[int, threading.Barrier, threading.Event], int]


def race(threads: int, seconds: float, loop: Loop) -> tuple[float, int]:
    """Iterations per second of `threads` threads running `loop` together, from the moment all
    are set up until `seconds` pass or every loop has returned; also the iterations made."""
    counts = [0] * threads
    barrier = threading.Barrier(threads + 1)
    stop = threading.Event()

    def run(index: int) -> None:
        counts[index] = loop(index, barrier, stop)

    started = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for thread in started:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in started:
        thread.join(max(0.0, start + seconds - time.perf_counter()))
    stop.set()
    for thread in started:
        thread.join()
    return sum(counts) / (time.perf_counter() - start), sum(counts)


def minimal_transactions(url: str, seconds: float, connections: int = WORKERS) -> float:
    """Minimal transactions per second over `connections` connections, one thread each."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_minimal (id bigserial PRIMARY KEY, n int)")

    def loop(index: int, ready: threading.Barrier, stop: threading.Event) -> int:
        made = 0
        with psycopg.connect(url) as conn:
            ready.wait()
            while not stop.is_set():
                row = conn.execute(
                    "INSERT INTO bench_minimal (n) VALUES (0) RETURNING id"
                ).fetchone()
                assert row is not None
                conn.execute("UPDATE bench_minimal SET n = n + 1 WHERE id = %s", (row[0],))
                conn.commit()
                made += 1
        return made

    rate, _ = race(connections, seconds, loop)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE bench_minimal")
    return rate


def create_backlog(engine: Engine, count: int) -> None:
    def start(numbers: range) -> None:
        for n in numbers:
            engine.start_latest("bench-external", {"n": n})

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(start, (range(k, count, WORKERS) for k in range(WORKERS))))


def settle(engine: Engine) -> None:
    """Statistics and visibility as a database in service has them: right after a bulk load the
    planner would still think the tables empty, and a queue table's index would still hold the
    entries of tasks an earlier run completed until autovacuum came by."""
    with engine.connection() as conn:
        conn.execute("VACUUM ANALYZE")


MODEL = (
    ProcessBuilder("bench-external")
    .start_event("start")
    .service_task("work", topic=TOPIC)
    .end_event("end")
    .chain("start", "work", "end")
    .build()
)


def prepare(engine: Engine) -> None:
    """Deploy the benchmark process."""
    engine.deploy(MODEL)


def replenish(engine: Engine, backlog: int) -> None:
    """Bring the open tasks of the benchmark topic back to `backlog` before a window, so that no
    window runs out of work however fast the machine."""
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM external_task WHERE state = 'Open' AND topic = %s", (TOPIC,)
        ).fetchone()
    assert row is not None
    if backlog > row[0]:
        create_backlog(engine, backlog - row[0])
    settle(engine)


def round_trips(engine: Engine, seconds: float) -> tuple[float, int]:
    """Round trips per second of WORKERS threads until `seconds` pass or the backlog runs out;
    also how many round trips were made."""

    def loop(index: int, ready: threading.Barrier, stop: threading.Event) -> int:
        worker_id = f"bench-worker-{index}"
        made = 0
        ready.wait()
        while not stop.is_set():
            tasks = engine.fetch_and_lock(worker_id, {TOPIC: 60_000}, max_tasks=1)
            if not tasks:
                break
            engine.complete_external_task(tasks[0]["id"], worker_id, {"done": True})
            made += 1
        return made

    return race(WORKERS, seconds, loop)


def warm_up(engine: Engine) -> None:
    """Fill the pool, the definition cache and the prepared statements."""
    model = (
        ProcessBuilder("bench-warm-up")
        .start_event("start")
        .service_task("work", topic="bench-warm-up")
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    engine.deploy(model)
    for _ in range(50):
        engine.start_latest("bench-warm-up")
    while tasks := engine.fetch_and_lock("warm", {"bench-warm-up": 60_000}, max_tasks=1):
        engine.complete_external_task(tasks[0]["id"], "warm")


def run(url: str | None, seconds: float, backlog: int, rounds: int) -> dict[str, Any]:
    with scratch_engine(url, pool_size=WORKERS * 2) as engine:
        db_url = engine.database.url
        warm_up(engine)
        prepare(engine)
        replenish(engine, backlog)
        minimal = [minimal_transactions(db_url, seconds)]
        engine_rates: list[float] = []
        ran_out = False
        for _ in range(rounds):
            rate, count = round_trips(engine, seconds)
            engine_rates.append(rate)
            ran_out = ran_out or count >= backlog
            replenish(engine, backlog)
            minimal.append(minimal_transactions(db_url, seconds))
    ratios = [rate / ((minimal[i] + minimal[i + 1]) / 2) for i, rate in enumerate(engine_rates)]
    return {
        "minimal": minimal,
        "round_trips": engine_rates,
        "ratios": ratios,
        "ratio": statistics.median(ratios),
        "ran_out": ran_out,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each window")
    parser.add_argument("--rounds", type=int, default=5, help="windows of (b)")
    parser.add_argument(
        "--backlog", type=int, default=10000, help="open tasks at the start of each window"
    )
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    figures = run(args.database_url, args.seconds, args.backlog, args.rounds)
    print(
        f"(a) minimal transactions/s over {WORKERS} connections (INSERT+UPDATE+COMMIT), "
        "each window: " + ", ".join(f"{m:.0f}" for m in figures["minimal"])
    )
    print(
        f"(b) external-task round trips/s with {WORKERS} worker threads (fetch-and-lock one, "
        "complete it), each window: " + ", ".join(f"{r:.0f}" for r in figures["round_trips"])
    )
    print("b/a per round: " + ", ".join(f"{r:.2f}" for r in figures["ratios"]))
    if figures["ran_out"]:
        print("    a window used up the backlog before its time was over: raise --backlog")
    print(f"b/a = {figures['ratio']:.2f}, the median of {args.rounds} rounds  (target >= 0.35)")


if __name__ == "__main__":
    main()
