"""SIGKILL a process mid-run: every instance is either untouched or advanced by whole commands."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from engine.api import Engine
from engine.states import InstanceState
from tests.engine.crash_worker import register

ROOT = Path(__file__).resolve().parents[2]
COMPLETED_PATHS = {
    ("start", "prepare", "review", "decide", "book", "approved"),
    ("start", "prepare", "review", "decide", "rejected"),
}


def run_and_kill(
    database_url: str, seconds: float, module: str = "tests.engine.crash_worker"
) -> None:
    """Run the worker `module` on the database until it says it is ready, let it work for
    `seconds`, then kill it with SIGKILL."""
    worker = subprocess.Popen(
        [sys.executable, "-m", module, database_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    assert worker.stdout.readline().strip() == b"ready"
    time.sleep(seconds)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    worker.stdout.close()


def check_consistent(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Every instance is in one of the states a whole number of commands leaves it in."""
    states: dict[str, int] = {}
    instances = conn.execute("SELECT id, state FROM process_instance").fetchall()
    for instance_id, state in instances:
        states[state] = states.get(state, 0) + 1
        visits = conn.execute(
            "SELECT node_id, state FROM history WHERE instance_id = %s ORDER BY started_at, id",
            (instance_id,),
        ).fetchall()
        live = conn.execute(
            "SELECT node_id, state FROM token "
            "WHERE instance_id = %s AND state NOT IN ('Completed', 'Terminated')",
            (instance_id,),
        ).fetchall()
        tasks = conn.execute(
            "SELECT state FROM user_task WHERE instance_id = %s", (instance_id,)
        ).fetchall()
        names = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM variable WHERE instance_id = %s", (instance_id,)
            )
        }
        events = [
            row[0]
            for row in conn.execute(
                "SELECT event FROM outbox_event WHERE instance_id = %s ORDER BY seq", (instance_id,)
            )
        ]
        if state == "Active":
            assert [v[0] for v in visits] == ["start", "prepare", "review"], visits
            assert [v[1] for v in visits] == ["Completed", "Completed", "Active"]
            assert live == [("review", "Waiting")]
            assert tasks == [("Open",)]
            assert names == {"n", "amount", "prepared"}
            assert events.count("instance.completed") == 0
        else:
            assert state == "Completed", state
            path = tuple(v[0] for v in visits)
            assert path in COMPLETED_PATHS, path
            assert all(v[1] == "Completed" for v in visits)
            assert live == [] and tasks == [("Completed",)]
            assert {"n", "amount", "prepared", "approved"} <= names
            assert ("booked" in names) == ("book" in path)
            assert events.count("instance.completed") == 1
        assert events.count("instance.started") == 1
        assert len([e for e in events if e.startswith("visit.")]) >= len(visits)
    orphans = conn.execute(
        "SELECT count(*) FROM outbox_event o WHERE NOT EXISTS "
        "(SELECT 1 FROM process_instance p WHERE p.id = o.instance_id)"
    ).fetchone()
    assert orphans == (0,)
    return states


def test_sigkill_mid_run_leaves_only_whole_commands(database_url: str) -> None:
    rng = random.Random(7)
    for _ in range(3):
        run_and_kill(database_url, rng.uniform(1.0, 2.0))
        with psycopg.connect(database_url) as conn:
            states = check_consistent(conn)
    assert states.get("Active", 0) > 0 and states.get("Completed", 0) > 0, states
    with Engine(database_url, migrate=False) as engine:
        register(engine)
        for task in engine.user_tasks():
            engine.complete_task(task.id, {"approved": True})
        assert engine.instance_counts() == {InstanceState.COMPLETED.value: sum(states.values())}
    with psycopg.connect(database_url) as conn:
        check_consistent(conn)
