"""Parallel multi-instance completions under real races: the iterations' user tasks are completed
at the same moment from threads with their own connections. The counters are exact after every
race, and exactly one token leaves the body once the last iteration is done."""

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


def approvals() -> ProcessModel:
    return (
        ProcessBuilder("mi-race")
        .start_event("start")
        .user_task("approve", assignee="${approver}")
        .multi_instance("approve", collection="approvers", element_variable="approver")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "approve", "after", "end")
        .build()
    )


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_exactly_one_token_leaves_a_raced_parallel_body(round_engine: Engine, round_: int) -> None:
    engine = round_engine
    size = 3 + round_ % 6
    after_calls: Counter[str] = Counter()
    lock = threading.Lock()

    @engine.handler("after")
    def after(ctx: TaskContext) -> None:
        with lock:
            after_calls[str(ctx.instance_id)] += 1

    engine.deploy(approvals())
    instance = engine.start_latest("mi-race", {"approvers": [f"u{i}" for i in range(size)]})
    tasks = sorted(instance.user_tasks(), key=lambda t: t.assignee or "")
    assert len(tasks) == size
    first, last = tasks[:-1], tasks[-1]

    outcomes = race(len(first), lambda i: engine.complete_task(first[i].id, {f"v{i}": i}))
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    with engine.connection() as conn:
        counters = dict(
            conn.execute(
                "SELECT v.name, v.value FROM variable v JOIN token t "
                "ON v.scope_key = t.id::text WHERE v.instance_id = %s AND t.scope_id IS NULL",
                (instance.id,),
            ).fetchall()
        )
    assert counters == {
        "nrOfInstances": size,
        "nrOfActiveInstances": 1,
        "nrOfCompletedInstances": size - 1,
    }
    assert instance.state is InstanceState.ACTIVE
    assert after_calls == {}

    # The last iteration, raced against repeated completions of itself and of a finished one.
    def complete(i: int) -> object:
        return engine.complete_task(last.id if i % 2 == 0 else first[0].id)

    outcomes = race(4, complete)
    assert len([o for o in outcomes if not isinstance(o, Exception)]) == 1, outcomes
    assert engine.instance(instance.id).state is InstanceState.COMPLETED
    assert after_calls == {str(instance.id): 1}
    steps = [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]
    assert steps.count(("approve", "userTask", "Completed")) == size
    assert steps.count(("approve", "multiInstanceBody", "Completed")) == 1
    assert steps.count(("after", "serviceTask", "Completed")) == 1
    assert instance.variables() == {
        "approvers": [f"u{i}" for i in range(size)],
        **{f"v{i}": i for i in range(size - 1)},
    }
    with engine.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM variable WHERE instance_id = %s AND scope_key <> ''",
            (instance.id,),
        ).fetchone() == (0,)
