"""The inclusive gateway: diverging on every true condition, converging once no live token of
its scope can still reach it (Camunda 7's rule), re-evaluated whenever a token ends or moves."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import NoMatchingFlow
from engine.model import InclusiveGateway, ProcessModel
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


# --- converging --------------------------------------------------------------------------------


def diamond(key: str, branches: int) -> ProcessModel:
    """split -> task_i (taken when take_i) -> join -> after (handler) -> end."""
    builder = (
        ProcessBuilder(key)
        .start_event("start")
        .inclusive_gateway("split")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("join", "after", "end")
    )
    for i in range(branches):
        builder.user_task(f"task_{i}", f"Task {i}")
        builder.flow("split", f"task_{i}", condition=f"${{take_{i}}}")
        builder.chain(f"task_{i}", "join")
    return builder.build()


def test_join_after_all_taken_branches_fires_once(engine: Engine) -> None:
    after = count_calls(engine, "after")
    engine.deploy(diamond("incl-diamond", 3))
    instance = engine.start_latest("incl-diamond", {"take_0": True, "take_1": True, "take_2": True})
    engine.complete_task(task_of(instance, "task_0"))
    engine.complete_task(task_of(instance, "task_2"))
    assert positions(instance) == [
        ("join", TokenView.WAIT_FOR_EVENT),
        ("join", TokenView.WAIT_FOR_EVENT),
        ("task_1", TokenView.WAIT_FOR_EVENT),
    ]
    [(gateway, arrived)] = join_rows(engine, instance.id)
    assert gateway == "join" and len(arrived) == 2
    assert after == []
    engine.complete_task(task_of(instance, "task_1"))
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]
    assert join_rows(engine, instance.id) == []
    merged = [p for p in instance.history() if p.merged_into is not None]
    assert len(merged) == 2 and len({p.merged_into for p in merged}) == 1


def test_join_waits_only_for_the_branches_taken(engine: Engine) -> None:
    after = count_calls(engine, "after")
    engine.deploy(diamond("incl-some", 3))
    instance = engine.start_latest("incl-some", {"take_0": True, "take_1": False, "take_2": True})
    assert sorted(t.node_id for t in instance.user_tasks()) == ["task_0", "task_2"]
    engine.complete_task(task_of(instance, "task_2"))
    assert after == []
    engine.complete_task(task_of(instance, "task_0"))
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]


def test_a_single_taken_branch_passes_the_join(engine: Engine) -> None:
    after = count_calls(engine, "after")
    engine.deploy(diamond("incl-one", 3))
    instance = engine.start_latest("incl-one", {"take_0": False, "take_1": True, "take_2": False})
    engine.complete_task(task_of(instance, "task_1"))
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]
    assert [p.merged_into for p in instance.history()] == [None]


def test_a_branch_that_cannot_reach_the_join_does_not_block_it(engine: Engine) -> None:
    """One branch ends at an end event: the join fires without it, whichever finishes first."""
    after = count_calls(engine, "after")
    model = (
        ProcessBuilder("incl-early-end")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("joins", "Joins")
        .user_task("ends", "Ends")
        .end_event("early")
        .exclusive_gateway("pass")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "joins", "join")
        .chain("split", "ends", "early")
        .chain("split", "pass", "join")
        .chain("join", "after", "end")
        .build()
    )
    engine.deploy(model)
    first = engine.start_latest("incl-early-end")
    # `pass` arrived at once; `ends` is alive but cannot reach the join; `joins` can.
    assert after == []
    engine.complete_task(task_of(first, "joins"))
    assert after == [first.id]
    assert positions(first) == [("ends", TokenView.WAIT_FOR_EVENT)]
    engine.complete_task(task_of(first, "ends"))
    assert first.state is InstanceState.COMPLETED

    second = engine.start_latest("incl-early-end")
    engine.complete_task(task_of(second, "ends"))
    assert after == [first.id]
    engine.complete_task(task_of(second, "joins"))
    assert second.state is InstanceState.COMPLETED
    assert after == [first.id, second.id]


def routed(key: str) -> ProcessModel:
    """split -> a -> join; split -> b -> route (xor): to the join, to an end event, or back to b."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("a", "A")
        .user_task("b", "B")
        .exclusive_gateway("route", default="b_joins")
        .end_event("away")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "a", "join")
        .chain("split", "b", "route")
        .flow("route", "away", condition="${leave}")
        .flow("route", "b", condition="${again}")
        .flow("route", "join", id="b_joins")
        .chain("join", "after", "end")
        .build()
    )


def test_a_branch_routed_away_releases_the_waiting_join(engine: Engine) -> None:
    after = count_calls(engine, "after")
    engine.deploy(routed("incl-routed"))
    instance = engine.start_latest("incl-routed", {"leave": False, "again": False})
    engine.complete_task(task_of(instance, "a"))
    assert positions(instance) == [
        ("b", TokenView.WAIT_FOR_EVENT),
        ("join", TokenView.WAIT_FOR_EVENT),
    ]
    assert after == []
    # b's token ends at `away`: in the same command the join has nothing left to wait for.
    engine.complete_task(task_of(instance, "b"), {"leave": True})
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]
    assert join_rows(engine, instance.id) == []
    [joined] = [p for p in instance.history() if any(s.node_id == "after" for s in p.steps)]
    assert [s.node_id for s in joined.steps][-4:] == ["a", "join", "after", "end"]


def test_a_loop_upstream_keeps_the_join_waiting(engine: Engine) -> None:
    after = count_calls(engine, "after")
    engine.deploy(routed("incl-loop"))
    instance = engine.start_latest("incl-loop", {"leave": False, "again": False})
    engine.complete_task(task_of(instance, "a"))
    for _ in range(3):
        engine.complete_task(task_of(instance, "b"), {"again": True})
        assert positions(instance) == [
            ("b", TokenView.WAIT_FOR_EVENT),
            ("join", TokenView.WAIT_FOR_EVENT),
        ]
        assert after == []
    engine.complete_task(task_of(instance, "b"), {"again": False})
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]
    merged = [p for p in instance.history() if p.merged_into is not None]
    assert len(merged) == 1


def test_the_join_fires_again_for_a_token_that_comes_round_a_loop(engine: Engine) -> None:
    """A join in a loop: each pass through it is its own firing."""
    after = count_calls(engine, "after")
    model = (
        ProcessBuilder("incl-join-in-loop")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("a", "A")
        .user_task("b", "B")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .exclusive_gateway("more", default="done")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "a", "join")
        .chain("split", "b", "join")
        .chain("join", "after", "more")
        .flow("more", "split", condition="${rounds > 1}")
        .flow("more", "end", id="done")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("incl-join-in-loop", {"rounds": 2})
    engine.complete_task(task_of(instance, "a"))
    engine.complete_task(task_of(instance, "b"), {"rounds": 2})
    assert after == [instance.id]
    assert sorted(t.node_id for t in instance.user_tasks()) == ["a", "b"]
    engine.complete_task(task_of(instance, "b"), {"rounds": 1})
    assert after == [instance.id]
    engine.complete_task(task_of(instance, "a"))
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id, instance.id]


def test_a_token_parked_before_an_asynchronous_join_still_counts(engine: Engine) -> None:
    after = count_calls(engine, "after")
    model = (
        ProcessBuilder("incl-async-join")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("a", "A")
        .user_task("b", "B")
        .inclusive_gateway("join", async_before=True)
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "a", "join")
        .chain("split", "b", "join")
        .chain("join", "after", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("incl-async-join")
    engine.complete_task(task_of(instance, "a"))
    engine.complete_task(task_of(instance, "b"))
    parked = instance.tokens()
    assert [(t.node_id, t.state) for t in parked] == [("join", TokenView.ALIVE)] * 2
    first, second = parked
    engine.execute_token(first.token_id, first.version)
    assert after == []
    assert positions(instance) == [("join", TokenView.ALIVE), ("join", TokenView.WAIT_FOR_EVENT)]
    engine.execute_token(second.token_id, second.version)
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]


def scoped(key: str, *, sub_reaches_join: bool) -> ProcessModel:
    """split -> a -> join, and split -> sub (an embedded subprocess with a user task `inner`)
    -> the join or an end event of its own."""
    builder = (
        ProcessBuilder(key)
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("a", "A")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .user_task("inner", "Inner", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "inner", "sub_end")
        .inclusive_gateway("join")
        .service_task("after", handler="after")
        .end_event("end")
        .chain("start", "split")
        .chain("split", "a", "join")
        .chain("split", "sub")
        .chain("join", "after", "end")
    )
    if sub_reaches_join:
        builder.chain("sub", "join")
    else:
        builder.end_event("sub_done").chain("sub", "sub_done")
    return builder.build()


def test_tokens_inside_a_subprocess_that_cannot_reach_the_join_do_not_block_it(
    engine: Engine,
) -> None:
    after = count_calls(engine, "after")
    engine.deploy(scoped("incl-scope-apart", sub_reaches_join=False))
    instance = engine.start_latest("incl-scope-apart")
    engine.complete_task(task_of(instance, "a"))
    assert after == [instance.id]
    assert positions(instance) == [
        ("inner", TokenView.WAIT_FOR_EVENT),
        ("sub", TokenView.WAIT_FOR_EVENT),
    ]
    engine.complete_task(task_of(instance, "inner"))
    assert instance.state is InstanceState.COMPLETED


def test_a_subprocess_upstream_of_the_join_holds_it_until_the_subprocess_ends(
    engine: Engine,
) -> None:
    after = count_calls(engine, "after")
    engine.deploy(scoped("incl-scope-upstream", sub_reaches_join=True))
    instance = engine.start_latest("incl-scope-upstream")
    engine.complete_task(task_of(instance, "a"))
    assert after == []
    engine.complete_task(task_of(instance, "inner"))
    assert instance.state is InstanceState.COMPLETED
    assert after == [instance.id]


def test_a_join_inside_a_subprocess_ignores_tokens_outside_it(engine: Engine) -> None:
    """The outer token sits at a task that leads back into the subprocess: a new scope, not
    this one, so the inner join fires."""
    after = count_calls(engine, "after")
    model = (
        ProcessBuilder("incl-inner-join")
        .start_event("start")
        .parallel_gateway("fork")
        .user_task("outer", "Outer")
        .sub_process("sub")
        .start_event("s_start", parent="sub")
        .inclusive_gateway("s_split", parent="sub")
        .user_task("s_a", "SA", parent="sub")
        .user_task("s_b", "SB", parent="sub")
        .inclusive_gateway("s_join", parent="sub")
        .service_task("after", handler="after", parent="sub")
        .end_event("s_end", parent="sub")
        .chain("s_start", "s_split")
        .chain("s_split", "s_a", "s_join")
        .chain("s_split", "s_b", "s_join")
        .chain("s_join", "after", "s_end")
        .end_event("end")
        .end_event("outer_end")
        .chain("start", "fork")
        .chain("fork", "sub", "end")
        .chain("fork", "outer", "outer_end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("incl-inner-join")
    engine.complete_task(task_of(instance, "s_a"))
    assert after == []
    engine.complete_task(task_of(instance, "s_b"))
    assert after == [instance.id]
    assert positions(instance) == [("outer", TokenView.WAIT_FOR_EVENT)]
    engine.complete_task(task_of(instance, "outer"))
    assert instance.state is InstanceState.COMPLETED


def test_a_mixed_gateway_joins_then_chooses_its_outgoing_flows(engine: Engine) -> None:
    model = (
        ProcessBuilder("incl-mixed")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("a", "A")
        .user_task("b", "B")
        .inclusive_gateway("both", default="to_z")
        .user_task("y", "Y")
        .user_task("z", "Z")
        .chain("start", "split")
        .chain("split", "a", "both")
        .chain("split", "b", "both")
        .flow("both", "y", condition="${pick_y}")
        .flow("both", "z", id="to_z")
        .end_event("end_y")
        .end_event("end_z")
        .chain("y", "end_y")
        .chain("z", "end_z")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("incl-mixed", {"pick_y": False})
    engine.complete_task(task_of(instance, "a"))
    engine.complete_task(task_of(instance, "b"))
    assert [t.node_id for t in instance.user_tasks()] == ["z"]
    again = engine.start_latest("incl-mixed", {"pick_y": True})
    engine.complete_task(task_of(again, "b"))
    engine.complete_task(task_of(again, "a"))
    assert [t.node_id for t in again.user_tasks()] == ["y"]


def test_cancelling_an_instance_clears_its_waiting_inclusive_join(engine: Engine) -> None:
    count_calls(engine, "after")
    engine.deploy(diamond("incl-cancel", 2))
    instance = engine.start_latest("incl-cancel", {"take_0": True, "take_1": True})
    engine.complete_task(task_of(instance, "task_0"))
    assert len(join_rows(engine, instance.id)) == 1
    assert instance.cancel() is InstanceState.TERMINATED
    assert join_rows(engine, instance.id) == []


# --- a Camunda Modeler file --------------------------------------------------------------------


def test_a_modeler_file_with_inclusive_gateways_deploys_and_runs(engine: Engine) -> None:
    path = DATA / "inclusive_checks.bpmn"
    checks: list[dict[str, Any]] = []

    def archive(ctx: TaskContext) -> None:
        checks.append(dict(ctx.variables))

    engine.register_handler("archive", archive)
    [definition] = engine.deploy(path).definitions
    model = engine.model(definition["id"], definition["key"])
    split = model.node("Gateway_Checks")
    assert isinstance(split, InclusiveGateway) and split.default_flow == "Flow_NoChecks"
    assert isinstance(model.node("Gateway_ChecksDone"), InclusiveGateway)

    instance = engine.start_latest("inclusive-checks", {"amount": 20000, "foreign": False})
    assert sorted(t.node_id for t in instance.user_tasks()) == ["Task_Finance"]
    engine.complete_task(task_of(instance, "Task_Finance"), {"finance_ok": True})
    assert instance.state is InstanceState.COMPLETED
    assert checks == [{"amount": 20000, "foreign": False, "finance_ok": True}]

    both = engine.start_latest("inclusive-checks", {"amount": 20000, "foreign": True})
    assert sorted(t.node_id for t in both.user_tasks()) == ["Task_Customs", "Task_Finance"]
    engine.complete_task(task_of(both, "Task_Customs"))
    assert both.info().state == InstanceState.ACTIVE
    engine.complete_task(task_of(both, "Task_Finance"))
    assert both.state is InstanceState.COMPLETED
    assert len(checks) == 2

    none = engine.start_latest("inclusive-checks", {"amount": 10, "foreign": False})
    assert none.state is InstanceState.COMPLETED
    assert len(checks) == 3
