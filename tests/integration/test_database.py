"""Resolving the database, and the embedded server's lifecycle across real processes.

The embedded server must stop when its last user goes away, whether that user returns, exits,
is sent SIGTERM (with `install_sigterm_exit`), or was killed outright earlier (the next user prunes
the dead pid and stops the server when it closes).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from engine.db.database import (
    Database,
    connect_url_for,
    database_name,
    normalize_url,
    sqlalchemy_url_for,
)

REPO = Path(__file__).resolve().parents[2]

OPEN_AND_WAIT = """
import sys, time
from pathlib import Path
from engine.db.database import Database, install_sigterm_exit
if sys.argv[2] == "handle-sigterm":
    install_sigterm_exit()
with Database.open(home=Path(sys.argv[1])):
    print("ready", flush=True)
    time.sleep(60)
"""

WRITE_THEN_CLOSE = """
import sys
from pathlib import Path
import psycopg
from engine.db.database import Database
with Database.open(home=Path(sys.argv[1])) as db, psycopg.connect(db.url) as conn:
    conn.execute("CREATE TABLE kept (note text)")
    conn.execute("INSERT INTO kept VALUES ('written in run 1')")
"""

READ_THEN_EXIT = """
import sys
from pathlib import Path
import psycopg
from engine.db.database import Database
db = Database.open(home=Path(sys.argv[1]))
with psycopg.connect(db.url) as conn:
    print(conn.execute("SELECT note FROM kept").fetchone()[0])
# No close(): pgserver's atexit hook lets go of the server when the interpreter exits.
"""


def python(script: str, *args: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(script), *args]


def child_env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO)
    return env


def run(script: str, home: Path) -> str:
    done = subprocess.run(
        python(script, str(home)),
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def start_waiting(home: Path, mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        python(OPEN_AND_WAIT, str(home), mode),
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line.strip() != "ready":
        child.kill()
        _, stderr = child.communicate(timeout=10)
        pytest.fail(f"child did not open the database: {line!r} {stderr}")
    return child


def postmaster_pid(pgdata: Path) -> int | None:
    try:
        return int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (FileNotFoundError, IndexError, ValueError):
        return None


def is_running(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def server_running(pgdata: Path) -> bool:
    pid = postmaster_pid(pgdata)
    return pid is not None and is_running(pid)


def handle_pids(pgdata: Path) -> list[int]:
    text = (pgdata / ".handle_pids.json").read_text().strip()
    return list(json.loads(text)) if text else []


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An INTERLOCK_HOME of the test's own; a server a failed test left running is shut down."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    home = tmp_path / "home"
    yield home
    pid = postmaster_pid(home / "pgdata")
    if pid is not None and is_running(pid):
        os.kill(pid, signal.SIGINT)  # postgres' fast shutdown
        psutil.wait_procs([psutil.Process(pid)], timeout=10)


def test_data_persists_and_the_server_stops_after_each_run(home: Path) -> None:
    pgdata = home / "pgdata"

    run(WRITE_THEN_CLOSE, home)

    assert not server_running(pgdata)
    assert handle_pids(pgdata) == []

    assert run(READ_THEN_EXIT, home).strip() == "written in run 1"

    assert not server_running(pgdata)
    assert handle_pids(pgdata) == []


def test_sigterm_with_the_handler_installed_releases_the_server(home: Path) -> None:
    child = start_waiting(home, "handle-sigterm")
    assert server_running(home / "pgdata")

    child.send_signal(signal.SIGTERM)

    assert child.wait(timeout=30) == 0
    child.communicate()
    assert not server_running(home / "pgdata")
    assert handle_pids(home / "pgdata") == []


def test_after_sigkill_the_next_user_prunes_the_dead_pid_and_stops_the_server(
    home: Path,
) -> None:
    pgdata = home / "pgdata"
    child = start_waiting(home, "default-sigterm")
    child.kill()
    child.communicate(timeout=10)
    assert server_running(pgdata), "the killed process could not stop the server"
    assert handle_pids(pgdata) == [child.pid]

    db = Database.open(home=home)
    try:
        assert handle_pids(pgdata) == [os.getpid()]
        with psycopg.connect(db.url) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("interlock",)
    finally:
        db.close()

    assert not server_running(pgdata)
    assert handle_pids(pgdata) == []


def test_the_last_of_two_processes_stops_the_server(home: Path) -> None:
    pgdata = home / "pgdata"
    child = start_waiting(home, "handle-sigterm")

    with Database.open(home=home) as db:
        assert sorted(handle_pids(pgdata)) == sorted([child.pid, os.getpid()])
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=30) == 0
        child.communicate()

        assert server_running(pgdata)
        with psycopg.connect(db.url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)

    assert not server_running(pgdata)


def test_handles_in_one_process_are_counted(home: Path) -> None:
    pgdata = home / "pgdata"
    first = Database.open(home=home)
    second = Database.open(home=home)
    assert first.url == second.url
    assert first.embedded and first.pgdata == pgdata

    first.close()
    first.close()
    assert server_running(pgdata)
    with psycopg.connect(second.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)

    second.close()
    assert not server_running(pgdata)

    with Database.open(home=home) as again, psycopg.connect(again.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert not server_running(pgdata)


def test_interlock_home_selects_the_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_HOME", str(home))

    with Database.open() as db:
        assert db.pgdata == home.resolve() / "pgdata"
        assert database_name(db.url) == "interlock"


def test_a_url_uses_that_server_and_starts_nothing(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    plus = database_url.replace("postgresql://", "postgresql+psycopg://", 1)

    with Database.open(plus) as db:
        assert db.url == database_url
        assert not db.embedded and db.pgdata is None
        with psycopg.connect(db.url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)

    monkeypatch.setenv("DATABASE_URL", plus)
    with Database.open() as db:
        assert db.url == database_url


@pytest.mark.parametrize(
    ("given", "libpq"),
    [
        ("postgresql://u:p@db.example:5433/app", "postgresql://u:p@db.example:5433/app"),
        ("postgresql+psycopg://u@/app?host=/tmp/x", "postgresql://u@/app?host=/tmp/x"),
        ("postgres://u@h/app?sslmode=require", "postgresql://u@h/app?sslmode=require"),
    ],
)
def test_urls_are_normalised_to_libpq(given: str, libpq: str) -> None:
    assert normalize_url(given) == libpq
    assert sqlalchemy_url_for(given) == libpq.replace("postgresql://", "postgresql+psycopg://")


@pytest.mark.parametrize("bad", ["mysql://u@h/db", "sqlite:///x.db", "host=/tmp dbname=x"])
def test_other_urls_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(bad)


def test_passwords_are_not_echoed_in_errors() -> None:
    with pytest.raises(ValueError) as raised:
        normalize_url("mysql://user:secret@h/db")
    assert "secret" not in str(raised.value)


def test_connect_url_for_swaps_only_the_database() -> None:
    url = "postgresql://postgres@/interlock?host=/tmp/a%20b/pgdata"

    other = connect_url_for(url, "test_1")

    assert other == "postgresql://postgres@/test_1?host=/tmp/a%20b/pgdata"
    assert database_name(other) == "test_1"
    assert connect_url_for("postgresql+psycopg://h/x", "y") == "postgresql+psycopg://h/y"
