"""Graceful shutdown, with real processes: on SIGTERM `interlock serve`, `interlock jobs` and
`interlock worker` stop taking work, finish what is in flight, and exit 0.

- serve: a long-polling fetch ends empty and locks nothing committed after the signal, an event
  stream ends with `event: reconnect` carrying the cursor as its id, and a command waiting for
  an instance lock when the signal came still commits; the embedded server's handle is released;
- jobs: the job whose handler is running commits, the jobs acquired with it are given back;
- worker: the task whose handler is running is completed; a long poll ends at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.states import InstanceState
from tests.server import free_port, live_server
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
GRACE = "10"


def spawn(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "INTERLOCK_HOME")}
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={
            **base,
            "PYTHONPATH": str(ROOT),
            "INTERLOCK_SHUTDOWN_GRACE_SECONDS": GRACE,
            **env,
        },
    )


def terminate(proc: subprocess.Popen[str], timeout: float = 20) -> tuple[int | None, str]:
    """SIGTERM `proc` (if still running) and wait: its exit code (None: had to be killed)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
        return None, stderr
    return proc.returncode, stderr


def read_until(proc: subprocess.Popen[str], text: str) -> None:
    """Read `proc`'s stderr up to the first line that contains `text`."""
    assert proc.stderr is not None
    while text not in (line := proc.stderr.readline()):
        assert line, f"the process ended before it logged {text!r}"


@contextmanager
def serving(env: dict[str, str], *options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    port = free_port()
    proc = spawn(env, "serve", "--no-auth", "--port", str(port), *options)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"serve exited {proc.returncode}: {proc.communicate()[1]}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("serve did not answer /health")
            time.sleep(0.1)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def external_task_model(key: str, topic: str) -> Any:
    return (
        ProcessBuilder(key)
        .start_event("start")
        .service_task("work", topic=topic)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )


class Background(threading.Thread):
    """A call in a thread; its result (or error) and when it ended."""

    def __init__(self, call: Any) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.result: Any = None
        self.error: BaseException | None = None
        self.ended_at = 0.0

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as exc:  # reported by the test
            self.error = exc
        self.ended_at = time.monotonic()


def read_stream(
    url: str, ready: threading.Event, headers: dict[str, str] | None = None
) -> list[str]:
    """The lines of /stream until it ends (or, with `headers`, until it is ready)."""
    lines: list[str] = []
    with httpx.stream(
        "GET", f"{url}/stream", headers=headers, timeout=httpx.Timeout(30, read=30)
    ) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            lines.append(line)
            if line == "event: ready":
                ready.set()
                if headers:
                    break
    return lines


def events_of(lines: list[str]) -> list[tuple[int, str, dict[str, Any]]]:
    """(id, event, data) of each outbox event (an event with an id, but not `ready`)."""
    found = []
    for n, line in enumerate(lines):
        if line.startswith("id: ") and lines[n + 1].startswith("event: "):
            if lines[n + 1] == "event: ready":
                continue
            data = next(x for x in lines[n + 1 :] if x.startswith("data: "))
            found.append(
                (
                    int(line.removeprefix("id: ")),
                    lines[n + 1].removeprefix("event: "),
                    json.loads(data.removeprefix("data: ")),
                )
            )
    return found


def waiting_on_a_lock(database_url: str) -> bool:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return row is not None and row[0] > 0


def test_serve_drains_on_sigterm(database_url: str) -> None:
    with Engine(database_url, migrate=False, pool_size=2) as engine:
        engine.deploy(external_task_model("drain", "drain"))
        engine.deploy(external_task_model("late", "late"))
        held = engine.start_latest("drain")
        (task,) = engine.fetch_and_lock("tester", {"drain": 60_000})
        with serving({"DATABASE_URL": database_url}, "--no-jobs") as (proc, url):
            ready = threading.Event()
            stream = Background(lambda: read_stream(url, ready))
            stream.start()
            poll = Background(
                lambda: httpx.post(
                    f"{url}/engine-rest/external-task/fetchAndLock",
                    json={
                        "workerId": "poller",
                        "maxTasks": 5,
                        "asyncResponseTimeout": 30_000,
                        "topics": [{"topicName": "late", "lockDuration": 60_000}],
                    },
                    timeout=40,
                )
            )
            poll.start()
            assert ready.wait(60), "the event stream never became ready"
            with psycopg.connect(database_url) as lock:
                lock.execute("SELECT id FROM process_instance WHERE id = %s FOR UPDATE", (held.id,))
                complete = Background(
                    lambda: httpx.post(
                        f"{url}/engine-rest/external-task/{task['id']}/complete",
                        json={"workerId": "tester"},
                        timeout=40,
                    )
                )
                complete.start()
                wait_until(lambda: waiting_on_a_lock(database_url), what="a blocked command")
                time.sleep(0.3)  # the long poll is waiting by now
                signalled = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                time.sleep(0.5)
                # Work that appears while the server drains is not locked by its long poll.
                late = engine.start_latest("late")
                time.sleep(1.0)
                lock.rollback()
            code, stderr = terminate(proc)
            for thread in (stream, poll, complete):
                thread.join(10)
                assert thread.error is None, (thread.error, stderr)
        assert code == 0, stderr

        # The command in flight committed.
        assert complete.result.status_code == 204, complete.result.text
        assert held.wait_completion(5) is InstanceState.COMPLETED
        # The long poll ended empty, soon, and left the late task unlocked.
        assert poll.result.status_code == 200
        assert poll.result.json() == []
        assert poll.ended_at - signalled < 5.0
        with engine.connection() as conn:
            rows = conn.execute(
                "SELECT worker_id, lock_expires_at FROM external_task WHERE instance_id = %s",
                (late.id,),
            ).fetchall()
        assert rows == [(None, None)]
        # The stream ended with `reconnect`, its id the cursor the client resumes after.
        lines = stream.result
        assert "event: reconnect" in lines, lines
        at = lines.index("event: reconnect")
        ready_at = lines.index("event: ready")
        assert lines[at - 2 : at] == [lines[ready_at - 1], "retry: 1000"], lines
        resume = int(lines[ready_at - 1].removeprefix("id: "))
        assert json.loads(lines[at + 1].removeprefix("data: ")) == {
            "after": resume,
            "reason": "shutdown",
        }
        # Reconnected elsewhere with that id, the client gets what it missed meanwhile (the
        # held instance's completion, committed while the first server drained), once.
        with live_server(database_url, auth=False, run_jobs=False) as other:
            missed = events_of(
                read_stream(other.url, threading.Event(), {"Last-Event-ID": str(resume)})
            )
        ids = [seq for seq, _, _ in missed]
        assert ids == sorted(set(ids)) and all(seq > resume for seq in ids), missed
        assert ("instance.completed", str(held.id)) in [
            (event, data.get("instance_id")) for _, event, data in missed
        ], missed


def test_serve_exits_0_and_releases_the_embedded_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pgdata = home / "pgdata"
    with serving({"INTERLOCK_HOME": str(home)}) as (proc, _):
        handles = json.loads((pgdata / ".handle_pids.json").read_text())
        assert proc.pid in handles
        assert (pgdata / "postmaster.pid").exists()
        code, stderr = terminate(proc)
    assert code == 0, stderr
    # The last user let go: the pid is gone from pgserver's users and the server stopped.
    assert json.loads((pgdata / ".handle_pids.json").read_text() or "[]") == []
    assert not (pgdata / "postmaster.pid").exists()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=2) as running:
        yield running


def test_jobs_finishes_the_handler_in_hand_and_gives_back_the_rest(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    engine.deploy(
        ProcessBuilder("slow-job")
        .start_event("start")
        .service_task("slow", handler="slow", async_before=True)
        .end_event("end")
        .chain("start", "slow", "end")
        .build()
    )
    instances = [engine.start_latest("slow-job") for _ in range(3)]
    marker = tmp_path / "started"
    proc = spawn(
        {"DATABASE_URL": database_url, "INTERLOCK_TEST_MARKER": str(marker)},
        "jobs",
        "--handlers",
        "tests.chaos.slow_handlers",
    )
    try:
        wait_until(marker.exists, what="the handler to start")
    finally:
        code, stderr = terminate(proc)
    assert code == 0, stderr
    states = [instance.state for instance in instances]
    assert states.count(InstanceState.COMPLETED) == 1, stderr
    done = next(i for i in instances if i.state is InstanceState.COMPLETED)
    assert done.variables() == {"finished_by": "interlock jobs"}
    with engine.connection() as conn:
        left = conn.execute("SELECT lock_owner, lock_expires_at FROM job").fetchall()
    assert left == [(None, None), (None, None)]


def test_worker_finishes_the_task_in_hand_and_ends_a_long_poll(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    engine.deploy(external_task_model("slow-task", "slow"))
    marker = tmp_path / "started"
    env = {"DATABASE_URL": database_url, "INTERLOCK_TEST_MARKER": str(marker)}

    proc = spawn(env, "worker", "tests.chaos.slow_worker")
    instance = engine.start_latest("slow-task")
    try:
        wait_until(marker.exists, what="the handler to start")
    finally:
        code, stderr = terminate(proc)
    assert code == 0, stderr
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"finished_by": "interlock worker"}

    # An idle worker is in a 20 s long poll: SIGTERM ends it at once, and a second SIGTERM
    # while it stops changes nothing.
    proc = spawn(env, "worker", "tests.chaos.slow_worker")
    # It logs the topics it handles once its signal handlers are in place.
    read_until(proc, " handles slow")
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    code, stderr = terminate(proc)
    assert code == 0, stderr
    assert time.monotonic() - signalled < 8.0
