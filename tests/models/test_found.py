"""Reproducers of what the random models found, each with its minimal model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import TimerDefinition

HOUR = TimerDefinition(kind="duration", text="PT1H")


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine


def rows(engine: Engine, statement: str, instance: object) -> list[tuple[object, ...]]:
    with engine.connection() as conn:
        return conn.execute(statement, (instance,)).fetchall()


def test_a_boundary_timer_goes_when_its_external_task_completes_before_an_async_after(
    engine: Engine,
) -> None:
    """The sequential form of a finding of the random models: in a concurrent run, the job of
    an interrupting boundary timer on an external task with asynchronous continuations before
    and after (in a parallel branch) was seen waiting on a Completed token. One at a time, the
    completion retires the timer job and leaves only the continuation's."""
    model = (
        ProcessBuilder("boundary-after")
        .start_event("Start")
        .service_task("T", topic="fuzz", async_before=True, async_after=True)
        .boundary_event("B", "T", timer=HOUR)
        .end_event("End")
        .end_event("Late")
        .chain("Start", "T", "End")
        .flow("B", "Late")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("boundary-after")
    [before] = engine.jobs(instance.id)
    engine.run_job(before.id)
    [task] = engine.fetch_and_lock("w", {"fuzz": 60_000})
    engine.complete_external_task(task["id"], "w")
    tokens = rows(
        engine, "SELECT id, node_id, state FROM token WHERE instance_id = %s", instance.id
    )
    jobs = rows(
        engine, "SELECT node_id, kind, token_id FROM job WHERE instance_id = %s", instance.id
    )
    live = {t[0] for t in tokens if t[2] not in ("Completed", "Terminated")}
    assert [job for job in jobs if job[2] not in live] == [], (tokens, jobs)
    assert [(node, kind) for node, kind, _ in jobs] == [("T", "async-after")]
