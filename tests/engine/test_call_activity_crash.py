"""SIGKILL a process running families of called instances mid-way: whatever was cut short, every
family is consistent from the database alone (no called instance running without a caller waiting
for it, no caller waiting for an instance that ended), and after a restart every tree completes,
each called instance run exactly once, and each compensation handler run exactly once."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any
from uuid import UUID

import psycopg

from engine.api import Engine
from engine.loops.jobs import JobExecutor
from tests.engine.call_crash_worker import CALLS, LEAF, LOCK_MS, ROOTS, register
from tests.engine.test_crash_safety import run_and_kill

LIVE = "state NOT IN ('Completed', 'Terminated')"


def check_consistent(conn: psycopg.Connection[Any]) -> Counter[str]:
    """Check every family; how many instances are in each (key, state)."""
    instances = {
        row[0]: row[1:]
        for row in conn.execute(
            "SELECT id, definition_key, state, super_instance_id, super_token_id, "
            "root_instance_id FROM process_instance"
        ).fetchall()
    }
    called_by: dict[UUID, list[UUID]] = {}
    found: Counter[str] = Counter()
    for instance_id, (key, state, caller, token_id, root) in instances.items():
        found[f"{key} {state}"] += 1
        assert state in ("Active", "Completed"), (key, state)
        if caller is None:
            assert key in ROOTS and root == instance_id, (key, root)
            continue
        called_by.setdefault(token_id, []).append(instance_id)
        caller_key, caller_state, _, _, caller_root = instances[caller]
        # The family shares its root; each process calls the one its model names.
        assert root == caller_root, (key, root, caller_root)
        assert CALLS[caller_key] == key
        waiting = conn.execute(
            f"SELECT node_id, state FROM token WHERE id = %s AND {LIVE}",  # noqa: S608
            (token_id,),
        ).fetchall()
        if state == "Active":
            # A running called instance has its caller's token waiting at the call activity.
            assert caller_state == "Active" and waiting == [("call", "Waiting")], (key, waiting)
        else:
            # A completed one released its caller in the same transaction.
            assert waiting == [], (key, waiting)
    # Every token at a call activity waits for exactly one running called instance, or has not
    # called yet because its asynchronous continuation is still a job.
    for token_id, instance_id, state in conn.execute(
        f"SELECT id, instance_id, state FROM token WHERE node_id = 'call' AND {LIVE}"  # noqa: S608
    ).fetchall():
        called = called_by.get(token_id, [])
        assert instances[instance_id][1] == "Active", (instance_id, token_id)
        if state == "Waiting":
            assert [instances[c][1] for c in called] == ["Active"], (token_id, called)
        else:
            jobs = conn.execute("SELECT count(*) FROM job WHERE token_id = %s", (token_id,))
            assert jobs.fetchone() == (1,), (token_id, state)
            assert called == [], (token_id, called)
    for token_id, called in called_by.items():
        assert len(called) == 1, (token_id, called)
    return found


def leaf_steps(conn: psycopg.Connection[Any]) -> list[tuple[str, int, int, int]]:
    """Per called leaf: its state, how many times it visited `step` and `remote`, and how many
    times the compensation handler `undo` ran (its visits in Compensation mode)."""
    return [
        (row[0], row[1], row[2], row[3])
        for row in conn.execute(
            "SELECT p.state, "
            "(SELECT count(*) FROM history h WHERE h.instance_id = p.id AND h.node_id = 'step'), "
            "(SELECT count(*) FROM history h WHERE h.instance_id = p.id AND h.node_id = 'remote'), "
            "(SELECT count(*) FROM history h WHERE h.instance_id = p.id AND h.node_id = 'undo' "
            "AND h.mode = 'Compensation') "
            "FROM process_instance p WHERE p.definition_key = %s",
            (LEAF,),
        ).fetchall()
    ]


def test_sigkill_mid_call_activity_trees_then_every_tree_completes(database_url: str) -> None:
    running = 0  # called instances killed while running
    for seconds in (1.5, 1.0, 2.0):
        run_and_kill(database_url, seconds, "tests.engine.call_crash_worker")
        with psycopg.connect(database_url) as conn:
            found = check_consistent(conn)
            # A compensation runs at most once, whatever was cut short; a completed leaf ran it.
            for state, _, _, undone in leaf_steps(conn):
                assert undone <= 1 and (state != "Completed" or undone == 1), (state, undone)
        running += found[f"{LEAF} Active"]
    assert found[f"{LEAF} Completed"] > 0 and found["cc-three Completed"] > 0, found
    assert running > 0 and found["cc-three Active"] > 0, found
    roots = found["cc-two Active"] + found["cc-two Completed"]
    roots += found["cc-three Active"] + found["cc-three Completed"]
    time.sleep(LOCK_MS / 1000 + 0.5)  # the killed process's locks expire
    with Engine(database_url, migrate=False) as engine:
        worker = register(engine)
        executor = JobExecutor(engine, owner="after-restart", lock_seconds=30)
        deadline = time.monotonic() + 90
        while engine.instance_counts().get("Active", 0) and time.monotonic() < deadline:
            if not executor.run_once() + worker.run_once():
                time.sleep(0.2)
        counts = engine.instance_counts()
    with psycopg.connect(database_url) as conn:
        final = check_consistent(conn)
        # Every tree completed whole: a root of two levels has one child, of three levels two.
        assert counts == {"Completed": sum(final.values())}, counts
        assert final[f"{LEAF} Completed"] == roots
        assert final["cc-middle Completed"] == final["cc-three Completed"]
        # Each called instance ran each step once, and each call activity called once.
        assert set(leaf_steps(conn)) == {("Completed", 1, 1, 1)}
        compensable = conn.execute(
            "SELECT count(*) FROM event_subscription WHERE kind = 'compensate'"
        ).fetchone()
        assert compensable == (0,)
        calls = conn.execute(
            "SELECT p.definition_key, count(h.called_instance_id) FROM process_instance p "
            "JOIN history h ON h.instance_id = p.id AND h.node_id = 'call' "
            "GROUP BY p.id, p.definition_key"
        ).fetchall()
        assert len(calls) == sum(final[f"{k} Completed"] for k in CALLS)
        assert {count for _, count in calls} == {1}, calls
        assert conn.execute("SELECT count(*) FROM job").fetchone() == (0,)
        assert conn.execute(
            "SELECT count(*) FROM external_task WHERE state = 'Open'"
        ).fetchone() == (0,)
