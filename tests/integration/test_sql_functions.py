"""A migrated database holds exactly the functions, triggers and views `engine/sql/functions.sql`
defines, with the same definitions.

The file's objects are created in a scratch schema (over empty copies of the public tables) inside
a transaction that is rolled back, and PostgreSQL's own renderings of both sides are compared:
`pg_get_functiondef`, `pg_get_triggerdef` and `pg_get_viewdef`, with the schema name taken out.
Function bodies are stored as written, so they are compared with runs of whitespace folded into one
space; everything else PostgreSQL renders itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from psycopg import sql

from engine.sql import functions_sql

SCRATCH = "interlock_sql_definitions"

Connection = psycopg.Connection[tuple[Any, ...]]

_FUNCTIONS = """
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
       pg_get_functiondef(p.oid), p.prosrc
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = %s
  AND NOT EXISTS (
      SELECT 1 FROM pg_depend d
      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  )
"""

_TRIGGERS = """
SELECT t.tgname || ' ON ' || c.relname, pg_get_triggerdef(t.oid)
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND NOT t.tgisinternal
"""

_VIEWS = """
SELECT c.relname, pg_get_viewdef(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind = 'v'
"""


def _unqualified(text: str, schema: str) -> str:
    return text.replace(f"{sql.Identifier(schema).as_string()}.", "").replace(f"{schema}.", "")


def definitions(conn: Connection, schema: str) -> dict[str, str]:
    """Every function, trigger and view of `schema`, by kind and name, as PostgreSQL renders it."""
    found: dict[str, str] = {}
    for name, definition, body in conn.execute(_FUNCTIONS, (schema,)).fetchall():
        header = _unqualified(definition.replace(body, "<body>"), schema)
        found[f"function {name}"] = f"{header}\n-- body: {' '.join(body.split())}"
    for name, definition in conn.execute(_TRIGGERS, (schema,)).fetchall():
        found[f"trigger {name}"] = _unqualified(definition, schema)
    for name, definition in conn.execute(_VIEWS, (schema,)).fetchall():
        found[f"view {name}"] = _unqualified(definition, schema)
    return found


@contextmanager
def declared(conn: Connection) -> Iterator[dict[str, str]]:
    """The definitions of `functions.sql`, created in a scratch schema that is rolled back."""
    with conn.transaction(force_rollback=True):
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(SCRATCH)))
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        for (table,) in tables:
            conn.execute(
                sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(
                    sql.Identifier(SCRATCH, table), sql.Identifier("public", table)
                )
            )
        conn.execute(sql.SQL("SET LOCAL search_path = {}").format(sql.Identifier(SCRATCH)))
        conn.execute(functions_sql().encode())
        yield definitions(conn, SCRATCH)


def differences(conn: Connection) -> list[str]:
    """How the public schema differs from the file: objects missing on either side, and objects
    whose definitions differ (with both renderings)."""
    actual = definitions(conn, "public")
    with declared(conn) as expected:
        pass
    found = [f"{name}: not in the database" for name in sorted(expected.keys() - actual.keys())]
    found += [f"{name}: not in functions.sql" for name in sorted(actual.keys() - expected.keys())]
    found += [
        f"{name} differs:\n  database: {actual[name]}\n  functions.sql: {expected[name]}"
        for name in sorted(expected.keys() & actual.keys())
        if expected[name] != actual[name]
    ]
    return found


@pytest.fixture
def conn(database_url: str) -> Iterator[Connection]:
    with psycopg.connect(database_url, autocommit=True) as connection:
        yield connection


def test_the_migrated_database_has_exactly_the_declared_functions_and_triggers(
    conn: Connection,
) -> None:
    assert differences(conn) == []


def test_the_file_declares_every_function_and_trigger_the_migrations_ever_kept(
    conn: Connection,
) -> None:
    with declared(conn) as expected:
        names = set(expected)
    assert names == {
        "function interlock_rows(items jsonb)",
        "function interlock_expect_rows(matched bigint[], expected jsonb)",
        "view outbox_event",
        "function interlock_notify_outbox()",
        "function interlock_notify_job()",
        "function interlock_notify_external_task()",
        "trigger outbox_notify ON outbox",
        "trigger job_notify_insert ON job",
        "trigger job_notify_update ON job",
        "trigger external_task_notify_insert ON external_task",
        "trigger external_task_notify_update ON external_task",
        "function interlock_summarise_process_instance()",
        "trigger process_instance_summarise_insert ON process_instance",
        "trigger process_instance_summarise_update ON process_instance",
        "trigger process_instance_summarise_delete ON process_instance",
        "function interlock_summarise_token()",
        "trigger token_summarise_insert ON token",
        "trigger token_summarise_update ON token",
        "trigger token_summarise_delete ON token",
        "function interlock_summarise_incident()",
        "trigger incident_summarise_insert ON incident",
        "trigger incident_summarise_update ON incident",
        "trigger incident_summarise_delete ON incident",
        "function interlock_summarise_history()",
        "trigger history_summarise_insert ON history",
        "trigger history_summarise_update ON history",
        "trigger history_summarise_delete ON history",
    }


def test_a_changed_body_a_changed_trigger_and_an_extra_function_are_reported(
    conn: Connection,
) -> None:
    conn.execute(
        "CREATE OR REPLACE FUNCTION interlock_notify_outbox() RETURNS trigger LANGUAGE plpgsql "
        "AS $$ BEGIN PERFORM pg_notify('elsewhere', ''); RETURN NULL; END $$"
    )
    conn.execute("DROP TRIGGER job_notify_update ON job")
    conn.execute(
        "CREATE TRIGGER job_notify_update AFTER UPDATE ON job FOR EACH STATEMENT "
        "EXECUTE FUNCTION interlock_notify_job()"
    )
    conn.execute("CREATE FUNCTION interlock_extra() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$")
    conn.execute("DROP TRIGGER external_task_notify_insert ON external_task")

    found = differences(conn)

    assert [line.split("\n")[0] for line in found] == [
        "trigger external_task_notify_insert ON external_task: not in the database",
        "function interlock_extra(): not in functions.sql",
        "function interlock_notify_outbox() differs:",
        "trigger job_notify_update ON job differs:",
    ]


def test_whitespace_in_a_body_is_not_a_difference(conn: Connection) -> None:
    conn.execute(
        "CREATE OR REPLACE FUNCTION interlock_rows(items jsonb) RETURNS SETOF jsonb "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 4 "
        "AS $$\n    SELECT   jsonb_array_elements(items)\n$$"
    )
    assert differences(conn) == []
    conn.execute(
        "CREATE OR REPLACE FUNCTION interlock_rows(items jsonb) RETURNS SETOF jsonb "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 8 "
        "AS $$ SELECT jsonb_array_elements(items) $$"
    )
    assert [line.split("\n")[0] for line in differences(conn)] == [
        "function interlock_rows(items jsonb) differs:"
    ]
