"""Timer lateness on the system clock: how long after its due time a timer fires.

(a) 5,000 timers due within the same second, fired by two executor processes, twice:
    timers alone (start -> timer -> end), and timers whose next step runs a Python handler that
    inserts a row (start -> timer -> handler -> end), whose statement and step cost more CPU than
    the timer itself;
(b) single timers, one at a time, fired by one executor process.
Beside (a) it prints the CPU the executors and the PostgreSQL server spent per timer: on a shared
machine lateness swings with the neighbours' load, the CPU per timer much less.
In (a) lateness is the time an outbox tail (what the console's live view reads) first shows the
instance completed, minus the timer's due time: it counts the firing transaction's commit, and
the tail's polling interval. For the handler run, and in (b), it also reads the database's
clock_timestamp() in the handler, which runs in the firing transaction before it commits.

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
from uuid import UUID

import psutil
import psycopg

from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.db.database import install_sigterm_exit
from engine.db.outbox import OutboxTail, last_seq
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel, TimerDefinition

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


# The processes of (a): the timer alone, and the timer followed by the recording handler.
ALONE = "bench-timer-alone"
WITH_HANDLER = "bench-timer"
# How often the observer of (a) reads the outbox.
OBSERVE_SECONDS = 0.02


def prepare(engine: Engine) -> None:
    with engine.connection() as conn:
        conn.execute("DROP TABLE IF EXISTS bench_timer_fired")
        conn.execute(
            "CREATE TABLE bench_timer_fired (instance_id uuid PRIMARY KEY, due timestamptz, "
            "fired_at timestamptz NOT NULL DEFAULT clock_timestamp())"
        )
    for key in (ALONE, WITH_HANDLER):
        engine.deploy(timer_process(key, handler=key == WITH_HANDLER))


def timer_process(key: str, *, handler: bool) -> ProcessModel:
    """start -> wait (a timer at the instance's `due`) [-> record (the handler)] -> end."""
    builder = (
        ProcessBuilder(key)
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="date", text="${due}"))
    )
    if handler:
        builder.service_task("record", handler="bench_record")
    steps = ["start", "wait", *(["record"] if handler else []), "end"]
    return builder.end_event("end").chain(*steps).build()


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


def start_timers(
    engine: Engine, dues: list[datetime], key: str = WITH_HANDLER
) -> dict[UUID, datetime]:
    """Start one instance of process `key` per due time; each instance's due time."""

    def start(chunk: list[datetime]) -> dict[UUID, datetime]:
        return {engine.start_latest(key, {"due": due}).id: due for due in chunk}

    with ThreadPoolExecutor(STARTERS) as pool:
        parts = pool.map(start, (dues[k::STARTERS] for k in range(STARTERS)))
        return {instance: due for part in parts for instance, due in part.items()}


def observe_completions(
    engine: Engine, after: int, count: int, timeout: float
) -> dict[UUID, datetime]:
    """When an outbox tail that starts after seq `after` first shows each instance completed,
    until `count` have or `timeout` seconds pass."""
    seen: dict[UUID, datetime] = {}
    deadline = time.monotonic() + timeout
    with psycopg.connect(engine.database.url, autocommit=True) as conn:
        tail = OutboxTail(conn, after=after)
        while len(seen) < count and time.monotonic() < deadline:
            rows = tail.poll()
            now = datetime.now(UTC)
            for row in rows:
                if row.event == "instance.completed":
                    seen.setdefault(row.instance_id, now)
            if not tail.behind:
                time.sleep(OBSERVE_SECONDS)
    return seen


def fired_rows(engine: Engine) -> list[tuple[datetime, datetime]]:
    """(due, fired_at) of every timer the handler recorded."""
    with engine.connection() as conn:
        rows: list[Any] = conn.execute("SELECT due, fired_at FROM bench_timer_fired").fetchall()
    return [(due, fired) for due, fired in rows]


def wait_fired(engine: Engine, count: int, timeout: float) -> list[tuple[datetime, datetime]]:
    deadline = time.monotonic() + timeout
    while True:
        with engine.connection() as conn:
            row = conn.execute("SELECT count(*) FROM bench_timer_fired").fetchone()
        if (row is not None and row[0] >= count) or time.monotonic() > deadline:
            return fired_rows(engine)
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
    engine: Engine, url: str, key: str, timers: int, executors: int, threads: int, batch: int
) -> dict[str, float]:
    per_timer = creation_seconds(engine)
    due_at = datetime.now(UTC) + timedelta(seconds=per_timer * timers * 2 + 5)
    dues = [due_at + timedelta(seconds=n / timers) for n in range(timers)]
    procs = start_executors(url, executors, threads, batch)
    try:
        instances = start_timers(engine, dues, key)
        created = datetime.now(UTC)
        with engine.connection() as conn:
            after = last_seq(conn)
        executor_pids, postgres_pids = [p.pid for p in procs], server_pids(engine)
        cpu_before = cpu_seconds(executor_pids), cpu_seconds(postgres_pids)
        observed = observe_completions(engine, after, timers, timeout=300)
        cpu_after = cpu_seconds(executor_pids), cpu_seconds(postgres_pids)
    finally:
        stop_executors(procs)
    lateness = [(seen - instances[instance]).total_seconds() for instance, seen in observed.items()]
    last = max(observed.values())
    figures = {
        "timers": len(lateness),
        "created_late_s": max(0.0, (created - due_at).total_seconds()),
        "first_ms": min(lateness) * 1000,
        "p50_ms": percentile(lateness, 50) * 1000,
        "p99_ms": percentile(lateness, 99) * 1000,
        "max_ms": max(lateness) * 1000,
        "per_s": len(lateness) / max((last - due_at).total_seconds(), 1e-9),
        "executor_us": (cpu_after[0] - cpu_before[0]) / len(lateness) * 1e6,
        "server_us": (cpu_after[1] - cpu_before[1]) / len(lateness) * 1e6,
    }
    if key == WITH_HANDLER:
        in_handler = [(f - d).total_seconds() for d, f in fired_rows(engine) if d >= due_at]
        figures["handler_p50_ms"] = percentile(in_handler, 50) * 1000
        figures["handler_p99_ms"] = percentile(in_handler, 99) * 1000
    return figures


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
        bursts = {
            key: many_in_one_second(
                engine, url, key, args.timers, args.executors, args.threads, args.batch
            )
            for key in (ALONE, WITH_HANDLER)
        }
        single = single_timers(engine, url, args.single_runs)
    print(
        f"(a) {args.timers} timers due within one second, {args.executors} executor processes x "
        f"{args.threads} threads, {args.batch} jobs per acquisition; lateness as an outbox tail "
        f"polled every {OBSERVE_SECONDS * 1000:.0f} ms sees the instance completed "
        "(target p99 < 1 s):"
    )
    for key, label in ((ALONE, "timers alone"), (WITH_HANDLER, "then a handler")):
        many = bursts[key]
        print(
            f"    {label:15s} min {many['first_ms']:.0f} ms, p50 {many['p50_ms']:.0f} ms, "
            f"p99 {many['p99_ms']:.0f} ms, max {many['max_ms']:.0f} ms "
            f"({many['per_s']:.0f} timers/s); CPU per timer: executors "
            f"{many['executor_us']:.0f} us, PostgreSQL {many['server_us']:.0f} us"
        )
        if "handler_p99_ms" in many:
            print(
                f"    {'':15s} as the handler's clock reads it: p50 {many['handler_p50_ms']:.0f} "
                f"ms, p99 {many['handler_p99_ms']:.0f} ms"
            )
        if many["timers"] < args.timers:
            print(f"    {'':15s} only {many['timers']:.0f} completed within the timeout")
        if many["created_late_s"] > 0:
            print(
                f"    {'':15s} creating the timers ended {many['created_late_s']:.1f} s after "
                "the due second: the figures include that"
            )
    print(
        f"(b) single timer, one executor process: lateness p50 {single['p50_ms']:.1f} ms "
        f"over {single['runs']:.0f} runs"
    )


if __name__ == "__main__":
    main()
