"""Timer lateness on the system clock: how long after its due time a timer fires.

(a) 5,000 timers due within the same second, fired by two executor processes;
(b) single timers, one at a time, fired by one executor process.
Beside (a) it prints the CPU the executors and the PostgreSQL server spent per timer: on a shared
machine lateness swings with the neighbours' load, the CPU per timer much less.
Lateness is the database's clock_timestamp() in the step that fires the timer (the handler after
the timer catch event inserts it, in the firing transaction) minus the timer's due time.

    python -m bench.jobs_bench [--timers 5000] [--executors 2] [--database-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.database import install_sigterm_exit
from engine.handlers import TaskContext
from engine.jobs import JobExecutor
from engine.model import TimerDefinition

ROOT = Path(__file__).resolve().parents[1]
STARTERS = 4


def record(ctx: TaskContext) -> None:
    ctx.connection.execute(
        "INSERT INTO bench_timer_fired (instance_id, due) VALUES (%s, %s)",
        (ctx.instance_id, ctx.get("due")),
    )


def executor_process(url: str, threads: int, batch: int) -> None:
    """The child: run jobs on `url` until SIGTERM; says "ready" on its output once it can."""
    install_sigterm_exit()
    with Engine(url, migrate=False, pool_size=threads + 3) as engine:
        engine.register_handler("bench_record", record)
        print("ready", flush=True)
        with contextlib.suppress(SystemExit):
            JobExecutor(engine, batch_size=batch, threads=threads).run_forever()


def prepare(engine: Engine) -> None:
    with engine.connection() as conn:
        conn.execute("DROP TABLE IF EXISTS bench_timer_fired")
        conn.execute(
            "CREATE TABLE bench_timer_fired (instance_id uuid PRIMARY KEY, due timestamptz, "
            "fired_at timestamptz NOT NULL DEFAULT clock_timestamp())"
        )
    model = (
        ProcessBuilder("bench-timer")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="date", text="${due}"))
        .service_task("record", handler="bench_record")
        .end_event("end")
        .chain("start", "wait", "record", "end")
        .build()
    )
    engine.deploy(model)


def start_executors(
    url: str, count: int, threads: int = 1, batch: int = 64
) -> list[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "bench.jobs_bench", "--executor", url]
    command += ["--threads", str(threads), "--batch", str(batch)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE) for _ in range(count)
    ]
    # Timers are created only once every executor runs: a slow start-up is not lateness.
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":
            stop_executors(procs)
            raise RuntimeError(f"executor process {proc.pid} exited before it was ready")
    return procs


def stop_executors(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def start_timers(engine: Engine, dues: list[datetime]) -> None:
    def start(chunk: list[datetime]) -> None:
        for due in chunk:
            engine.start_latest("bench-timer", {"due": due})

    with ThreadPoolExecutor(STARTERS) as pool:
        list(pool.map(start, (dues[k::STARTERS] for k in range(STARTERS))))


def wait_fired(engine: Engine, count: int, timeout: float) -> list[tuple[datetime, datetime]]:
    deadline = time.monotonic() + timeout
    while True:
        with engine.connection() as conn:
            row = conn.execute("SELECT count(*) FROM bench_timer_fired").fetchone()
            if (row is not None and row[0] >= count) or time.monotonic() > deadline:
                rows: list[Any] = conn.execute(
                    "SELECT due, fired_at FROM bench_timer_fired"
                ).fetchall()
                return [(due, fired) for due, fired in rows]
        time.sleep(0.05)


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU that the processes `pids` used so far."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    return total


def server_pids(engine: Engine) -> list[int]:
    """The processes of the PostgreSQL server `engine` uses, when it runs on this machine: the
    parent of one of its backends and all that parent's children (other servers left out)."""
    with engine.connection() as conn:
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    try:
        server = psutil.Process(row[0]).parent()
        if server is None or server.name() != "postgres":
            return []
        return [server.pid, *(child.pid for child in server.children())]
    except psutil.Error:  # a server elsewhere: its CPU is not ours to read
        return []


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def start_waiting(engine: Engine, count: int) -> None:
    """Start `count` instances of a process that waits for a person (no job of theirs is due)."""
    engine.deploy(
        ProcessBuilder("bench-waiting")
        .start_event("start")
        .user_task("wait")
        .chain("start", "wait")
        .build()
    )

    def start(n: int) -> None:
        for _ in range(n):
            engine.start_latest("bench-waiting")

    with ThreadPoolExecutor(STARTERS) as pool:
        list(pool.map(start, [count // STARTERS] * STARTERS))


def creation_seconds(engine: Engine, sample: int = 200) -> float:
    """Seconds it takes to start one instance, measured on a sample: to pick a due second that
    comes after all timers exist."""
    began = time.monotonic()
    start_waiting(engine, sample)
    return (time.monotonic() - began) / sample


def many_in_one_second(
    engine: Engine, url: str, timers: int, executors: int, threads: int, batch: int
) -> dict[str, float]:
    per_timer = creation_seconds(engine)
    due_at = datetime.now(UTC) + timedelta(seconds=per_timer * timers * 2 + 5)
    dues = [due_at + timedelta(seconds=n / timers) for n in range(timers)]
    procs = start_executors(url, executors, threads, batch)
    try:
        start_timers(engine, dues)
        created = datetime.now(UTC)
        executor_pids, postgres_pids = [p.pid for p in procs], server_pids(engine)
        cpu_before = cpu_seconds(executor_pids), cpu_seconds(postgres_pids)
        fired = wait_fired(engine, timers, timeout=300)
        cpu_after = cpu_seconds(executor_pids), cpu_seconds(postgres_pids)
    finally:
        stop_executors(procs)
    lateness = [(f - d).total_seconds() for d, f in fired if d >= due_at]
    last = max(f for _, f in fired)
    return {
        "timers": len(lateness),
        "created_late_s": max(0.0, (created - due_at).total_seconds()),
        "first_ms": min(lateness) * 1000,
        "p50_ms": percentile(lateness, 50) * 1000,
        "p99_ms": percentile(lateness, 99) * 1000,
        "max_ms": max(lateness) * 1000,
        "per_s": len(lateness) / max((last - due_at).total_seconds(), 1e-9),
        "executor_us": (cpu_after[0] - cpu_before[0]) / len(fired) * 1e6,
        "server_us": (cpu_after[1] - cpu_before[1]) / len(fired) * 1e6,
    }


def single_timers(engine: Engine, url: str, runs: int) -> dict[str, float]:
    with engine.connection() as conn:
        conn.execute("TRUNCATE bench_timer_fired")
    procs = start_executors(url, 1)
    lateness: list[float] = []
    try:
        time.sleep(1.0)  # the executor is up and idle
        for n in range(runs):
            due = datetime.now(UTC) + timedelta(seconds=0.3)
            engine.start_latest("bench-timer", {"due": due})
            fired = wait_fired(engine, n + 1, timeout=30)
            lateness.append(max(f - d for d, f in fired if d == due).total_seconds())
    finally:
        stop_executors(procs)
    return {"runs": runs, "p50_ms": statistics.median(lateness) * 1000}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timers", type=int, default=5000)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="threads per executor process")
    parser.add_argument(
        "--batch", type=int, default=JobExecutor.batch_size, help="jobs per acquisition"
    )
    parser.add_argument("--single-runs", type=int, default=20)
    parser.add_argument("--database-url")
    parser.add_argument("--executor", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.executor:
        executor_process(args.executor, args.threads, args.batch)
        return
    with scratch_engine(args.database_url, pool_size=STARTERS + 2) as engine:
        url = engine.database.url
        prepare(engine)
        many = many_in_one_second(
            engine, url, args.timers, args.executors, args.threads, args.batch
        )
        single = single_timers(engine, url, args.single_runs)
    print(
        f"(a) {many['timers']:.0f} timers due within one second, {args.executors} executor "
        f"processes x {args.threads} threads, {args.batch} jobs per acquisition: "
        f"lateness min {many['first_ms']:.0f} ms, p50 {many['p50_ms']:.0f} ms, "
        f"p99 {many['p99_ms']:.0f} ms, "
        f"max {many['max_ms']:.0f} ms ({many['per_s']:.0f} timers/s)"
    )
    print(
        f"    CPU per timer from the end of their creation: executors "
        f"{many['executor_us']:.0f} us, PostgreSQL {many['server_us']:.0f} us "
        "(the machine's cores bound the burst's rate)"
    )
    if many["created_late_s"] > 0:
        print(
            f"    creating the timers ended {many['created_late_s']:.1f} s after the due second: "
            "the figures include that"
        )
    print(
        f"(b) single timer, one executor process: lateness p50 {single['p50_ms']:.1f} ms "
        f"over {single['runs']:.0f} runs"
    )


if __name__ == "__main__":
    main()
