"""Reproducers of what the random models found, each with its minimal model."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import TimerDefinition
from tests.engine.clock import ManualClock
from tests.models.driver import Driver, register
from tests.models.strategies import Spec, Sub, Task

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


def test_the_drain_ends_a_subprocess_whose_non_interrupting_event_subprocess_ran(
    database_url: str,
) -> None:
    """A finding of the slow run (seed 914): an instance with a non-interrupting event
    subprocess never ended in the drain. The drain served one message a pass, and each message
    to the event subprocess's start started one more run of it (its start listens while its
    scope lasts, as in BPMN), beside the one task a pass completes: the scope never ran out of
    runs. The drain now leaves such starts alone, and the instance ends once its tasks are
    done."""
    spec = Spec("found-non-interrupting", Sub(Task("user"), event_sub=False))
    clock = ManualClock()
    with Engine(database_url, migrate=False, pool_size=4, clock=clock) as engine:
        register(engine)
        engine.deploy(spec.model)
        driver = Driver(engine, clock, spec, seed=914)
        driver.start(random.Random(914))
        [instance] = driver.instances
        [start] = [n.id for n in spec.model.nodes if n.id.startswith("Ess")]
        engine.correlate_message(f"msg_{start}", instance_id=instance)
        driver.drain(random.Random(914))
        info = engine.instance(instance).info()
        assert (info.state, info.ended_at is not None) == ("Completed", True)
        served = [(d.action, d.node) for d in driver.decisions if d.action != "set_variables"]
        assert sorted(served) == [("complete_task", "T4"), ("complete_task", "T7"), ("start", None)]
