"""The embedded server's watchdog: after the postmaster is SIGKILLed, the processes that hold the
server start it again, exactly one postmaster runs, and the data is still there."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from engine.db.database import Database, postmaster_pid
from tests.integration.test_database import is_running, start_waiting


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    home = tmp_path / "home"
    yield home
    pid = postmaster_pid(home / "pgdata")
    if pid is not None and is_running(pid):
        os.kill(pid, signal.SIGINT)
        psutil.wait_procs([psutil.Process(pid)], timeout=10)


def postmasters(pgdata: Path) -> list[psutil.Process]:
    """The postgres processes started with `-D <pgdata>` that are alive."""
    found = []
    for proc in psutil.process_iter(attrs=("cmdline", "status")):
        cmdline = proc.info["cmdline"] or []
        alive = proc.info["status"] != psutil.STATUS_ZOMBIE
        if alive and str(pgdata) in cmdline and "-D" in cmdline:
            found.append(proc)
    return found


def wait_for_connection(url: str, timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            with psycopg.connect(url, connect_timeout=1) as conn:
                conn.execute("SELECT 1")
            return time.monotonic() - started
        except psycopg.OperationalError:
            time.sleep(0.05)
    raise AssertionError(f"the database did not come back within {timeout}s")


def test_a_killed_postmaster_is_started_again_by_exactly_one_process(home: Path) -> None:
    child = start_waiting(home, "plain")
    try:
        with Database.open(home=home) as db:
            assert db.pgdata is not None
            with psycopg.connect(db.url, autocommit=True) as conn:
                conn.execute("CREATE TABLE kept (note text)")
                conn.execute("INSERT INTO kept VALUES ('before the kill')")
            first = postmaster_pid(db.pgdata)
            assert first is not None
            os.kill(first, signal.SIGKILL)
            took = wait_for_connection(db.url, 15)
            print(f"postmaster back after {took:.2f}s")
            second = postmaster_pid(db.pgdata)
            assert second is not None and second != first
            time.sleep(1.5)  # both watchdogs looked again: neither starts a second postmaster
            assert [proc.pid for proc in postmasters(db.pgdata)] == [postmaster_pid(db.pgdata)]
            with psycopg.connect(db.url) as conn:
                row = conn.execute("SELECT note FROM kept").fetchone()
            assert row == ("before the kill",)
            assert child.poll() is None
    finally:
        child.kill()
        child.communicate(timeout=10)


def test_the_watchdog_stops_with_the_last_handle(home: Path) -> None:
    db = Database.open(home=home)
    assert db.pgdata is not None
    pgdata = db.pgdata
    db.close()
    assert postmaster_pid(pgdata) is None
    time.sleep(1.2)  # a watchdog still running would have started it again by now
    assert postmaster_pid(pgdata) is None
    assert postmasters(pgdata) == []
