"""The history cleanup over ended instances written in bulk (tests/jobs/retention_data.py): it
deletes exactly the families past their time to live, batch by batch, while new instances run;
several executors and concurrent batches delete each family once; a SIGKILL in the middle of a
run leaves every instance whole or gone, and a restart finishes the run."""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.cleanup import (
    CLEANUP_JOB_ID,
    CleanupBatch,
    ScheduleHistoryCleanup,
    StartHistoryCleanup,
)
from engine.commands.webhooks import CreateSubscription, DeleteSubscription, UpdateSubscription
from engine.core.settings import EngineSettings
from engine.db.retention import CleanupWindow, RetentionSettings
from engine.loops.jobs import JobExecutor
from tests.jobs.conftest import ManualClock
from tests.jobs.retention_data import (
    GONE_GROUPS,
    check_families,
    deploy,
    expected_gone,
    insert_instances,
)

ROOT = Path(__file__).resolve().parents[2]


def settings(batch_size: int, window: CleanupWindow | None = None) -> EngineSettings:
    return EngineSettings(
        retention=RetentionSettings(history_ttl_days=60, window=window, batch_size=batch_size)
    )


def gone_roots(n: int) -> int:
    return sum(1 for i in range(1, n + 1) if i % 20 in GONE_GROUPS)


def last_run(conn: psycopg.Connection[Any]) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT state, manual, batches, instances, finished_at FROM history_cleanup_run "
        "ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    return dict(zip(("state", "manual", "batches", "instances", "finished_at"), row, strict=True))


def straight_through(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("fresh", history_ttl_days=30)
        .start_event("start")
        .end_event("end")
        .chain("start", "end")
        .build()
    )


class Starter:
    """Starts (and so completes) instances of `fresh` in a thread until stopped."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.started = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.engine.start_latest("fresh")
            self.started += 1

    def __enter__(self) -> Starter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


def wait_finished(url: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            run = last_run(conn)
            if run is not None and run["state"] == "Finished":
                return run
            time.sleep(0.1)
    raise AssertionError(f"the cleanup did not finish within {timeout}s")


def cleanup_while_instances_run(url: str, n: int, batch_size: int, timeout: float) -> None:
    clock = ManualClock(datetime(2030, 1, 1, 9, 0, tzinfo=UTC))
    with Engine(
        url, migrate=False, clock=clock, settings=settings(batch_size), pool_size=12
    ) as engine:
        definitions = deploy(engine)
        straight_through(engine)
        insert_instances(url, definitions, n, clock())
        executors = [
            JobExecutor(engine, owner=f"executor-{k}", poll_interval=0.2) for k in range(3)
        ]
        for executor in executors:
            executor.start()
        try:
            with Starter(engine) as starter:
                engine.run(StartHistoryCleanup())
                run = wait_finished(url, timeout)
        finally:
            for executor in executors:
                executor.stop()
    with psycopg.connect(url) as conn:
        counts = check_families(conn, n, finished=True)
        assert counts["gone"] == gone_roots(n)
        assert run["instances"] == expected_gone(n)
        assert run["manual"] is True
        assert run["batches"] >= math.ceil(gone_roots(n) / batch_size)
        # No window: the job is gone once the run finished, and it never failed on the way.
        assert conn.execute(
            "SELECT count(*) FROM job WHERE kind = 'history-cleanup'"
        ).fetchone() == (0,)
        fresh = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE state = 'Completed') FROM process_instance "
            "WHERE definition_key = 'fresh'"
        ).fetchone()
        assert fresh == (starter.started, starter.started) and starter.started > 0
        visits = conn.execute(
            "SELECT count(*) FROM history h JOIN process_instance p ON p.id = h.instance_id "
            "WHERE p.definition_key = 'fresh'"
        ).fetchone()
        assert visits == (2 * starter.started,)


def test_cleanup_deletes_exactly_what_is_past_its_time(database_url: str) -> None:
    cleanup_while_instances_run(database_url, 3000, 100, timeout=120)


@pytest.mark.slow
def test_cleanup_of_a_hundred_thousand_instances(database_url: str) -> None:
    cleanup_while_instances_run(database_url, 100_000, 500, timeout=900)


def test_concurrent_batches_delete_each_family_once(database_url: str) -> None:
    n = 2000
    clock = ManualClock(datetime(2030, 1, 1, 9, 0, tzinfo=UTC))
    with Engine(
        url := database_url, migrate=False, clock=clock, settings=settings(25), pool_size=8
    ) as engine:
        insert_instances(url, deploy(engine), n, clock())

        def drain() -> int:
            deleted = 0
            while True:
                result = engine.run(CleanupBatch())
                deleted += result.instances
                if not result.more:
                    return deleted

        with ThreadPoolExecutor(4) as pool:
            totals = list(pool.map(lambda _: drain(), range(4)))
    assert sum(totals) == expected_gone(n)
    assert sum(1 for total in totals if total) > 1, totals  # they did run side by side
    with psycopg.connect(url) as conn:
        check_families(conn, n, finished=True)


def test_a_killed_cleanup_leaves_every_instance_whole_or_gone(database_url: str) -> None:
    n = 4000
    with Engine(database_url, migrate=False, settings=settings(20)) as engine:
        definitions = deploy(engine)
    insert_instances(database_url, definitions, n, datetime.now(UTC))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "INTERLOCK_HISTORY_TTL_DAYS": "60",
        "INTERLOCK_CLEANUP_BATCH_SIZE": "20",
        "INTERLOCK_CLEANUP_WINDOW": "off",
    }
    with Engine(database_url, migrate=False, settings=settings(20)) as engine:
        engine.run(StartHistoryCleanup())
    interrupted = 0
    for round_ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.jobs.cleanup_process", database_url],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(random.uniform(0.3, 0.8) + 0.3 * round_)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        with psycopg.connect(database_url) as conn:
            counts = check_families(conn, n, finished=False)
            run = last_run(conn)
        assert run is not None
        if 0 < counts["gone"] < gone_roots(n):
            interrupted += 1
            assert run["state"] == "Running"
        time.sleep(1.2)  # the killed executor's lock on the job expires
    assert interrupted > 0, "no kill landed in the middle of the run"
    with Engine(database_url, migrate=False, settings=settings(20)) as engine:
        executor = JobExecutor(engine, owner="after-restart", poll_interval=0.2)
        executor.start()
        try:
            run = wait_finished(database_url, 120)
        finally:
            executor.stop()
    with psycopg.connect(database_url) as conn:
        counts = check_families(conn, n, finished=True)
    assert run["instances"] == expected_gone(n)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2030, 1, 1, 9, 0, tzinfo=UTC))


@pytest.fixture
def windowed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    window = CleanupWindow.parse("08:00-10:00")
    with Engine(database_url, migrate=False, clock=clock, settings=settings(50, window)) as engine:
        yield engine


def job_due(conn: psycopg.Connection[Any]) -> datetime | None:
    row = conn.execute("SELECT due_at FROM job WHERE id = %s", (CLEANUP_JOB_ID,)).fetchone()
    return row[0] if row else None


def test_the_window_schedules_runs_and_ends_them(
    windowed: Engine, database_url: str, clock: ManualClock
) -> None:
    n = 400
    insert_instances(database_url, deploy(windowed), n, clock())
    # An executor that schedules the cleanup starts inside the window: the job is due at once.
    executor = JobExecutor(windowed, owner="scheduler", history_cleanup=True)
    executor.start()
    try:
        run = wait_finished(database_url, 60)
    finally:
        executor.stop()
    assert run["manual"] is False and run["instances"] == expected_gone(n)
    with psycopg.connect(database_url) as conn:
        check_families(conn, n, finished=True)
        # Then it waits for the next window.
        assert job_due(conn) == datetime(2030, 1, 2, 8, 0, tzinfo=UTC)
    # Scheduling again changes nothing.
    windowed.run(ScheduleHistoryCleanup())
    with psycopg.connect(database_url) as conn:
        assert job_due(conn) == datetime(2030, 1, 2, 8, 0, tzinfo=UTC)
        # Past the window's end, a run that is still going stops until the next start.
        conn.execute(
            "INSERT INTO history_cleanup_run (state, manual, started_at, updated_at, batches, "
            "instances, idempotency, outbox) VALUES ('Running', false, %s, %s, 1, 5, 0, 0)",
            (clock(), clock()),
        )
        conn.execute("UPDATE job SET due_at = %s WHERE id = %s", (clock(), CLEANUP_JOB_ID))
    clock.advance(hours=2)  # 11:00, after the window
    assert windowed.execute_job(CLEANUP_JOB_ID) == "executed"
    with psycopg.connect(database_url) as conn:
        stopped = last_run(conn)
        assert stopped is not None and (stopped["state"], stopped["instances"]) == ("Stopped", 5)
        assert job_due(conn) == datetime(2030, 1, 2, 8, 0, tzinfo=UTC)
    # Started by hand, a run ignores the window and goes on until nothing is left.
    windowed.run(StartHistoryCleanup())
    assert windowed.execute_job(CLEANUP_JOB_ID) == "executed"
    with psycopg.connect(database_url) as conn:
        manual = last_run(conn)
        assert manual is not None and (manual["state"], manual["manual"]) == ("Finished", True)


def subscription_behind(engine: Engine, database_url: str, seq: int) -> UUID:
    """A webhook subscription whose dispatchers have fanned the outbox out up to `seq` only (no
    dispatcher runs here to move it on): the consumer the cleanup must wait for."""
    created = engine.run(
        CreateSubscription(title="behind", url="http://127.0.0.1:9/hook", secret="s" * 16)
    )
    subscription = UUID(created.subscription_id)
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE webhook_subscription SET fanned_out_seq = %s WHERE id = %s",
            (seq, subscription),
        )
    return subscription


def test_idempotency_and_outbox_rows_expire(
    windowed: Engine, database_url: str, clock: ManualClock
) -> None:
    now = clock()
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "INSERT INTO idempotency (principal, key, command, result, created_at) "
            "SELECT 'p', 'k' || i, 'StartInstance', '{}', %s - make_interval(days => i) "
            "FROM generate_series(1, 10) i",
            (now,),
        )
        conn.execute(
            "INSERT INTO outbox (events, instance_id, created_at) "
            'SELECT \'[{"event": "instance.started"}]\', gen_random_uuid(), '
            "%s - make_interval(days => 11 - i) "
            "FROM generate_series(1, 10) i",
            (now,),
        )
        seqs = [row[0] for row in conn.execute("SELECT seq FROM outbox_event ORDER BY seq")]
    # A webhook subscription that has not passed the second oldest row holds it and everything
    # after.
    subscription = subscription_behind(windowed, database_url, seqs[1])
    result = windowed.run(CleanupBatch())
    assert (result.idempotency, result.outbox) == (3, 1)  # 8, 9, 10 days old; 10 days old
    # Disabled, it holds nothing back (enabled again, it starts from the newest row).
    windowed.run(UpdateSubscription(subscription, enabled=False))
    result = windowed.run(CleanupBatch())
    assert (result.idempotency, result.outbox) == (0, 2)  # 9 and 8 days old
    with psycopg.connect(database_url) as conn:
        kept = conn.execute("SELECT key FROM idempotency ORDER BY created_at").fetchall()
        assert [key for (key,) in kept] == [f"k{i}" for i in range(7, 0, -1)]
        assert [
            row[0] for row in conn.execute("SELECT seq FROM outbox_event ORDER BY seq")
        ] == seqs[3:]


def test_families_a_consumer_may_still_need_are_kept(
    windowed: Engine, database_url: str, clock: ManualClock
) -> None:
    n = 200
    insert_instances(database_url, deploy(windowed), n, clock())
    with psycopg.connect(database_url) as conn:
        (held,) = conn.execute(
            "INSERT INTO outbox (events, instance_id, created_at) "
            'VALUES (\'[{"event": "instance.completed"}]\', gen_random_uuid(), %s) '
            "RETURNING seq * 1000",
            (clock() - timedelta(days=50),),
        ).fetchone() or (None,)
    # A consumer has not passed the row written 50 days ago: only the families that ended
    # before it (90 days ago: groups 14 and 15) may go; those that ended 40 days ago wait.
    assert held is not None
    subscription = subscription_behind(windowed, database_url, held)
    result = windowed.run(CleanupBatch())
    assert result.instances == sum(1 for i in range(1, n + 1) if i % 20 in (14, 15))
    assert (result.outbox, result.more) == (0, False)
    windowed.run(DeleteSubscription(subscription))
    while windowed.run(CleanupBatch()).more:
        pass
    with psycopg.connect(database_url) as conn:
        check_families(conn, n, finished=True)


DECISION = """<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/"
  xmlns:camunda="http://camunda.org/schema/1.0/dmn" id="D" name="D" namespace="n">
  <decision id="{key}" name="Greeting" {ttl}>
    <literalExpression id="L_{key}"><text>"hello " + name</text></literalExpression>
    <variable id="V_{key}" name="greeting" />
  </decision>
</definitions>
"""


def test_the_cleanup_deletes_evaluations_past_their_decisions_time_to_live(
    database_url: str, clock: ManualClock
) -> None:
    with Engine(database_url, migrate=False, clock=clock, settings=settings(50)) as engine:
        # "short" keeps 10 days; "plain" the default (60 days); an instance's evaluation stays
        # while its instance does (the instance never ends here).
        engine.deploy(DECISION.format(key="short", ttl='camunda:historyTimeToLive="10"'))
        engine.deploy(DECISION.format(key="plain", ttl=""))
        engine.deploy(
            ProcessBuilder("greet")
            .start_event("s")
            .business_rule_task("Greet", decision_ref="plain", result_variable="g")
            .user_task("wait")
            .end_event("e")
            .chain("s", "Greet", "wait", "e")
            .build()
        )
        old_short = engine.evaluate_decision("short", {"name": "a"})
        old_plain = engine.evaluate_decision("plain", {"name": "b"})
        instance = engine.start_latest("greet", {"name": "c"})
        assert instance.variables()["g"] == [{"greeting": "hello c"}]
        clock.advance(days=30)
        new_short = engine.evaluate_decision("short", {"name": "d"})
        engine.run(CleanupBatch())
        with psycopg.connect(database_url) as conn:
            left = {
                row[0]
                for row in conn.execute("SELECT id::text FROM decision_evaluation").fetchall()
            }
        assert old_short.evaluation_id not in left
        assert {old_plain.evaluation_id, new_short.evaluation_id} <= left
        clock.advance(days=40)
        engine.run(CleanupBatch())
        with psycopg.connect(database_url) as conn:
            rows = conn.execute(
                "SELECT decision_key, instance_id FROM decision_evaluation ORDER BY decision_key"
            ).fetchall()
        # 70 days on: the direct "plain" one is gone (60 days), the instance's stays.
        assert rows == [("plain", instance.id)]
