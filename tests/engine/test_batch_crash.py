"""SIGKILL the job executor mid-batch, twice: every item is done exactly once, none skipped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.api import Engine
from engine.commands.batches import CreateBatch
from engine.core import audit
from engine.states import AuditChannel, BatchType
from tests.engine.batches import batch_entries, batch_row, deploy_charge, failed_charges

ROOT = Path(__file__).resolve().parents[2]


def _executor(database_url: str) -> subprocess.Popen[bytes]:
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.engine.batch_executor", database_url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert worker.stdout is not None
    assert worker.stdout.readline().strip() == b"ready"
    return worker


def _until(check: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the batch made no progress in time"
        time.sleep(0.02)


def _kill(worker: subprocess.Popen[bytes]) -> None:
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    assert worker.stdout is not None
    worker.stdout.close()


def _crash_twice(engine: Engine, database_url: str, count: int, kills: int) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, count, threads=6)
    with audit.acting(audit.Actor("olga", AuditChannel.CONSOLE)):
        batch_id = engine.run(CreateBatch(BatchType.RETRY_INCIDENTS, tuple(incidents))).batch_id
    seen = []
    for kill in range(1, kills + 1):
        worker = _executor(database_url)
        # Killed as it works, a chunk in hand: after each kill part of the batch is done.
        share = count * kill // (kills + 1)
        _until(lambda: int(batch_row(engine, batch_id)[2]) >= share)  # noqa: B023
        _kill(worker)
        seen.append(batch_row(engine, batch_id)[2])
    assert seen[0] > 0 and seen == sorted(set(seen)) and seen[-1] < count, seen
    worker = _executor(database_url)  # the killed executor's lock on the job expires first
    try:
        _until(lambda: batch_row(engine, batch_id)[0] == "Completed")
    finally:
        _kill(worker)
    assert batch_row(engine, batch_id) == ("Completed", count, count, 0, "olga", True)
    # Each incident retried exactly once: one audit entry each, with the batch's id.
    entries = Counter(row[0] for row in batch_entries(engine, batch_id))
    assert set(entries) == set(incidents)
    assert set(entries.values()) == {1}
    with engine.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM incident WHERE id = ANY(%s::uuid[]) AND state = 'Open'",
            (incidents,),
        ).fetchone() == (0,)
        assert conn.execute(
            "SELECT state, count(*) FROM batch_item WHERE batch_id = %s GROUP BY state",
            (batch_id,),
        ).fetchall() == [("Done", count)]


def test_a_batch_survives_a_killed_executor(engine: Engine, database_url: str) -> None:
    _crash_twice(engine, database_url, 500, kills=1)


@pytest.mark.slow
def test_five_thousand_retries_survive_two_killed_executors(
    engine: Engine, database_url: str
) -> None:
    _crash_twice(engine, database_url, 5000, kills=2)
