"""The diverging inclusive gateway: every flow whose condition is true, else the default."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.errors import NoMatchingFlow
from engine.handlers import TaskContext
from engine.model import ProcessModel
from engine.states import InstanceState, TokenView

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def count_calls(engine: Engine, name: str) -> list[UUID]:
    """Register a handler `name` that records the instance of every call."""
    calls: list[UUID] = []

    def handler(ctx: TaskContext) -> None:
        calls.append(ctx.instance_id)

    engine.register_handler(name, handler)
    return calls


def join_rows(engine: Engine, instance_id: UUID) -> list[tuple[str, list[str]]]:
    """The join_state rows of the instance: (gateway, arrived token ids)."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT gateway_id, arrivals FROM join_state WHERE instance_id = %s "
            "ORDER BY gateway_id",
            (instance_id,),
        ).fetchall()
    return [(gateway, [a["token"] for a in arrivals]) for gateway, arrivals in rows]


def task_of(instance: InstanceHandle, node_id: str) -> UUID:
    [task] = [t for t in instance.user_tasks() if t.node_id == node_id]
    return task.id


def positions(instance: InstanceHandle) -> list[tuple[str, TokenView]]:
    return sorted((t.node_id, t.state) for t in instance.tokens())


# --- diverging ---------------------------------------------------------------------------------


def choice(key: str = "incl-choice", *, default: bool = True) -> ProcessModel:
    """split takes a when x >= 1, b when x >= 2, c (the default) when neither."""
    builder = (
        ProcessBuilder(key)
        .start_event("start")
        .inclusive_gateway("split", default="to_c" if default else None)
        .user_task("a", "A")
        .user_task("b", "B")
        .end_event("end_a")
        .end_event("end_b")
        .chain("start", "split")
        .flow("split", "a", id="to_a", condition="${x >= 1}")
        .flow("split", "b", id="to_b", condition="${x >= 2}")
        .chain("a", "end_a")
        .chain("b", "end_b")
    )
    if default:
        builder.user_task("c", "C").end_event("end_c").chain("c", "end_c")
        builder.flow("split", "c", id="to_c")
    return builder.build()


@pytest.mark.parametrize(
    ("x", "taken"),
    [(0, ["c"]), (1, ["a"]), (5, ["a", "b"])],
    ids=["none-true-default", "one-true", "several-true"],
)
def test_diverging_takes_every_true_flow_or_the_default(
    engine: Engine, x: int, taken: list[str]
) -> None:
    engine.deploy(choice())
    instance = engine.start_latest("incl-choice", {"x": x})
    assert sorted(t.node_id for t in instance.user_tasks()) == taken
    assert positions(instance) == [(node, TokenView.WAIT_FOR_EVENT) for node in taken]
    forked = [p for p in instance.history() if p.parent_id is not None]
    assert len(forked) == (len(taken) if len(taken) > 1 else 0)


def test_diverging_with_no_true_flow_and_no_default_fails_and_writes_nothing(
    engine: Engine,
) -> None:
    engine.deploy(choice("incl-strict", default=False))
    with pytest.raises(NoMatchingFlow, match="inclusive gateway 'split'"):
        engine.start_latest("incl-strict", {"x": 0})
    assert engine.instance_counts() == {}
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM token").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM user_task").fetchone() == (0,)


def test_no_true_flow_later_in_the_instance_rolls_the_command_back(engine: Engine) -> None:
    model = (
        ProcessBuilder("incl-late")
        .start_event("start")
        .user_task("review", "Review")
        .inclusive_gateway("split")
        .end_event("a")
        .end_event("b")
        .chain("start", "review", "split")
        .flow("split", "a", condition="${x == 1}")
        .flow("split", "b", condition="${x == 2}")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("incl-late")
    task_id = task_of(instance, "review")
    with pytest.raises(NoMatchingFlow, match="'split'"):
        engine.complete_task(task_id, {"x": 3})
    assert positions(instance) == [("review", TokenView.WAIT_FOR_EVENT)]
    assert "x" not in instance.variables()
    engine.complete_task(task_id, {"x": 2})
    assert instance.state is InstanceState.COMPLETED
