"""The converging inclusive gateway under real races: the branches' tasks are completed at the
same moment from threads with their own connections, one branch possibly routed away instead of
arriving. Exactly one token leaves the join and the instance completes once, every round."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.model import ProcessModel
from engine.states import InstanceState
from tests.engine.test_concurrency import race

ROUNDS = 50


def checks(branches: int) -> ProcessModel:
    """split -> task_i (when take_i) -> join, and split -> maybe -> route: to the join, or to an
    end event when `leave`; join -> after (handler) -> end."""
    builder = (
        ProcessBuilder(f"incl-race-{branches}")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("maybe", "Maybe")
        .exclusive_gateway("route", default="maybe_joins")
        .end_event("away")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "maybe", "route")
        .flow("route", "away", condition="${leave}")
        .flow("route", "join", id="maybe_joins")
        .chain("join", "after", "end")
    )
    for i in range(branches):
        builder.user_task(f"task_{i}", f"Task {i}")
        builder.flow("split", f"task_{i}", condition=f"${{take_{i}}}")
        builder.chain(f"task_{i}", "join")
    return builder.build()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_exactly_one_token_leaves_the_inclusive_join(round_engine: Engine, round_: int) -> None:
    engine = round_engine
    branches = 3 + round_ % 6
    leave = round_ % 2 == 0
    after_calls: Counter[str] = Counter()
    lock = threading.Lock()

    @engine.handler("after")
    def after(ctx: TaskContext) -> None:
        with lock:
            after_calls[str(ctx.instance_id)] += 1

    engine.deploy(checks(branches))
    # The last branch is not taken: the join must not wait for it.
    taken = {f"take_{i}": i < branches - 1 for i in range(branches)}
    instance = engine.start_latest(f"incl-race-{branches}", taken)
    tasks = instance.user_tasks()
    assert sorted(t.node_id for t in tasks) == sorted(
        ["maybe", *(f"task_{i}" for i in range(branches - 1))]
    )

    def complete(i: int) -> object:
        task = tasks[i]
        variables = {"leave": leave} if task.node_id == "maybe" else {f"v{i}": i}
        return engine.complete_task(task.id, variables)

    outcomes = race(len(tasks), complete)
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert instance.state is InstanceState.COMPLETED
    assert after_calls == {str(instance.id): 1}
    history = instance.history()
    assert len([s for p in history for s in p.steps if s.node_id == "after"]) == 1
    assert len([s for p in history for s in p.steps if s.node_id == "away"]) == int(leave)
    arrived = branches - 1 + (0 if leave else 1)
    merged = [p for p in history if p.merged_into is not None]
    assert len(merged) == arrived - 1
    assert len({p.merged_into for p in merged}) == (1 if merged else 0)
    with engine.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM join_state WHERE instance_id = %s", (instance.id,)
        ).fetchone() == (0,)
