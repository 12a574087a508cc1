"""The model side of the inclusive gateway: the nodes upstream of each converging one, computed
once per model; its default flow; parsing, writing and the builder agreeing."""

from __future__ import annotations

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.model import InclusiveGateway, ProcessModel, TimerDefinition


def looped() -> ProcessModel:
    """split -> a -> join; split -> b -> again (xor) -> b | join; c (with a timer boundary
    leading to the join) -> end; sub (subprocess) -> join; join -> after -> back to split."""
    return (
        ProcessBuilder("incl-model")
        .start_event("start")
        .inclusive_gateway("split", default="to_a")
        .user_task("a", "A")
        .user_task("b", "B")
        .exclusive_gateway("again")
        .user_task("c", "C")
        .boundary_event("late", "c", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("c_end")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .user_task("inner", "Inner", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "inner", "sub_end")
        .inclusive_gateway("join")
        .user_task("after", "After")
        .exclusive_gateway("repeat")
        .end_event("end")
        .chain("start", "split")
        .flow("split", "a", id="to_a")
        .flow("split", "b", condition="${b}")
        .flow("split", "c", condition="${c}")
        .flow("split", "sub", condition="${s}")
        .chain("a", "join")
        .chain("b", "again")
        .flow("again", "b", condition="${loop}")
        .flow("again", "join", condition="${!loop}")
        .chain("c", "c_end")
        .chain("late", "join")
        .chain("sub", "join")
        .chain("join", "after", "repeat")
        .flow("repeat", "split", condition="${more}")
        .flow("repeat", "end", condition="${!more}")
        .build()
    )


def test_upstream_of_a_join_follows_flows_back_loops_and_boundary_events() -> None:
    model = looped()
    upstream = model.upstream_of("join")
    # Everything that can lead to the join, including what follows it round the loop back.
    assert upstream == {
        "start",
        "split",
        "a",
        "b",
        "again",
        "c",
        "late",
        "sub",
        "after",
        "repeat",
    }
    # Neither the join itself, nor nodes only after it, nor nodes inside the subprocess.
    assert not upstream & {"join", "end", "c_end", "sub_start", "inner", "sub_end"}
    assert model.has_inclusive_joins
    # The split is converging too (the loop comes back to it); a task is no join at all.
    assert "join" in model.upstream_of("split")
    assert model.upstream_of("after") == frozenset()


def test_a_model_without_converging_inclusive_gateways_computes_nothing() -> None:
    model = (
        ProcessBuilder("incl-split-only")
        .start_event("start")
        .inclusive_gateway("split")
        .end_event("a")
        .end_event("b")
        .chain("start", "split")
        .chain("split", "a")
        .chain("split", "b")
        .build()
    )
    assert not model.has_inclusive_joins
    split = model.node("split")
    assert isinstance(split, InclusiveGateway) and not split.is_join


def test_write_then_parse_roundtrips_inclusive_gateways() -> None:
    model = looped()
    written = write_bpmn([model])
    assert '<bpmn:inclusiveGateway id="split"' in written and 'default="to_a"' in written
    assert parse_bpmn(written) == [model]


def test_a_default_flow_must_be_an_unconditioned_outgoing_flow() -> None:
    base = (
        ProcessBuilder("incl-bad-default")
        .start_event("start")
        .end_event("a")
        .end_event("b")
        .chain("start", "split")
    )
    with pytest.raises(ModelError, match="default flow 'nowhere' is not an outgoing flow"):
        (
            base.inclusive_gateway("split", default="nowhere")
            .flow("split", "a", condition="${x}")
            .chain("split", "b")
            .build()
        )
    with pytest.raises(ModelError, match="the default flow cannot have a condition"):
        (
            ProcessBuilder("incl-bad-default-2")
            .start_event("start")
            .end_event("a")
            .end_event("b")
            .chain("start", "split")
            .inclusive_gateway("split", default="to_a")
            .flow("split", "a", id="to_a", condition="${x}")
            .chain("split", "b")
            .build()
        )
