"""Single-winner claims and joins under real races: threads on separate connections."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.core.handlers import TaskContext
from engine.errors import InvariantViolation, InvariantViolationKind
from engine.states import InstanceState, TokenView
from tests.engine.processes import async_work, fan_out

CLAIMERS = 8
CLAIM_ROUNDS = 200
JOIN_ROUNDS = 50


def race(workers: int, action: Callable[[int], Any]) -> list[Any]:
    """Run `action(i)` in `workers` threads released together; return results or exceptions."""
    barrier = threading.Barrier(workers)

    def run(i: int) -> Any:
        barrier.wait()
        try:
            return action(i)
        except Exception as exc:  # collected and asserted by the caller
            return exc

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(run, range(workers)))


def test_exactly_one_of_eight_claimers_wins_every_round(engine: Engine) -> None:
    side_effects: Counter[str] = Counter()
    lock = threading.Lock()

    @engine.handler("work")
    def work(ctx: TaskContext) -> None:
        with lock:
            side_effects[str(ctx.instance_id)] += 1

    engine.deploy(async_work())
    for _ in range(CLAIM_ROUNDS):
        instance = engine.start_latest("async-work")
        [token] = instance.tokens()
        assert (token.node_id, token.state) == ("work", TokenView.ALIVE)

        def claim(_: int, token_id: UUID = token.token_id, version: int = token.version) -> object:
            return engine.execute_token(token_id, version)

        outcomes = race(CLAIMERS, claim)
        winners = [o for o in outcomes if not isinstance(o, Exception)]
        losers = [o for o in outcomes if isinstance(o, Exception)]
        assert len(winners) == 1, outcomes
        assert all(
            isinstance(e, InvariantViolation)
            and e.kind is InvariantViolationKind.TOKEN_CLAIM_CONFLICT
            for e in losers
        ), losers
        assert instance.state is InstanceState.COMPLETED
        assert side_effects[str(instance.id)] == 1


@pytest.mark.parametrize("round_", range(JOIN_ROUNDS))
def test_exactly_one_token_leaves_the_join(round_engine: Engine, round_: int) -> None:
    engine = round_engine
    branches = 5 + round_ % 16
    after_calls: Counter[str] = Counter()
    lock = threading.Lock()

    @engine.handler("after")
    def after(ctx: TaskContext) -> None:
        with lock:
            after_calls[str(ctx.instance_id)] += 1

    engine.deploy(fan_out(branches))
    instance = engine.start_latest(f"fan-out-{branches}")
    tasks = instance.user_tasks()
    assert len(tasks) == branches
    outcomes = race(branches, lambda i: engine.complete_task(tasks[i].id, {f"v{i}": i}))
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert instance.state is InstanceState.COMPLETED
    assert after_calls == {str(instance.id): 1}
    history = instance.history()
    after_visits = [s for p in history for s in p.steps if s.node_id == "after"]
    assert len(after_visits) == 1
    merged = [p for p in history if p.merged_into is not None]
    assert len(merged) == branches - 1
    assert len({p.merged_into for p in merged}) == 1
    assert len(instance.variables()) == branches
