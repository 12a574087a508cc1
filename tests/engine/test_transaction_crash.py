"""SIGKILL the process running the asynchronous compensation of cancelled transactions between
and inside its jobs: every instance is left as whole commands leave it (the cancel end event
waiting, each handler either run once or still a job), and after a restart every one completes:
each handler ran exactly once, then the cancel boundary's flow was taken."""

from __future__ import annotations

from typing import Any

import psycopg

from engine.api import Engine
from engine.loops.jobs import JobExecutor
from tests.engine.test_crash_safety import run_and_kill
from tests.engine.tx_crash_worker import HANDLERS, register
from tests.waiting import wait_until


def count(conn: psycopg.Connection[Any], sql: str, *args: Any) -> int:
    row = conn.execute(sql, args).fetchone()
    assert row is not None
    return int(row[0])


def check_consistent(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Every instance as whole commands leave it; how many are in each state, and how many
    had run none or one of their two handlers (`compensating-0`, `compensating-1`)."""
    found: dict[str, int] = {}
    instances = conn.execute("SELECT id, state FROM process_instance").fetchall()
    for instance_id, state in instances:
        found[state] = found.get(state, 0) + 1
        done = {
            handler: count(
                conn,
                "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = %s "
                "AND mode = 'Compensation' AND state = 'Completed'",
                instance_id,
                handler,
            )
            for handler in HANDLERS
        }
        assert all(n <= 1 for n in done.values()), done  # never compensated twice
        left = count(
            conn,
            "SELECT count(*) FROM event_subscription "
            "WHERE instance_id = %s AND kind = 'compensate'",
            instance_id,
        )
        assert left == 0  # both rows went when the compensation started
        ended = count(
            conn,
            "SELECT count(*) FROM history WHERE instance_id = %s AND node_id = 'end_cancelled' "
            "AND state = 'Completed'",
            instance_id,
        )
        live = conn.execute(
            "SELECT node_id, state FROM token WHERE instance_id = %s "
            "AND state NOT IN ('Completed', 'Terminated') ORDER BY node_id",
            (instance_id,),
        ).fetchall()
        jobs = conn.execute(
            "SELECT t.node_id FROM job j JOIN token t ON t.id = j.token_id "
            "WHERE j.instance_id = %s ORDER BY t.node_id",
            (instance_id,),
        ).fetchall()
        if state == "Completed":
            assert (done, ended, live, jobs) == ({h: 1 for h in HANDLERS}, 1, [], [])
            continue
        assert state == "Active", state
        assert ended == 0
        pending = sorted(h for h in HANDLERS if done[h] == 0)
        # The cancel end event and the transaction wait; each handler not yet run is a Ready
        # token with its job.
        assert live == sorted(
            [("cancel", "Waiting"), ("tx", "Waiting"), *((h, "Ready") for h in pending)]
        ), live
        assert [row[0] for row in jobs] == pending
        key = f"compensating-{len(HANDLERS) - len(pending)}"
        found[key] = found.get(key, 0) + 1
    return found


def test_sigkill_between_compensation_jobs_then_every_cancelled_transaction_completes(
    database_url: str,
) -> None:
    caught = 0
    for seconds in (1.5, 1.0, 2.0):
        run_and_kill(database_url, seconds, "tests.engine.tx_crash_worker")
        with psycopg.connect(database_url) as conn:
            found = check_consistent(conn)
        caught += found.get("compensating-0", 0) + found.get("compensating-1", 0)
    assert caught > 0, found  # some were killed with their compensation under way
    assert found.get("Completed", 0) > 0, found
    with Engine(database_url, migrate=False) as engine:
        register(engine)
        executor = JobExecutor(engine, owner="after-restart", lock_seconds=30)

        def finished() -> bool:
            # Jobs the killed process still held become acquirable once their locks expire.
            executor.run_once()
            return not engine.instance_counts().get("Active", 0)

        wait_until(finished, "every instance to complete after the restart", timeout=120)
        total = sum(v for k, v in found.items() if not k.startswith("compensating"))
        assert engine.instance_counts() == {"Completed": total}
    with psycopg.connect(database_url) as conn:
        after = check_consistent(conn)
        assert after == {"Completed": total}
        assert count(conn, "SELECT count(*) FROM job") == 0
