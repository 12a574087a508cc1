"""Exactly once across processes: executors in separate processes race for the same due timers,
and one of them is killed mid-run; every timer fires once, none is lost.

Each timer is followed by the handler `record`, which inserts a row into the application table
`fired` in the same transaction as the step, so `fired` counts committed firings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import TimerDefinition

ROOT = Path(__file__).resolve().parents[2]


def prepare(database_url: str, engine: Engine, count: int) -> None:
    """The `fired` table (no unique key: a duplicate would show) and `count` instances whose
    timers are all due already."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE fired (instance_id uuid NOT NULL, owner text NOT NULL, "
            "at timestamptz NOT NULL DEFAULT clock_timestamp())"
        )
    model = (
        ProcessBuilder("timed")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="date", text="${due}"))
        .service_task("record", handler="record")
        .end_event("end")
        .chain("start", "wait", "record", "end")
        .build()
    )
    engine.deploy(model)
    due = datetime.now(UTC) - timedelta(seconds=1)

    def start(numbers: range) -> None:
        for n in numbers:
            engine.start_latest("timed", {"due": due, "n": n})

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(start, (range(k, count, 4) for k in range(4))))


class Executors:
    """Executor processes started together, released together by `go()`."""

    def __init__(self, database_url: str, owners: list[str], *options: str) -> None:
        self.procs: dict[str, subprocess.Popen[str]] = {}
        for owner in owners:
            self.procs[owner] = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.jobs.executor_process",
                    database_url,
                    "--owner",
                    owner,
                    *options,
                ],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )

    def go(self) -> None:
        for proc in self.procs.values():
            assert proc.stdout is not None and proc.stdin is not None
            assert proc.stdout.readline().strip() == "ready"
        for proc in self.procs.values():
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()

    def kill(self, owner: str) -> None:
        proc = self.procs[owner]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def terminate(self) -> dict[str, int | None]:
        """SIGTERM the live ones: each finishes its job in hand and exits 0."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes: dict[str, int | None] = {}
        for owner, proc in self.procs.items():
            try:
                codes[owner] = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                codes[owner] = None
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
        return codes


@pytest.fixture
def engine_url(database_url: str) -> Iterator[tuple[Engine, str]]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine, database_url


def completed(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM process_instance WHERE state = 'Completed'").fetchone()
    assert row is not None
    return int(row[0])


def wait_for(conn: psycopg.Connection[Any], what: str, expected: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        row = conn.execute(what).fetchone()
        assert row is not None
        if int(row[0]) >= expected or time.monotonic() > deadline:
            return int(row[0])
        time.sleep(0.05)


def check_exactly_once(conn: psycopg.Connection[Any], count: int) -> dict[str, int]:
    """Every instance completed with exactly one committed firing; firings by owner."""
    assert completed(conn) == count
    assert conn.execute("SELECT count(*) FROM job").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM incident").fetchone() == (0,)
    assert conn.execute("SELECT count(*), count(DISTINCT instance_id) FROM fired").fetchone() == (
        count,
        count,
    )
    missing = conn.execute(
        "SELECT count(*) FROM process_instance p "
        "WHERE NOT EXISTS (SELECT 1 FROM fired f WHERE f.instance_id = p.id)"
    ).fetchone()
    assert missing == (0,)
    return dict(conn.execute("SELECT owner, count(*) FROM fired GROUP BY owner").fetchall())


def race(engine: Engine, database_url: str, count: int, timeout: float) -> None:
    executors = Executors(database_url, ["one", "two"])
    try:
        prepare(database_url, engine, count)
        executors.go()
        with psycopg.connect(database_url, autocommit=True) as conn:
            done = wait_for(
                conn,
                "SELECT count(*) FROM process_instance WHERE state = 'Completed'",
                count,
                timeout,
            )
            assert done == count
    finally:
        codes = executors.terminate()
    assert codes == {"one": 0, "two": 0}
    with psycopg.connect(database_url, autocommit=True) as conn:
        by_owner = check_exactly_once(conn, count)
    assert set(by_owner) == {"one", "two"}, by_owner


def test_two_executor_processes_fire_each_of_1000_timers_once(
    engine_url: tuple[Engine, str],
) -> None:
    engine, database_url = engine_url
    race(engine, database_url, 1000, timeout=60)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_two_executor_processes_fire_each_of_10000_timers_once(
    engine_url: tuple[Engine, str],
) -> None:
    engine, database_url = engine_url
    race(engine, database_url, 10_000, timeout=1500)


def victims_locks(
    conn: psycopg.Connection[Any], *, fired_at_least: int, timeout: float
) -> dict[Any, datetime]:
    """Once the victim has fired some timers, the jobs it holds locked (instance id -> lock
    expiry), looked at when it holds some."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = conn.execute("SELECT count(*) FROM fired WHERE owner = 'victim'").fetchone()
        if row is not None and row[0] >= fired_at_least:
            locked = dict(
                conn.execute(
                    "SELECT instance_id, lock_expires_at FROM job WHERE lock_owner = 'victim'"
                ).fetchall()
            )
            if locked:
                return locked
        time.sleep(0.01)
    return {}


def test_a_killed_executors_jobs_are_taken_over_after_its_locks_expire(
    engine_url: tuple[Engine, str],
) -> None:
    engine, database_url = engine_url
    count = 200
    executors = Executors(
        database_url,
        ["victim", "survivor"],
        "--lock-seconds",
        "2",
        "--batch-size",
        "20",
        "--handler-sleep",
        "0.005",
    )
    try:
        prepare(database_url, engine, count)
        executors.go()
        with psycopg.connect(database_url, autocommit=True) as conn:
            locked = victims_locks(conn, fired_at_least=20, timeout=30)
            executors.kill("victim")
            assert locked, "the victim held no job when it was killed"
            done = wait_for(
                conn,
                "SELECT count(*) FROM process_instance WHERE state = 'Completed'",
                count,
                30,
            )
            assert done == count
    finally:
        codes = executors.terminate()
    assert codes["victim"] == -signal.SIGKILL
    assert codes["survivor"] == 0
    with psycopg.connect(database_url, autocommit=True) as conn:
        by_owner = check_exactly_once(conn, count)
        assert by_owner["victim"] >= 20
        fired_locked = {
            instance_id: (owner, at)
            for instance_id, owner, at in conn.execute(
                "SELECT instance_id, owner, at FROM fired WHERE instance_id = ANY(%s)",
                (list(locked),),
            )
        }
    assert set(fired_locked) == set(locked)
    # The victim may have committed a job or two between the look and the kill; the rest waited
    # for its locks to expire and went to the survivor.
    taken_over = {i: at for i, (owner, at) in fired_locked.items() if owner == "survivor"}
    assert len(taken_over) >= len(locked) // 2
    assert all(at > locked[instance_id] for instance_id, at in taken_over.items())
