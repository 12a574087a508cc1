"""The event-based gateway under real races: two messages, the due timer and a signal are
triggered at the same moment from threads with their own connections. Every round exactly one
event wins, the others' subscriptions and jobs are gone, and the losers see only the documented
outcomes: a message matches nothing, the timer job is gone, the signal reaches no one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.job_retries import JobResult
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.commands.messages import DeliveryResult
from engine.errors import NotFound
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState, JobOutcome
from tests.engine.clock import ManualClock
from tests.engine.test_concurrency import race

ROUNDS = 50
EVENTS = ("paid", "withdrawn", "expired", "stopped")


def offer() -> ProcessModel:
    return (
        ProcessBuilder("offer-race")
        .start_event("start")
        .event_based_gateway("wait")
        .intermediate_catch_event("paid", message="payment")
        .intermediate_catch_event("withdrawn", message="withdrawal")
        .intermediate_catch_event("expired", timer=TimerDefinition(kind="duration", text="PT1H"))
        .intermediate_catch_event("stopped", signal="stop-offers")
        .end_event("end")
        .chain("start", "wait", "paid", "end")
        .chain("wait", "withdrawn", "end")
        .chain("wait", "expired", "end")
        .chain("wait", "stopped", "end")
        .build()
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=12) as engine:
        yield engine


def left_over(engine: Engine, instance_id: UUID) -> tuple[int, int]:
    """(timer jobs, event subscriptions) the instance still has."""
    with engine.connection() as conn:
        [(jobs,)] = conn.execute(
            "SELECT count(*) FROM job WHERE instance_id = %s", (instance_id,)
        ).fetchall()
        [(subscriptions,)] = conn.execute(
            "SELECT count(*) FROM event_subscription WHERE instance_id = %s", (instance_id,)
        ).fetchall()
    return jobs, subscriptions


def test_exactly_one_event_wins_every_round(timed: Engine, clock: ManualClock) -> None:
    timed.deploy(offer())
    winners: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        key = f"offer-{round_}"
        instance = timed.start_latest("offer-race", business_key=key)
        assert left_over(timed, instance.id) == (1, 3)
        clock.advance(hours=1)
        [job_id] = timed.run(AcquireJobs("racer", 10, 60)).job_ids

        def trigger(i: int, key: str = key, job_id: str = job_id) -> Any:
            if i == 0:
                return timed.correlate_message("payment", business_key=key)
            if i == 1:
                return timed.correlate_message("withdrawal", business_key=key)
            if i == 2:
                return timed.run(ExecuteJob(UUID(job_id), "racer"))
            return timed.signal("stop-offers")

        outcomes = race(4, trigger)
        won: list[int] = []
        for i, outcome in enumerate(outcomes):
            if isinstance(outcome, NotFound):
                assert i in (0, 1) and "matches no waiting instance" in str(outcome)
            elif isinstance(outcome, JobResult):
                assert outcome.outcome in (JobOutcome.EXECUTED, JobOutcome.GONE), outcome
                if outcome.outcome == JobOutcome.EXECUTED:
                    won.append(i)
            else:
                assert isinstance(outcome, DeliveryResult), outcome
                assert len(outcome.deliveries) <= 1
                if outcome.deliveries:
                    assert outcome.deliveries[0]["instance_id"] == str(instance.id)
                    won.append(i)
        assert len(won) == 1, (round_, outcomes)
        assert instance.state is InstanceState.COMPLETED
        assert left_over(timed, instance.id) == (0, 0)
        visited = [s.node_id for p in instance.history() for s in p.steps]
        caught = [node for node in visited if node in EVENTS]
        assert caught == [EVENTS[won[0]]], (round_, visited, outcomes)
        assert visited.count("wait") == 1 and visited.count("end") == 1
        winners[caught[0]] += 1
    assert sum(winners.values()) == ROUNDS
    assert timed.instance_counts() == {"Completed": ROUNDS}
