"""External-task round trips per second against the same server's minimal-transaction rate.

(a) four connections, one thread each, loop minimal transactions: INSERT one row, UPDATE one row,
    COMMIT;
(b) four worker threads each loop one round trip: fetch-and-lock one task, complete it (which
    completes its instance), against a backlog of open tasks created beforehand.
The figure that matters is b/a: what a worker's round trip costs in units of a minimal transaction.
"""

from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder

WORKERS = 4
TOPIC = "bench-topic"


def minimal_transactions(url: str, seconds: float, connections: int = WORKERS) -> float:
    """Minimal transactions per second over `connections` connections, one thread each."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_minimal (id bigserial PRIMARY KEY, n int)")
    counts = [0] * connections
    barrier = threading.Barrier(connections + 1)
    stop = threading.Event()

    def loop(index: int) -> None:
        with psycopg.connect(url) as conn:
            barrier.wait()
            while not stop.is_set():
                row = conn.execute(
                    "INSERT INTO bench_minimal (n) VALUES (0) RETURNING id"
                ).fetchone()
                assert row is not None
                conn.execute("UPDATE bench_minimal SET n = n + 1 WHERE id = %s", (row[0],))
                conn.commit()
                counts[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE bench_minimal")
    return sum(counts) / elapsed


def create_backlog(engine: Engine, count: int) -> None:
    def start(numbers: range) -> None:
        for n in numbers:
            engine.start_latest("bench-external", {"n": n})

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(start, (range(k, count, WORKERS) for k in range(WORKERS))))


def round_trips(engine: Engine, seconds: float, backlog: int) -> tuple[float, int]:
    """Round trips per second of WORKERS threads until `seconds` pass or the backlog runs out;
    also how many round trips were made."""
    model = (
        ProcessBuilder("bench-external")
        .start_event("start")
        .service_task("work", topic=TOPIC)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    engine.deploy(model)
    create_backlog(engine, backlog)
    with engine.connection() as conn:
        # Statistics as a database in service has them; right after a bulk load the planner
        # would still think the tables empty.
        conn.execute("ANALYZE")
    counts = [0] * WORKERS
    barrier = threading.Barrier(WORKERS + 1)
    stop = threading.Event()
    finished = [0.0] * WORKERS

    def work(index: int) -> None:
        worker_id = f"bench-worker-{index}"
        barrier.wait()
        while not stop.is_set():
            tasks = engine.fetch_and_lock(worker_id, {TOPIC: 60_000}, max_tasks=1)
            if not tasks:
                break
            engine.complete_external_task(tasks[0]["id"], worker_id, {"done": True})
            counts[index] += 1
        finished[index] = time.perf_counter()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(WORKERS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    stop.wait(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = max(finished) - start
    return sum(counts) / elapsed, sum(counts)


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


def run(url: str | None, seconds: float, backlog: int) -> dict[str, float]:
    with Engine(url, pool_size=WORKERS * 2) as engine:
        db_url = engine.database.url
        warm_up(engine)
        baseline = minimal_transactions(db_url, seconds)
        rate, made = round_trips(engine, seconds, backlog)
        baseline_after = minimal_transactions(db_url, seconds)
    a = (baseline + baseline_after) / 2
    return {
        "minimal_tx_per_s": a,
        "minimal_tx_before": baseline,
        "minimal_tx_after": baseline_after,
        "round_trips_per_s": rate,
        "round_trips": made,
        "ratio": rate / a,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--backlog", type=int, default=6000, help="open tasks created up front")
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    figures = run(args.database_url, args.seconds, args.backlog)
    print(
        f"(a) minimal transactions/s over {WORKERS} connections (INSERT+UPDATE+COMMIT): "
        f"{figures['minimal_tx_per_s']:.0f} "
        f"(before {figures['minimal_tx_before']:.0f}, after {figures['minimal_tx_after']:.0f})"
    )
    print(
        f"(b) external-task round trips/s with {WORKERS} worker threads "
        f"(fetch-and-lock one, complete it): {figures['round_trips_per_s']:.0f} "
        f"({figures['round_trips']:.0f} made)"
    )
    if figures["round_trips"] >= args.backlog:
        print("    the backlog ran out before the time did: raise --backlog")
    print(f"b/a = {figures['ratio']:.2f}  (target >= 0.35)")


if __name__ == "__main__":
    main()
