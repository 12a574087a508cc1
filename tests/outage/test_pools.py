"""The engine's sessions: a connection whose backend was terminated is discarded before use, and
every session carries the statement, lock and idle-in-transaction timeouts of the settings."""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.db.outage import is_database_outage
from engine.errors import DatabaseUnavailable
from engine.states import InstanceState


def user_task_model() -> ProcessBuilder:
    return (
        ProcessBuilder("pooled")
        .start_event("start")
        .user_task("review")
        .end_event("end")
        .chain("start", "review", "end")
    )


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine


def backend_pids(engine: Engine) -> tuple[int, int]:
    with engine.connection() as conn:
        read = conn.info.backend_pid
    with engine.command_pool.connection() as conn:
        command = conn.info.backend_pid
    return read, command


def terminate(database_url: str, pids: tuple[int, ...]) -> None:
    with psycopg.connect(database_url, autocommit=True) as admin:
        for pid in pids:
            # Waits (up to 5 s) until the backend has gone.
            ended = admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone()
            assert ended == (True,)


def test_a_terminated_backend_is_discarded_and_the_next_command_succeeds(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(user_task_model().build())
    before = backend_pids(engine)
    terminate(database_url, before)
    instance = engine.start_latest("pooled")  # a command, on the command pool
    assert instance.info().state == InstanceState.ACTIVE  # a read, on the read pool
    assert [task.node_id for task in engine.user_tasks()] == ["review"]
    after = backend_pids(engine)
    assert after[0] != before[0] and after[1] != before[1]
    assert engine.availability.up


def test_a_connection_that_breaks_mid_use_is_dropped_and_reported_as_unavailable(
    engine: Engine, database_url: str
) -> None:
    with pytest.raises(DatabaseUnavailable), engine.connection() as conn:
        terminate(database_url, (conn.info.backend_pid,))
        conn.execute("SELECT 1")
    # The broken connection did not go back into the pool: the next read gets a working one.
    assert engine.instance_counts() is not None
    assert engine.availability.up


def test_every_session_carries_the_timeouts_of_the_settings(database_url: str) -> None:
    settings = EngineSettings(
        statement_timeout_ms=700, lock_timeout_ms=300, idle_in_transaction_timeout_ms=9000
    )
    with Engine(database_url, migrate=False, settings=settings, pool_size=2) as engine:
        for pool in (engine.pool, engine.command_pool):
            with pool.connection() as conn:
                shown = conn.execute(
                    "SELECT current_setting('statement_timeout'), current_setting('lock_timeout'),"
                    " current_setting('idle_in_transaction_session_timeout')"
                ).fetchone()
            assert shown == ("700ms", "300ms", "9s")
        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled) as caught, engine.connection() as conn:
            conn.execute("SELECT pg_sleep(5)")
        assert time.monotonic() - started < 3
        # A timeout is the statement's failure, not an outage: the database stays up.
        assert not is_database_outage(caught.value)
        assert engine.availability.up


def test_the_timeouts_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_STATEMENT_TIMEOUT_MS", "45000")
    monkeypatch.setenv("INTERLOCK_LOCK_TIMEOUT_MS", "1500")
    monkeypatch.setenv("INTERLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS", "0")
    monkeypatch.setenv("INTERLOCK_POOL_TIMEOUT_MS", "2500")
    settings = EngineSettings()
    assert (
        settings.statement_timeout_ms,
        settings.lock_timeout_ms,
        settings.idle_in_transaction_timeout_ms,
        settings.pool_timeout_ms,
        settings.connect_timeout_s,
    ) == (45000, 1500, 0, 2500, 2)
    monkeypatch.setenv("INTERLOCK_LOCK_TIMEOUT_MS", "soon")
    with pytest.raises(ValueError, match="INTERLOCK_LOCK_TIMEOUT_MS must be a whole number"):
        EngineSettings()


def test_the_defaults_are_generous() -> None:
    monkeypatch = pytest.MonkeyPatch()
    for variable in (
        "INTERLOCK_STATEMENT_TIMEOUT_MS",
        "INTERLOCK_LOCK_TIMEOUT_MS",
        "INTERLOCK_IDLE_IN_TRANSACTION_TIMEOUT_MS",
        "INTERLOCK_POOL_TIMEOUT_MS",
        "INTERLOCK_CONNECT_TIMEOUT_S",
    ):
        monkeypatch.delenv(variable, raising=False)
    try:
        settings = EngineSettings()
    finally:
        monkeypatch.undo()
    assert (
        settings.statement_timeout_ms,
        settings.lock_timeout_ms,
        settings.idle_in_transaction_timeout_ms,
        settings.pool_timeout_ms,
        settings.connect_timeout_s,
    ) == (120_000, 30_000, 300_000, 5_000, 2)
