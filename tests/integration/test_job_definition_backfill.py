"""Migration 0031 gives the definitions deployed before it their job definitions, read from
their sources, with the ids a deployment gives them; jobs made before keep priority 0, active."""

from __future__ import annotations

import psycopg

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.db import migrate
from engine.model import TimerDefinition


def test_upgrading_to_0031_writes_the_job_definitions_of_existing_definitions(
    empty_database_url: str,
) -> None:
    migrate.upgrade(empty_database_url)
    model = (
        ProcessBuilder("older")
        .start_event("s")
        .service_task("work", handler="work", async_before=True)
        .intermediate_catch_event("pause", timer=TimerDefinition(kind="duration", text="PT5M"))
        .end_event("e")
        .chain("s", "work", "pause", "e")
        .build()
    )
    with Engine(empty_database_url, migrate=False) as engine:
        engine.deploy(model)
        engine.start_latest("older")
    query = (
        "SELECT id, node_id, job_kind, job_type, configuration, suspended, priority "
        "FROM job_definition ORDER BY node_id"
    )
    with psycopg.connect(empty_database_url) as conn:
        deployed = conn.execute(query).fetchall()
    assert [row[1:] for row in deployed] == [
        ("pause", "timer", "timer-intermediate-transition", "DURATION: PT5M", False, None),
        ("work", "async", "async-continuation", "async-before", False, None),
    ]
    migrate.downgrade(empty_database_url, "0030")
    migrate.upgrade(empty_database_url)
    with psycopg.connect(empty_database_url) as conn:
        assert conn.execute(query).fetchall() == deployed
        jobs = conn.execute("SELECT priority, suspended, due_shift_ms FROM job").fetchall()
    assert jobs == [(0, False, 0)]
