"""Job acquisition against the number of active instances that have no job due.

One acquisition locks an executor's batch (200) of 500 due timers and is rolled back, so they
stay due; its mean time is taken first with no other instance, then again after `--others`
instances have started that wait for a person. The figure that matters is the ratio of the two:
acquisition looks up the instances of the jobs it considers, never all active instances, so it
stays near 1.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta

import psycopg

from bench import jobs_bench
from bench.scratch import scratch_engine
from engine.core.executor import GENERIC_PLANS
from engine.loops.jobs import JobExecutor
from engine.store import jobs

DUE = 500
BATCH = JobExecutor.batch_size


def acquisition_ms(url: str, runs: int) -> float:
    """Mean milliseconds of one acquisition, on a new connection planned as the engine plans."""
    with psycopg.connect(url, options=GENERIC_PLANS) as conn:
        conn.execute("ANALYZE")
        conn.commit()
        elapsed = 0.0
        for n in range(runs + 5):
            began = time.perf_counter()
            now = datetime.now(UTC)
            locked = jobs.acquire(conn, "bench", now, BATCH, timedelta(minutes=5))
            conn.rollback()
            if n >= 5:  # the first ones prepare the statement
                elapsed += time.perf_counter() - began
            assert len(locked) == BATCH
    return elapsed / runs * 1000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--others", type=int, default=20_000, help="active instances added")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    with scratch_engine(args.database_url, pool_size=jobs_bench.STARTERS + 2) as engine:
        url = engine.database.url
        jobs_bench.prepare(engine)
        due = datetime.now(UTC) + timedelta(seconds=1)
        jobs_bench.start_timers(engine, [due] * DUE)
        time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()))
        alone = acquisition_ms(url, args.runs)
        jobs_bench.start_waiting(engine, args.others)
        among = acquisition_ms(url, args.runs)
    print(
        f"one acquisition of {BATCH} of {DUE} due timers: {alone:.2f} ms alone, {among:.2f} ms "
        f"among {args.others} other active instances (ratio {among / alone:.2f}, target near 1)"
    )


if __name__ == "__main__":
    main()
