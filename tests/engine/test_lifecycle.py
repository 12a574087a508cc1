"""Instances run through every supported node kind; the handle reports what happened."""

from __future__ import annotations

from datetime import UTC
from typing import Any

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import Conflict, HandlerError, NoMatchingFlow, NotFound
from engine.states import InstanceState, TokenView
from tests.engine.processes import approval, fan_out, straight_through


def register_counting(engine: Engine, *names: str) -> dict[str, int]:
    calls = dict.fromkeys(names, 0)
    for name in names:

        def handler(ctx: TaskContext, name: str = name) -> dict[str, Any]:
            calls[name] += 1
            return {f"{name}_done": True}

        engine.register_handler(name, handler)
    return calls


def test_straight_through_instance_completes_in_one_command(engine: Engine) -> None:
    calls = register_counting(engine, "one", "two", "three")
    engine.deploy(straight_through())
    instance = engine.start_latest("straight", {"amount": 5})
    assert instance.state is InstanceState.COMPLETED
    assert calls == {"one": 1, "two": 1, "three": 1}
    assert instance.variables() == {
        "amount": 5,
        "one_done": True,
        "two_done": True,
        "three_done": True,
    }
    assert instance.tokens() == []
    [path] = instance.history()
    assert [s.node_id for s in path.steps] == ["start", "one", "two", "three", "end"]
    assert all(s.state == "Completed" for s in path.steps)
    assert path.terminal is TokenView.CONSUMED


def test_user_task_waits_then_completes_with_variables(engine: Engine) -> None:
    register_counting(engine, "prepare", "book")
    engine.deploy(approval())
    instance = engine.start_latest("approval", {"amount": 900}, business_key="order-1")
    assert instance.state is InstanceState.ACTIVE
    [position] = instance.tokens()
    assert (position.node_id, position.state) == ("review", TokenView.WAIT_FOR_EVENT)
    [task] = instance.user_tasks()
    assert task.node_id == "review" and task.name == "Review"
    engine.complete_task(task.id, {"approved": True})
    assert instance.info().state == InstanceState.COMPLETED
    assert instance.variables()["book_done"] is True
    assert instance.info().business_key == "order-1"
    assert engine.user_tasks(instance.id) == []


def test_exclusive_gateway_takes_default_flow(engine: Engine) -> None:
    register_counting(engine, "prepare", "book")
    engine.deploy(approval())
    instance = engine.start_latest("approval", {"amount": 5000})
    engine.complete_task(instance.user_tasks()[0].id, {"approved": True})
    steps = [s.node_id for s in instance.history()[0].steps]
    assert steps[-2:] == ["decide", "rejected"]
    assert "book_done" not in instance.variables()


def test_exclusive_gateway_without_match_fails_the_command(engine: Engine) -> None:
    model = (
        ProcessBuilder("no-match")
        .start_event("start")
        .exclusive_gateway("xor")
        .end_event("a")
        .end_event("b")
        .chain("start", "xor")
        .flow("xor", "a", condition="${x > 1}")
        .flow("xor", "b", condition="${x < 0}")
        .build()
    )
    engine.deploy(model)
    with pytest.raises(NoMatchingFlow, match="xor"):
        engine.start_latest("no-match", {"x": 0})
    assert engine.instance_counts() == {}


def test_terminate_end_event_ends_other_branches(engine: Engine) -> None:
    model = (
        ProcessBuilder("terminate")
        .start_event("start")
        .parallel_gateway("split")
        .user_task("wait", "Wait forever")
        .end_event("stop", terminate=True)
        .chain("start", "split")
        .chain("split", "wait")
        .chain("split", "stop")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("terminate")
    assert instance.state is InstanceState.COMPLETED
    assert instance.tokens() == []
    assert engine.user_tasks(instance.id, state="Retired")[0].node_id == "wait"


def test_cancel_suspend_resume(engine: Engine) -> None:
    engine.deploy(fan_out(2))
    register_counting(engine, "after")
    instance = engine.start_latest("fan-out-2")
    instance.suspend()
    assert instance.state is InstanceState.SUSPENDED
    with pytest.raises(Conflict, match="suspended"):
        engine.complete_task(instance.user_tasks()[0].id)
    instance.resume()
    assert instance.info().state == InstanceState.ACTIVE
    assert instance.cancel() is InstanceState.TERMINATED
    assert instance.tokens() == []
    assert {p.terminal for p in instance.history() if p.parent_id} == {TokenView.TERMINATED}
    assert engine.user_tasks(instance.id) == []
    with pytest.raises(Conflict):
        instance.cancel()


def test_missing_handler_fails_the_start_and_writes_nothing(engine: Engine) -> None:
    engine.deploy(straight_through())
    with pytest.raises(HandlerError, match="'one'"):
        engine.start_latest("straight")
    assert engine.instance_counts() == {}


def test_unknown_process_and_instance(engine: Engine) -> None:
    with pytest.raises(NotFound):
        engine.start_latest("nope")
    with pytest.raises(NotFound):
        engine.instance("00000000-0000-0000-0000-000000000000")


def test_variable_types_round_trip(engine: Engine) -> None:
    from datetime import datetime

    register_counting(engine, "one", "two", "three")
    engine.deploy(straight_through())
    when = datetime(2026, 1, 31, 10, 0, tzinfo=UTC)
    values = {
        "s": "text",
        "i": 7,
        "l": 2**40,
        "d": 1.5,
        "b": False,
        "n": None,
        "j": {"items": [1, 2], "total": 3.5},
        "t": when,
    }
    instance = engine.start_latest("straight", values)
    typed = instance.typed_variables()
    assert {k: typed[k].type for k in values} == {
        "s": "string",
        "i": "integer",
        "l": "long",
        "d": "double",
        "b": "boolean",
        "n": "null",
        "j": "json",
        "t": "date",
    }
    assert {k: typed[k].value for k in values} == values


def test_parallel_history_shows_fork_and_merge(engine: Engine) -> None:
    register_counting(engine, "after")
    engine.deploy(fan_out(3))
    instance = engine.start_latest("fan-out-3")
    for task in instance.user_tasks():
        engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    paths = {p.track_id: p for p in instance.history()}
    [root] = [p for p in paths.values() if p.parent_id is None]
    assert [s.node_id for s in root.steps] == ["start", "split"]
    children = [p for p in paths.values() if p.parent_id == root.track_id]
    assert len(children) == 3
    survivors = [p for p in children if p.merged_into is None]
    assert len(survivors) == 1
    survivor = survivors[0]
    assert {p.merged_into for p in children if p is not survivor} == {survivor.track_id}
    assert [s.node_id for s in survivor.steps][-3:] == ["join", "after", "end"]
    for p in children:
        assert p.steps[0].node_id.startswith("task_") and p.steps[1].node_id == "join"
        assert p.terminal is TokenView.CONSUMED
