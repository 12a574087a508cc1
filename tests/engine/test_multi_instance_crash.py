"""SIGKILL a process running multi-instance bodies mid-way: after a restart every instance goes
on from its committed counters and completes with exactly its number of iterations."""

from __future__ import annotations

import time
from typing import Any

import psycopg

from engine.api import Engine
from engine.loops.jobs import JobExecutor
from tests.engine.mi_crash_worker import ITERATIONS, LOCK_MS, register
from tests.engine.test_crash_safety import run_and_kill


def bodies(conn: psycopg.Connection[Any]) -> list[tuple[str, str, int, dict[str, Any]]]:
    """Per instance: its key, state, completed iteration visits and its live body's counters."""
    found = []
    for instance_id, key, state in conn.execute(
        "SELECT id, definition_key, state FROM process_instance ORDER BY started_at"
    ).fetchall():
        done = conn.execute(
            "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = 'step' "
            "AND node_type = 'serviceTask' AND state = 'Completed'",
            (instance_id,),
        ).fetchone()
        assert done is not None
        counters = dict(
            conn.execute(
                "SELECT v.name, v.value FROM variable v JOIN token t ON v.scope_key = t.id::text "
                "WHERE v.instance_id = %s AND t.node_id = 'step' AND t.scope_id IS NULL",
                (instance_id,),
            ).fetchall()
        )
        found.append((key, state, done[0], counters))
    return found


def check_consistent(conn: psycopg.Connection[Any]) -> dict[str, int]:
    states: dict[str, int] = {}
    for key, state, done, counters in bodies(conn):
        states[state] = states.get(state, 0) + 1
        total = ITERATIONS[key]
        if state == "Completed":
            assert (done, counters) == (total, {}), (key, done, counters)
            continue
        assert state == "Active", state
        # The committed counters agree with the committed iterations, whatever was cut short.
        assert counters["nrOfInstances"] == total, counters
        assert counters["nrOfCompletedInstances"] == done, (key, done, counters)
        sequential = key == "mi-seq"
        active = 1 if sequential else total - done
        assert counters["nrOfActiveInstances"] == active, (key, counters)
    return states


def test_sigkill_mid_multi_instance_then_every_instance_completes(database_url: str) -> None:
    partial = 0  # instances killed with some but not all iterations done
    for seconds in (1.5, 1.0, 2.0):
        run_and_kill(database_url, seconds, "tests.engine.mi_crash_worker")
        with psycopg.connect(database_url) as conn:
            states = check_consistent(conn)
            found = bodies(conn)
        partial += len([b for b in found if b[1] == "Active" and 0 < b[2] < ITERATIONS[b[0]]])
    assert states.get("Active", 0) > 0 and states.get("Completed", 0) > 0, states
    assert partial > 0
    time.sleep(LOCK_MS / 1000 + 0.5)  # the killed process's locks expire
    with Engine(database_url, migrate=False) as engine:
        worker = register(engine)
        executor = JobExecutor(engine, owner="after-restart", lock_seconds=30)
        deadline = time.monotonic() + 60
        while sum(engine.instance_counts().get(s, 0) for s in ("Active",)) and (
            time.monotonic() < deadline
        ):
            ran = executor.run_once() + worker.run_once()
            if not ran:
                time.sleep(0.2)
        assert engine.instance_counts() == {"Completed": sum(states.values())}
    with psycopg.connect(database_url) as conn:
        for key, state, done, counters in bodies(conn):
            assert (state, done, counters) == ("Completed", ITERATIONS[key], {}), key
        assert conn.execute("SELECT count(*) FROM variable WHERE scope_key <> ''").fetchone() == (
            0,
        )
        assert conn.execute("SELECT count(*) FROM job").fetchone() == (0,)
        assert conn.execute(
            "SELECT count(*) FROM external_task WHERE state = 'Open'"
        ).fetchone() == (0,)
