"""The migrations build exactly the schema `engine.schema` declares, both ways, and concurrently."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect
from sqlalchemy.pool import NullPool

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.db import migrate
from engine.db.database import sqlalchemy_url_for
from engine.loops.announcer import QUIET_TRIGGERS
from engine.schema import OUTBOX_CHANNEL, metadata


def schema_differences(url: str) -> list[Any]:
    engine = create_engine(sqlalchemy_url_for(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    engine = create_engine(sqlalchemy_url_for(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def insert_outbox_row(conn: psycopg.Connection[Any]) -> None:
    conn.execute(
        'INSERT INTO outbox (events, instance_id) VALUES (\'[{"event": "test"}]\', %s)',
        (uuid.uuid4(),),
    )


def test_upgrade_builds_the_declared_schema(empty_database_url: str) -> None:
    assert migrate.current_revision(empty_database_url) is None

    migrate.upgrade(empty_database_url)

    assert migrate.current_revision(empty_database_url) == migrate.head_revision()
    assert table_names(empty_database_url) == set(metadata.tables) | {"alembic_version"}
    assert schema_differences(empty_database_url) == []


def test_downgrade_to_base_then_upgrade_again(empty_database_url: str) -> None:
    migrate.upgrade(empty_database_url)

    migrate.downgrade(empty_database_url, "base")

    assert migrate.current_revision(empty_database_url) is None
    assert table_names(empty_database_url) == {"alembic_version"}
    with psycopg.connect(empty_database_url) as conn:
        leftover = conn.execute(
            "SELECT proname FROM pg_proc WHERE proname = 'interlock_notify_outbox'"
        ).fetchall()
    assert leftover == []

    migrate.upgrade(empty_database_url)

    assert migrate.current_revision(empty_database_url) == migrate.head_revision()
    assert schema_differences(empty_database_url) == []


def test_upgrade_is_idempotent(database_url: str) -> None:
    migrate.upgrade(database_url)

    assert migrate.current_revision(database_url) == migrate.head_revision()


def test_concurrent_upgrades_queue_on_the_advisory_lock(empty_database_url: str) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            migrate.upgrade(empty_database_url)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert migrate.current_revision(empty_database_url) == migrate.head_revision()


def test_outbox_insert_notifies_listeners_once_per_statement(database_url: str) -> None:
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url) as writer,
    ):
        listener.execute(f"LISTEN {OUTBOX_CHANNEL}")

        insert_outbox_row(writer)
        writer.commit()

        received = list(listener.notifies(timeout=5, stop_after=1))
        assert [(n.channel, n.payload) for n in received] == [(OUTBOX_CHANNEL, "")]

        trigger = writer.execute(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger"
            " WHERE tgrelid = 'outbox'::regclass AND NOT tgisinternal"
        ).fetchall()
        writer.rollback()
    assert len(trigger) == 1
    definition = trigger[0][0]
    assert "AFTER INSERT ON public.outbox FOR EACH STATEMENT" in definition
    assert "interlock_notify_outbox()" in definition


def test_no_notification_for_a_rolled_back_insert(database_url: str) -> None:
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url) as writer,
    ):
        listener.execute(f"LISTEN {OUTBOX_CHANNEL}")

        insert_outbox_row(writer)
        writer.rollback()

        assert list(listener.notifies(timeout=0.5, stop_after=1)) == []


@pytest.mark.parametrize("form", ["postgresql", "postgresql+psycopg"])
def test_migrate_accepts_both_url_forms(database_url: str, form: str) -> None:
    url = database_url.replace("postgresql://", f"{form}://", 1)

    assert migrate.current_revision(url) == migrate.head_revision()


def test_engine_sessions_skip_the_trigger_and_announce_after_commit(database_url: str) -> None:
    with (
        psycopg.connect(database_url, autocommit=True) as listener,
        psycopg.connect(database_url) as writer,
    ):
        listener.execute(f"LISTEN {OUTBOX_CHANNEL}")
        writer.execute(QUIET_TRIGGERS)
        insert_outbox_row(writer)
        writer.commit()
        assert list(listener.notifies(timeout=0.5, stop_after=1)) == []

        with Engine(database_url, migrate=False) as engine:
            engine.deploy(
                ProcessBuilder("announced").start_event("s").end_event("e").chain("s", "e").build()
            )
            engine.start_latest("announced")
            received = list(listener.notifies(timeout=5, stop_after=1))
    assert [n.channel for n in received] == [OUTBOX_CHANNEL]


def vacuum_options(url: str) -> dict[str, list[str] | None]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT relname, reloptions FROM pg_class WHERE relname IN ('external_task', 'job')"
        ).fetchall()
    return dict(rows)


def test_queue_tables_are_vacuumed_after_a_fixed_number_of_dead_rows(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)
    fixed = ["autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=2000"]
    assert vacuum_options(empty_database_url) == {"external_task": fixed, "job": fixed}

    migrate.downgrade(empty_database_url, "0007")

    assert vacuum_options(empty_database_url) == {"external_task": None, "job": None}
