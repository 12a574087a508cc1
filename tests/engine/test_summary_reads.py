"""The console's counts read summary rows only: every statement of the overview, the definitions
list, a definition's version counts and heatmap, and the trends, as PostgreSQL plans it, scans
none of the big tables; and what they read equals what the big tables say."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.summaries import FoldSummaries
from engine.core.handlers import TaskContext
from engine.queries import console
from engine.queries import summaries as summary_reads

BIG_TABLES = {"process_instance", "token", "history", "incident"}


def relations(plan: Any) -> set[str]:
    """Every relation a plan (EXPLAIN's JSON) scans."""
    found: set[str] = set()
    if isinstance(plan, dict):
        if "Relation Name" in plan:
            found.add(plan["Relation Name"])
        for value in plan.values():
            found |= relations(value)
    elif isinstance(plan, list):
        for item in plan:
            found |= relations(item)
    return found


class Explaining(psycopg.Cursor[Any]):
    """A cursor that has each statement explained before it runs, collecting what it scans."""

    scanned: list[set[str]] = []

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        text = query if isinstance(query, str) else query.as_string(self.connection)
        with psycopg.Cursor(self.connection) as plain:
            (plan,) = plain.execute(f"EXPLAIN (FORMAT JSON) {text}", params).fetchone() or (None,)
        Explaining.scanned.append(relations(plan))
        return super().execute(query, params, **kwargs)


def model() -> Any:
    return (
        ProcessBuilder("reads")
        .start_event("start")
        .user_task("review", "Review")
        .service_task("charge", handler="charge", async_before=True)
        .end_event("end")
        .chain("start", "review", "charge", "end")
        .build()
    )


@pytest.fixture
def filled(engine: Engine) -> Iterator[Engine]:
    @engine.handler("charge")
    def charge(ctx: TaskContext) -> None:
        if ctx.variables.get("fail"):
            raise RuntimeError("declined")

    engine.deploy(model())
    for n in range(6):
        instance = engine.start_latest("reads", {"fail": n == 0})
        if n < 4:
            [task] = engine.user_tasks(instance.id)
            engine.complete_task(task.id)
            [job] = engine.jobs(instance.id)
            for _ in range(3):
                engine.execute_job(job.id)
    engine.run(FoldSummaries())
    engine.start_latest("reads")  # a delta not folded yet
    yield engine


def scanned_by(engine: Engine, read: Callable[[psycopg.Connection[Any]], Any]) -> set[str]:
    Explaining.scanned = []
    with engine.connection() as conn:
        conn.cursor_factory = Explaining
        try:
            read(conn)
        finally:
            conn.cursor_factory = psycopg.Cursor
    assert Explaining.scanned, "the read ran no statement"
    return set().union(*Explaining.scanned)


NOW = datetime.now(UTC)

READS: dict[str, Callable[[psycopg.Connection[Any]], Any]] = {
    "activity": lambda conn: console.activity(conn, NOW),
    "definition_summaries": lambda conn: console.definition_summaries(conn),
    "version_counts": lambda conn: console.version_counts(conn, "reads"),
    "definition_node_stats": lambda conn: console.definition_node_stats(
        conn,
        conn.execute("SELECT id FROM process_definition").fetchone()[0],  # type: ignore[index]
    ),
    "trends": lambda conn: summary_reads.trends(conn, NOW),
    "trends of a key": lambda conn: summary_reads.trends(conn, NOW, "reads"),
    "trends by key": lambda conn: summary_reads.trends_by_key(conn, NOW),
}


@pytest.mark.parametrize("name", list(READS))
def test_the_console_counts_scan_no_big_table(filled: Engine, name: str) -> None:
    scanned = scanned_by(filled, READS[name])

    assert scanned & BIG_TABLES == set()
    assert scanned & {"instance_summary", "node_summary", "activity_bucket", "summary_delta"}


def test_the_console_counts_equal_the_tables(filled: Engine) -> None:
    engine = filled
    now = datetime.now(UTC)
    with engine.connection() as conn:
        states = dict(
            conn.execute("SELECT state, count(*) FROM process_instance GROUP BY state").fetchall()
        )
        definition = conn.execute("SELECT id FROM process_definition").fetchone()
    assert states == {"Active": 4, "Completed": 3}
    activity = console.activity(engine, now)
    assert activity.states == states
    assert activity.open_incidents == 1
    assert activity.trends.hour_started == 7
    assert sum(p.started for p in activity.trends.hour) == 7
    assert activity.trends.hour[-1].started >= 1
    assert sum(p.completed for p in activity.trends.hour) == 3
    [summary] = console.definition_summaries(engine)
    assert (summary.key, summary.states, summary.open_incidents) == ("reads", states, 1)
    assert definition is not None
    assert console.version_counts(engine, "reads") == {definition[0]: states}
    stats = {s.node_id: s for s in console.definition_node_stats(engine, definition[0])}
    assert (stats["review"].active_tokens, stats["review"].visits) == (3, 7)
    assert (stats["charge"].active_tokens, stats["charge"].open_incidents) == (1, 1)
    assert stats["charge"].completed_visits == 3
    assert stats["charge"].average_seconds is not None
    assert stats["end"].visits == 3
    trends = summary_reads.trends(engine, now, "reads")
    assert [len(trends.hour), len(trends.day)] == [12, 24]
    assert sum(p.started for p in trends.day) == 7
    assert sum(p.incidents for p in trends.hour) == 1
    assert trends.hour[-1].start <= now < trends.hour[-1].start + timedelta(minutes=5)
    assert summary_reads.trends(engine, now, "elsewhere").day[-1].started == 0
    assert set(summary_reads.trends_by_key(engine, now)) == {"reads"}


COUNTS: dict[str, Callable[[psycopg.Connection[Any]], Any]] = {
    "visit_count of a node": lambda conn: summary_reads.visit_count(conn, "review", None),
    "visit_count of a definition": lambda conn: summary_reads.visit_count(
        conn,
        None,
        conn.execute("SELECT id FROM process_definition").fetchone()[0],  # type: ignore[index]
    ),
    "instance_count": lambda conn: summary_reads.instance_count(
        conn, ["Active", "Suspended"], definition_key="reads", definition_keys=["reads"]
    ),
    "state_counts": lambda conn: summary_reads.state_counts(conn),
}


@pytest.mark.parametrize("name", list(COUNTS))
def test_the_engine_rest_counts_scan_no_big_table(filled: Engine, name: str) -> None:
    scanned = scanned_by(filled, COUNTS[name])

    assert scanned & BIG_TABLES == set()


def test_the_engine_rest_counts_equal_the_tables(filled: Engine) -> None:
    engine = filled
    with engine.connection() as conn:
        definition = conn.execute("SELECT id FROM process_definition").fetchone()
        review = conn.execute("SELECT count(*) FROM history WHERE node_id = 'review'").fetchone()
        visits = conn.execute("SELECT count(*) FROM history").fetchone()
    assert definition is not None and review == (7,) and visits is not None
    assert summary_reads.visit_count(engine, "review", None) == 7
    assert summary_reads.visit_count(engine, "review", definition[0]) == 7
    assert summary_reads.visit_count(engine, "review", "other:1:x") == 0
    assert summary_reads.visit_count(engine, None, None) == visits[0]
    running = ["Created", "Active", "Suspended", "Terminating"]
    assert summary_reads.instance_count(engine, running) == 4
    assert summary_reads.instance_count(engine, running, definition_id=definition[0]) == 4
    assert summary_reads.instance_count(engine, running, definition_key="other") == 0
    assert summary_reads.instance_count(engine, ["Suspended"], definition_keys=["reads"]) == 0
    assert engine.instance_counts() == {"Active": 4, "Completed": 3}
