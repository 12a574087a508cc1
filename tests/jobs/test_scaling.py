"""A command's cost must not grow with the size of the tables: the statement that persists a
command finds the rows it changes by key; a fetch-and-lock reads a few open tasks, not all; a job
acquisition reads the instances of the jobs it considers, not every active one; and a batch of
instances loads with one read of each table."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.jobs import ExecuteJob
from engine.core.executor import PLAN_CACHE_MODE
from engine.core.runtime import InstanceRun
from engine.model import ProcessModel, TimerDefinition
from engine.store import external_tasks, jobs, persist, runs
from tests.jobs.conftest import ManualClock

LARGE_TABLES = ("process_instance", "token", "history")


class Captured(Exception):
    """Stops the command once its persist document is built: nothing commits."""


def plan_nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [plan]
    for child in plan.get("Plans", []):
        nodes.extend(plan_nodes(child))
    return nodes


def timed_process() -> ProcessModel:
    """start -> wait (timer, PT1S) -> end."""
    return (
        ProcessBuilder("timed")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT1S"))
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )


def test_persisting_a_fired_timer_does_not_scan_the_large_tables(
    engine: Engine, clock: ManualClock, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.deploy(timed_process())
    instance = engine.start_latest("timed")
    [job] = engine.jobs(instance.id)
    with psycopg.connect(database_url, autocommit=True) as conn:
        # Other instances' rows, as a database in service has them.
        conn.execute(
            "INSERT INTO process_instance (id, root_instance_id, definition_id, definition_key, "
            "state, version, started_at, ended_at) SELECT u, u, definition_id, definition_key, "
            "'Completed', 1, started_at, started_at FROM (SELECT gen_random_uuid() AS u, * "
            "FROM process_instance, generate_series(1, 7000)) AS copies"
        )
        conn.execute(
            "INSERT INTO token (id, instance_id, node_id, state, mode, version, created_at, "
            "updated_at) SELECT gen_random_uuid(), id, 'end', 'Completed', 'Forward', 1, "
            "started_at, started_at FROM process_instance WHERE state = 'Completed'"
        )
        conn.execute(
            "INSERT INTO history (id, instance_id, token_id, node_id, node_type, state, "
            "started_at, ended_at) SELECT gen_random_uuid(), id, gen_random_uuid(), 'end', "
            "'endEvent', 'Completed', started_at, started_at FROM process_instance, "
            "generate_series(1, 3) WHERE state = 'Completed'"
        )
        for table in LARGE_TABLES:
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))

    documents: list[dict[str, Any]] = []
    build = persist.document

    def capture(run: InstanceRun) -> dict[str, Any]:
        documents.append(build(run))
        raise Captured

    monkeypatch.setattr(persist, "document", capture)
    clock.advance(seconds=1)
    with pytest.raises(Captured):
        engine.run(ExecuteJob(job.id))
    monkeypatch.undo()

    doc = documents[0]
    doc["expected"] = persist.expected_rows(doc)
    statement = sql.SQL(persist.save_statement(doc).replace("%s::jsonb", "{}::jsonb")).format(
        sql.Literal(json.dumps(doc, default=str))
    )
    with psycopg.connect(database_url) as conn:
        row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + statement).fetchone()
        conn.rollback()
    assert row is not None
    scanned = {
        node.get("Relation Name")
        for node in plan_nodes(row[0][0]["Plan"])
        if node["Node Type"] == "Seq Scan"
    }
    assert scanned.isdisjoint(LARGE_TABLES), f"sequential scans of {sorted(map(str, scanned))}"


def plan_rows(plan: dict[str, Any]) -> int:
    """Rows the plan's top node returned."""
    return int(plan.get("Actual Rows", 0))


def scanned_rows(plan: dict[str, Any], tables: tuple[str, ...]) -> int:
    """Rows the plan's scans of `tables` produced, over all their loops."""
    return sum(
        int(node.get("Actual Rows", 0) * node.get("Actual Loops", 1))
        for node in plan_nodes(plan)
        if node.get("Relation Name") in tables
    )


def test_fetch_and_lock_reads_a_few_rows_not_every_open_task(
    engine: Engine, database_url: str
) -> None:
    model = (
        ProcessBuilder("charge")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    engine.deploy(model)
    engine.start_latest("charge")
    with psycopg.connect(database_url, autocommit=True) as conn:
        # Other instances waiting at the same task, as a backlog in service has them.
        conn.execute(
            "INSERT INTO process_instance (id, root_instance_id, definition_id, definition_key, "
            "state, version, started_at) SELECT u, u, definition_id, definition_key, 'Active', 0, "
            "started_at + n * interval '1 millisecond' FROM (SELECT gen_random_uuid() AS u, * "
            "FROM process_instance, generate_series(1, 2000) AS n) AS copies"
        )
        conn.execute(
            "INSERT INTO external_task (id, instance_id, token_id, node_id, topic, state, "
            "priority, created_at) SELECT gen_random_uuid(), p.id, gen_random_uuid(), 'charge', "
            "'charge', 'Open', 0, p.started_at FROM process_instance p "
            "WHERE NOT EXISTS (SELECT 1 FROM external_task e WHERE e.instance_id = p.id)"
        )
        conn.execute("ANALYZE external_task")
        conn.execute("ANALYZE process_instance")
    parameters = {
        "topics": ["charge"],
        "now": engine.clock(),
        "max_tasks": 1,
        "worker": "w",
        "durations": json.dumps([{"topic": "charge", "ms": 1000}]),
        **runs.LOAD_STATES,
        "extra": [],
    }
    with psycopg.connect(database_url) as conn:
        plan = explain_generic(conn, external_tasks.FETCH_BY_PRIORITY, parameters)
        conn.rollback()
    read = scanned_rows(plan, ("external_task", "process_instance"))
    assert read <= 200, f"one fetch read {read} rows of 2,001 open tasks and their instances"


def test_acquiring_jobs_reads_their_instances_not_every_active_one(
    engine: Engine, clock: ManualClock, database_url: str
) -> None:
    engine.deploy(timed_process())
    engine.start_latest("timed")
    with psycopg.connect(database_url, autocommit=True) as conn:
        # Active instances as a database in service has them: 2,000 waiting for something else,
        # 300 with a timer due at the same time as the first one's.
        conn.execute(
            "INSERT INTO process_instance (id, root_instance_id, definition_id, definition_key, "
            "state, version, started_at) SELECT u, u, definition_id, definition_key, 'Active', 0, "
            "started_at FROM (SELECT gen_random_uuid() AS u, * "
            "FROM process_instance, generate_series(1, 2300)) AS copies"
        )
        conn.execute(
            "INSERT INTO job (id, kind, instance_id, token_id, node_id, definition_id, due_at, "
            "retries, timer_text, repetitions_left, created_at) "
            "SELECT gen_random_uuid(), j.kind, p.id, gen_random_uuid(), j.node_id, "
            "j.definition_id, j.due_at, j.retries, j.timer_text, j.repetitions_left, j.created_at "
            "FROM job j, (SELECT id FROM process_instance "
            "             WHERE id NOT IN (SELECT instance_id FROM job) LIMIT 300) AS p"
        )
        conn.execute("ANALYZE process_instance")
        conn.execute("ANALYZE job")
    clock.advance(seconds=2)
    parameters = {
        "owner": "executor",
        "now": clock(),
        "lock_until": clock() + timedelta(minutes=5),
        "limit": 200,
        **jobs.ACQUIRABLE,
    }
    with psycopg.connect(database_url) as conn:
        plan = explain_generic(conn, jobs.ACQUIRE, parameters)
        conn.rollback()
    assert plan_rows(plan) == 200, "the acquisition locks a batch of the 301 due jobs"
    read = scanned_rows(plan, ("process_instance",))
    assert read <= 301, f"one acquisition of 200 jobs read {read} of 2,301 active instances"


def explain_generic(
    conn: psycopg.Connection[Any], query: str, parameters: dict[str, Any]
) -> dict[str, Any]:
    """EXPLAIN ANALYZE of `query`'s generic plan: the plan commands run it with (the executor
    forces generic plans), which must not depend on the values of the parameters."""
    names = list(dict.fromkeys(re.findall(r"%\((\w+)\)s", query)))
    numbered = re.sub(r"%\((\w+)\)s", lambda m: f"${names.index(m.group(1)) + 1}", query)
    conn.execute("SELECT set_config(%s, %s, true)", PLAN_CACHE_MODE)
    conn.execute(f"PREPARE probe AS {numbered}")
    with psycopg.ClientCursor(conn) as cursor:
        placeholders = ", ".join(["%s"] * len(names))
        cursor.execute(
            f"EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE probe({placeholders})",
            [parameters[name] for name in names],
        )
        row = cursor.fetchone()
    assert row is not None
    plan: dict[str, Any] = row[0][0]["Plan"]
    return plan


def test_loading_a_batch_of_instances_reads_each_table_once(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(timed_process())
    ids = sorted(engine.start_latest("timed", {"n": n}).id for n in range(40))
    parameters = {"keys": ids, **runs.LOAD_STATES, "extra": []}
    with psycopg.connect(database_url) as conn:
        plan = explain_generic(conn, runs._LOAD_MANY, parameters)
        conn.rollback()
    assert plan_rows(plan) == 40
    repeated = {
        (node["Relation Name"], node["Actual Loops"])
        for node in plan_nodes(plan)
        if node.get("Relation Name") and node["Actual Loops"] > 1
    }
    assert not repeated, f"tables read once per instance: {sorted(repeated)}"

    # The batch loads what loading each instance alone loads.
    now = engine.clock()
    with psycopg.connect(database_url) as conn:
        together = runs.load_runs(conn, ids, now)
        for instance_id in ids:
            alone = runs.load_run(conn, instance_id, now)
            loaded = together[instance_id]
            assert loaded.instance == alone.instance
            assert loaded.tokens == alone.tokens and len(loaded.tokens) == 1
            assert loaded.jobs == alone.jobs and len(loaded.jobs) == 1
            assert loaded.variables == alone.variables
        conn.rollback()
