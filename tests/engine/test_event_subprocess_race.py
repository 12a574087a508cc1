"""Interrupting event subprocesses under real races: the message (or the due timer's job, already
acquired by an executor) and the completion of the scope's last task come at the same moment from
threads with their own connections. Every round exactly one wins: either the event subprocess
runs (the task is retired, the completion is refused) or the scope ends (the message matches
nothing, the job is gone); never both, and no subscription or job is left behind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.commands.job_retries import JobResult
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.commands.messages import DeliveryResult
from engine.commands.tasks import TaskResult
from engine.errors import Conflict, NotFound
from engine.states import InstanceState, JobOutcome
from tests.engine.clock import ManualClock
from tests.engine.test_concurrency import race
from tests.engine.test_event_subprocesses import in_subprocess, open_tasks, process_level, waits

ROUNDS = 50


@pytest.mark.parametrize("scope", ["process", "subprocess"])
def test_the_message_or_the_scope_end_wins_never_both(
    engine: Engine, database_url: str, scope: str
) -> None:
    build = process_level if scope == "process" else in_subprocess
    model = build("message", interrupting=True).build()
    engine.deploy(model)
    winners: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        key = f"{scope}-{round_}"
        instance = engine.start_latest(model.key, business_key=key)
        [task] = instance.user_tasks()
        owner = "instance" if scope == "process" else "scope"
        assert waits(database_url, instance.id) == [("subscription", "esp_start", owner)]

        def act(i: int, key: str = key, task_id: Any = task.id) -> Any:
            if i == 0:
                return engine.correlate_message("Ping", business_key=key, variables={"won": key})
            return engine.complete_task(task_id)

        message, completion = race(2, act)
        if isinstance(message, DeliveryResult):
            assert message.deliveries == [{"kind": "instance", "instance_id": str(instance.id)}]
            assert isinstance(completion, Conflict), (round_, completion)
            assert "retired" in str(completion)
            assert open_tasks(instance) == ["handle"]
            assert instance.variables()["won"] == key
            winners["message"] += 1
        else:
            assert isinstance(message, NotFound), (round_, message)
            assert "matches no waiting instance" in str(message)
            assert isinstance(completion, TaskResult), (round_, completion)
            expected = [] if scope == "process" else ["after"]
            assert open_tasks(instance) == expected
            assert "won" not in instance.variables()
            winners["completion"] += 1
        assert waits(database_url, instance.id) == []
        visited = [s.node_id for p in instance.history() for s in p.steps]
        assert visited.count("esp_start") == (1 if isinstance(message, DeliveryResult) else 0)
        while instance.user_tasks():
            engine.complete_task(instance.user_tasks()[0].id)
        assert instance.info().state == InstanceState.COMPLETED
    assert sum(winners.values()) == ROUNDS
    assert engine.instance_counts() == {"Completed": ROUNDS}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=12) as engine:
        yield engine


def test_the_due_timer_or_the_scope_end_wins_never_both(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    model = in_subprocess("timer", interrupting=True).build()
    timed.deploy(model)
    winners: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        instance = timed.start_latest(model.key)
        [task] = instance.user_tasks()
        assert waits(database_url, instance.id) == [("job", "esp_start", "scope")]
        clock.advance(hours=2)
        [job_id] = timed.run(AcquireJobs("racer", 10, 60)).job_ids

        def act(i: int, job_id: str = job_id, task_id: Any = task.id) -> Any:
            if i == 0:
                return timed.run(ExecuteJob(UUID(job_id), "racer"))
            return timed.complete_task(task_id)

        fired, completion = race(2, act)
        assert isinstance(fired, JobResult), (round_, fired)
        if fired.outcome == JobOutcome.EXECUTED:
            assert isinstance(completion, Conflict), (round_, completion)
            assert open_tasks(instance) == ["handle"]
            winners["timer"] += 1
        else:
            assert fired.outcome == JobOutcome.GONE, (round_, fired)
            assert isinstance(completion, TaskResult), (round_, completion)
            assert open_tasks(instance) == ["after"]
            winners["completion"] += 1
        assert waits(database_url, instance.id) == []
        while instance.user_tasks():
            timed.complete_task(instance.user_tasks()[0].id)
        assert instance.info().state == InstanceState.COMPLETED
    assert sum(winners.values()) == ROUNDS
