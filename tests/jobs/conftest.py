"""Fixtures for job and external-task tests: an engine on a clock the test moves by hand."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from engine.api import Engine

START = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)

# Every table a command may write, for before/after comparisons.
TABLES = (
    "process_instance",
    "token",
    "join_state",
    "variable",
    "user_task",
    "external_task",
    "job",
    "event_subscription",
    "incident",
    "history",
    "outbox",
    "idempotency",
)


class ManualClock:
    """A clock that stands still until the test advances it."""

    def __init__(self, now: datetime = START) -> None:
        self._now = now
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(**delta)
            return self._now

    def set(self, moment: datetime) -> None:
        with self._lock:
            self._now = moment


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def engine(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=12) as engine:
        yield engine


@pytest.fixture
def real_engine(database_url: str) -> Iterator[Engine]:
    """An engine on the system clock, for timers that must fire in real time."""
    with Engine(database_url, migrate=False, pool_size=12) as engine:
        yield engine


def snapshot(database_url: str) -> dict[str, list[Any]]:
    """Every row of every runtime table, as text."""
    with psycopg.connect(database_url) as conn:
        return {
            table: sorted(str(row) for row in conn.execute(f"SELECT * FROM {table}").fetchall())
            for table in TABLES
        }
