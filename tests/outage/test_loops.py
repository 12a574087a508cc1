"""Background loops through an outage the engine finds (its connection attempts refused): a
worker keeps the result of the task in hand and reports it once the database is back; the job
executor backs off and runs the due jobs within moments of the return."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.loops.jobs import JobExecutor
from engine.loops.worker import Task, Worker
from engine.states import InstanceState
from tests.outage.test_http import cut_off


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4) as engine:
        yield engine


@pytest.fixture
def other(database_url: str) -> Iterator[Engine]:
    """An engine of another process, say, which the outage of `engine` does not touch: the
    test looks and starts through it."""
    with Engine(database_url, migrate=False, pool_size=2) as other:
        yield other


def test_a_worker_reports_its_result_once_the_database_is_back(
    engine: Engine, other: Engine
) -> None:
    engine.deploy(
        ProcessBuilder("charged")
        .start_event("start")
        .service_task("charge", topic="charge")
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )
    instance = other.start_latest("charged")
    worker = Worker(engine, long_poll_seconds=0.5, lock_ms=20_000)
    handled: list[str] = []
    cut: list[list[bool]] = []

    @worker.topic("charge")
    def charge(task: Task) -> dict[str, str]:
        handled.append(task.id)
        cut.append(cut_off(engine))  # the database goes away while the handler runs
        return {"charged": "yes"}

    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not cut and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cut, "the worker never fetched the task"
        time.sleep(1.5)  # the report fails meanwhile, and is kept
        assert instance.info().state == InstanceState.ACTIVE
        cut[0][0] = False
        assert instance.wait_completion(10) is InstanceState.COMPLETED
    finally:
        worker.stop()
    assert len(handled) == 1
    assert instance.variables()["charged"] == "yes"


def test_the_job_executor_resumes_within_moments_of_the_return(
    engine: Engine, other: Engine
) -> None:
    engine.deploy(
        ProcessBuilder("later")
        .start_event("start")
        .service_task("work", handler="work", async_before=True)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    ran = threading.Event()
    engine.register_handler("work", lambda ctx: ran.set())
    executor = JobExecutor(engine, poll_interval=0.5)
    state = cut_off(engine)
    executor.start()
    try:
        time.sleep(4)  # a few failed rounds: the back-off grows, to 2 s at most
        state[0] = False
        back = time.monotonic()
        instance = other.start_latest("later")
        assert instance.wait_completion(10) is InstanceState.COMPLETED
        assert time.monotonic() - back < 5
        assert ran.is_set() and executor.running
    finally:
        executor.stop()
