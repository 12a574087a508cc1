"""The hot statements follow the table declarations: a column added to a table (and to its runtime
row) is loaded and written back with no other edit, and the runtime rows hold exactly the columns
of their tables, which are exactly the migrated ones."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from engine.core.runtime import (
    Event,
    ExternalTaskRow,
    IncidentRow,
    InstanceRow,
    InstanceRun,
    JobRow,
    Join,
    Subscription,
    Token,
    UserTaskRow,
    Visit,
)
from engine.db.database import sqlalchemy_url_for
from engine.db.ids import new_id
from engine.schema import metadata
from engine.states import InstanceState, TokenState
from engine.store import persist, runs


@dataclass
class NotedToken(Token):
    """A token with one more column than the declared table."""

    note: str | None = None


def tables_with_note(*, mutable: bool) -> dict[str, sa.Table]:
    """A copy of the declared tables whose token table has one more column, `note`."""
    copy = sa.MetaData()
    tables: dict[str, sa.Table] = {
        name: table.to_metadata(copy) for name, table in metadata.tables.items()
    }
    info = {"mutable": True} if mutable else {}
    tables["token"].append_column(sa.Column("note", sa.Text, nullable=True, info=info))
    return tables


def save(conn: psycopg.Connection[Any], run: InstanceRun, tables: dict[str, sa.Table]) -> None:
    ctes = persist.ctes(tables)
    doc = persist.document(run, ctes)
    doc["expected"] = persist.expected_rows(doc)
    conn.execute(persist.save_statement(doc, ctes), (persist.encode(doc),))


def new_run(conn: psycopg.Connection[Any], now: datetime) -> InstanceRun:
    """A new instance (of a definition inserted here) with one new token noted "first"."""
    deployment = new_id()
    conn.execute("INSERT INTO deployment (id) VALUES (%s)", (deployment,))
    conn.execute(
        "INSERT INTO process_definition (id, key, version, deployment_id, resource_name, "
        "source_xml, content_hash) VALUES ('noted:1:x', 'noted', 1, %s, 'noted.bpmn', '', '')",
        (deployment,),
    )
    instance = InstanceRow(
        id=new_id(),
        definition_id="noted:1:x",
        definition_key="noted",
        business_key=None,
        state=InstanceState.ACTIVE,
        version=0,
        started_at=now,
        is_new=True,
    )
    run = InstanceRun(instance=instance, now=now)
    token = NotedToken(
        id=new_id(),
        instance_id=instance.id,
        node_id="task",
        state=TokenState.WAITING,
        created_at=now,
        updated_at=now,
        is_new=True,
        note="first",
    )
    run.tokens[token.id] = token
    return run


def test_a_column_added_to_a_table_is_written_and_loaded(database_url: str) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    tables = tables_with_note(mutable=True)
    loader = runs.Loader(tables, NotedToken)
    with psycopg.connect(database_url) as conn:
        conn.execute("ALTER TABLE token ADD COLUMN note text")
        run = new_run(conn, now)
        [token_id] = run.tokens

        save(conn, run, tables)
        loaded = runs.load_run(conn, run.instance.id, now, loader=loader)

        token = loaded.tokens[token_id]
        assert isinstance(token, NotedToken)
        assert token.note == "first"

        token.note, token.dirty = "second", True
        save(conn, loaded, tables)
        again = runs.load_run(conn, run.instance.id, now, loader=loader)
        stored = conn.execute("SELECT note, version FROM token WHERE id = %s", (token_id,))
        assert stored.fetchone() == ("second", 1)
        conn.rollback()
    reloaded = again.tokens[token_id]
    assert isinstance(reloaded, NotedToken)
    assert reloaded.note == "second"


def test_an_immutable_column_is_written_once(database_url: str) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    tables = tables_with_note(mutable=False)
    loader = runs.Loader(tables, NotedToken)
    with psycopg.connect(database_url) as conn:
        conn.execute("ALTER TABLE token ADD COLUMN note text")
        run = new_run(conn, now)
        [token_id] = run.tokens
        save(conn, run, tables)
        loaded = runs.load_run(conn, run.instance.id, now, loader=loader)

        token = loaded.tokens[token_id]
        assert isinstance(token, NotedToken)
        token.note = "second"
        token.move_to(TokenState.READY, now)
        save(conn, loaded, tables)

        stored = conn.execute("SELECT note, state FROM token WHERE id = %s", (token_id,))
        assert stored.fetchone() == ("first", "Ready")
        conn.rollback()


def test_the_declared_statements_carry_the_declared_columns_only() -> None:
    tables = tables_with_note(mutable=True)

    noted = runs.Loader(tables, NotedToken)
    noted_ctes = persist.ctes(tables)

    assert "note" in noted.load_one and "note" not in runs.LOADER.load_one
    assert "note text" in noted_ctes["new_tokens"].one
    assert "note = r.note" in noted_ctes["changed_tokens"].many
    assert "note" not in persist.ctes()["new_tokens"].one


# Each runtime row and its table: the columns the row leaves to the command (the instance's and
# its definition's ids and key, its tenant) or to the database, and the fields only the engine
# keeps.
AGREEMENT: list[tuple[type[Any], str, set[str]]] = [
    (InstanceRow, "process_instance", set()),
    (Token, "token", set()),
    (Join, "join_state", {"instance_id"}),
    (UserTaskRow, "user_task", {"instance_id", "tenant_id"}),
    (ExternalTaskRow, "external_task", {"instance_id", "definition_key", "tenant_id"}),
    # A scheduled suspension's configuration: no instance's job has one (the database's {}).
    (JobRow, "job", {"instance_id", "definition_id", "tenant_id", "configuration"}),
    (Subscription, "event_subscription", {"instance_id", "definition_id"}),
    (IncidentRow, "incident", {"instance_id", "definition_id", "tenant_id"}),
    (Visit, "history", {"instance_id"}),
]
ENGINE_ONLY = {"is_new", "dirty", "deleted", "loaded_worker_id"}


@pytest.mark.parametrize(("row", "table", "elsewhere"), AGREEMENT)
def test_each_runtime_row_holds_the_columns_of_its_table(
    row: type[Any], table: str, elsewhere: set[str]
) -> None:
    held = {field.name for field in dataclasses.fields(row) if field.init} - ENGINE_ONLY

    assert held == {column.name for column in metadata.tables[table].columns} - elsewhere


def test_an_outbox_event_holds_what_the_view_reads_of_each_event(database_url: str) -> None:
    """An event of an outbox row is written from an `Event` (its fields, less the unset ones)
    and read by the view outbox_event, one row per event with its row's columns."""
    fields = {field.name for field in dataclasses.fields(Event)}
    with psycopg.connect(database_url) as conn:
        columns = {
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND table_name = 'outbox_event'"
            )
        }
    row_columns = {"seq", "row_seq", "txid", "instance_id", "definition_key", "created_at"}
    assert columns == fields | row_columns


CATALOG = {
    "columns": "SELECT table_name, column_name, data_type, character_maximum_length, "
    "is_nullable, column_default, is_identity FROM information_schema.columns "
    "WHERE table_schema = 'public' AND table_name <> 'alembic_version' "
    "AND table_name NOT IN (SELECT table_name FROM information_schema.views "
    "WHERE table_schema = 'public')",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
    "FROM pg_constraint WHERE connamespace = 'public'::regnamespace "
    "AND conrelid::regclass::text <> 'alembic_version'",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes "
    "WHERE schemaname = 'public' AND tablename <> 'alembic_version'",
}


def catalog(url: str) -> dict[str, set[tuple[Any, ...]]]:
    with psycopg.connect(url) as conn:
        return {part: set(conn.execute(query).fetchall()) for part, query in CATALOG.items()}


def test_the_declared_tables_are_the_migrated_tables(
    database_url: str, empty_database_url: str
) -> None:
    """Column types, defaults, constraints and partial indexes, which Alembic's comparison of
    the metadata with the database does not all look at."""
    engine = sa.create_engine(sqlalchemy_url_for(empty_database_url), poolclass=NullPool)
    try:
        metadata.create_all(engine)
    finally:
        engine.dispose()

    declared, migrated = catalog(empty_database_url), catalog(database_url)

    assert len(declared["columns"]) > 100
    assert ("token", "state", "character varying", 16, "NO", None, "NO") in declared["columns"]
    assert ("token", "ck_token_state_allowed") in {c[:2] for c in declared["constraints"]}
    assert ("user_task", "ix_user_task_open") in {i[:2] for i in declared["indexes"]}
    assert declared == migrated
