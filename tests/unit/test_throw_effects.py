"""What an advance asks of other instances when a throw event runs, recorded on its run: a signal
throw records the broadcast; in an instance that was called, an escalation or a BPMN error that no
scope catches is handed to the caller (the command layer throws it again at the caller's call
activity). Runs in memory: one locked instance, no database."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

import pytest

from engine.builder import ProcessBuilder
from engine.core.effects import CalledCompleted, SignalThrown, ThrownToCaller
from engine.core.handlers import HandlerRegistry
from engine.core.runtime import InstanceRow, InstanceRun
from engine.language.expressions import compile_expression
from engine.language.variables import infer
from engine.model import CallMapping, ProcessModel
from engine.semantics import Advance, UnhandledError
from engine.states import InstanceState, TokenState, VisitState

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def started(
    model: ProcessModel, caller: UUID | None = None, unhandled: UnhandledError = "end"
) -> InstanceRun:
    run = InstanceRun(instance=_row(model, caller), now=NOW)
    Advance(run, model, HandlerRegistry(), unhandled_error=unhandled).start(model.none_start)
    return run


def _row(model: ProcessModel, caller: UUID | None = None) -> InstanceRow:
    """A new instance of `model`, called from the instance `caller` if one is given."""
    return InstanceRow(
        uuid4(),
        f"{model.key}:1",
        model.key,
        None,
        InstanceState.CREATED,
        0,
        NOW,
        super_instance_id=caller,
        super_token_id=uuid4() if caller else None,
    )


def live(run: InstanceRun) -> list[tuple[str, TokenState]]:
    return sorted((t.node_id, t.state) for t in run.tokens.values() if t.is_live)


def open_visits(run: InstanceRun) -> list[str]:
    return sorted(v.node_id for v in run.visits if v.state == VisitState.ACTIVE)


def _escalating() -> ProcessModel:
    return (
        ProcessBuilder("child")
        .start_event("s")
        .intermediate_throw_event("up", escalation_code="LATE")
        .user_task("work")
        .end_event("done", escalation_code="DONE_LATE")
        .chain("s", "up", "work", "done")
        .build()
    )


def test_an_uncaught_escalation_of_a_called_instance_goes_to_the_caller() -> None:
    run = started(_escalating(), caller=uuid4())
    assert run.effects == [ThrownToCaller("escalation", "LATE")]
    # Handed over, it is still ignored here: the throw event's token went on.
    assert live(run) == [("work", TokenState.WAITING)]


def test_an_uncaught_escalation_of_an_instance_nobody_called_stays_put() -> None:
    run = started(_escalating())
    assert run.effects == []
    assert live(run) == [("work", TokenState.WAITING)]


def test_an_escalation_caught_inside_the_called_instance_stays_there() -> None:
    model = (
        ProcessBuilder("child")
        .start_event("s")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .end_event("sub_up", parent="sub", escalation_code="LATE")
        .chain("sub_s", "sub_up")
        .boundary_event("caught", "sub", escalation_code="LATE")
        .user_task("handle")
        .end_event("handled")
        .chain("caught", "handle", "handled")
        .end_event("e")
        .chain("s", "sub", "e")
        .build()
    )
    run = started(model, caller=uuid4())
    assert run.effects == []
    assert live(run) == [("handle", TokenState.WAITING)]


def _failing() -> ProcessModel:
    return (
        ProcessBuilder("child")
        .start_event("s")
        .parallel_gateway("fork")
        .end_event("broken", error_code="BROKEN")
        .user_task("other")
        .end_event("e")
        .chain("s", "fork", "broken")
        .chain("fork", "other", "e")
        .build()
    )


@pytest.mark.parametrize("unhandled", ["end", "incident"])
def test_an_uncaught_error_of_a_called_instance_goes_to_the_caller_and_its_token_waits(
    unhandled: UnhandledError,
) -> None:
    run = started(_failing(), caller=uuid4(), unhandled=unhandled)
    assert run.effects == [ThrownToCaller("error", "BROKEN", "")]
    # Neither ended nor failed: the token stays at the end event with its visit open until the
    # caller's call activity ends this instance.
    assert live(run) == [("broken", TokenState.EXECUTING), ("other", TokenState.WAITING)]
    assert open_visits(run) == ["broken", "other"]
    assert run.incidents == {}
    assert run.instance.state == InstanceState.ACTIVE


def test_an_uncaught_error_of_an_instance_nobody_called_ends_its_token() -> None:
    run = started(_failing())
    assert run.effects == []
    assert live(run) == [("other", TokenState.WAITING)]


def test_an_error_caught_inside_the_called_instance_stays_there() -> None:
    model = (
        ProcessBuilder("child")
        .start_event("s")
        .user_task("t")
        .end_event("e")
        .chain("s", "t", "e")
        .sub_process("on_error", triggered_by_event=True)
        .start_event("on_error_s", parent="on_error", error=True)
        .end_event("on_error_e", parent="on_error")
        .chain("on_error_s", "on_error_e")
        .build()
    )
    run = InstanceRun(instance=_row(model, caller=uuid4()), now=NOW)
    advance = Advance(run, model, HandlerRegistry())
    advance.start(model.none_start)
    [waiting] = [t for t in run.tokens.values() if t.node_id == "t"]
    advance.throw_error(waiting, "ANY", "went wrong")
    # Caught, it stays here: the instance completes and its caller hears only that.
    assert run.effects == [CalledCompleted()]
    assert run.instance.state == InstanceState.COMPLETED


def test_signal_throw_events_record_their_broadcast_and_go_on() -> None:
    model = (
        ProcessBuilder("announcer")
        .start_event("s")
        .intermediate_throw_event(
            "announce",
            signal="Ready",
            signal_inputs=[
                CallMapping(source="order", target="orderId"),
                CallMapping(source_expression=compile_expression("${total * 2}"), target="twice"),
            ],
        )
        .user_task("t")
        .end_event("bye", signal="Gone")
        .chain("s", "announce", "t", "bye")
        .build()
    )
    run = InstanceRun(instance=_row(model), now=NOW)
    run.set_variable("order", infer("A-7"))
    run.set_variable("total", infer(21))
    advance = Advance(run, model, HandlerRegistry())
    advance.start(model.none_start)
    assert run.effects == [SignalThrown("Ready", {"orderId": "A-7", "twice": 42})]
    assert live(run) == [("t", TokenState.WAITING)]
    [token] = [t for t in run.tokens.values() if t.node_id == "t"]
    advance.resume(token)
    assert run.effects == [
        SignalThrown("Ready", {"orderId": "A-7", "twice": 42}),
        SignalThrown("Gone"),
    ]
    assert run.instance.state == InstanceState.COMPLETED


def test_a_link_leads_its_token_to_the_catch_event_and_both_are_visited() -> None:
    model = (
        ProcessBuilder("linked")
        .start_event("s")
        .intermediate_throw_event("go", link="Next")
        .intermediate_catch_event("arrive", link="Next")
        .user_task("t")
        .end_event("e")
        .chain("s", "go")
        .chain("arrive", "t", "e")
        .build()
    )
    run = started(model)
    assert live(run) == [("t", TokenState.WAITING)]
    assert len({t.id for t in run.tokens.values()}) == 1  # one token all the way
    assert [(v.node_id, v.node_type, v.state) for v in run.visits] == [
        ("s", "startEvent", VisitState.COMPLETED),
        ("go", "intermediateThrowEvent", VisitState.COMPLETED),
        ("arrive", "intermediateCatchEvent", VisitState.COMPLETED),
        ("t", "userTask", VisitState.ACTIVE),
    ]


def test_a_signal_throw_names_the_subscriptions_of_its_own_instance_that_waited_for_it() -> None:
    model = (
        ProcessBuilder("own")
        .start_event("s")
        .parallel_gateway("fork")
        .intermediate_catch_event("before", signal="Ping")
        .end_event("before_e")
        .intermediate_catch_event("other", signal="Other")
        .end_event("other_e")
        .user_task("go")
        .intermediate_throw_event("ping", signal="Ping")
        .intermediate_catch_event("after", signal="Ping")
        .end_event("after_e")
        .chain("s", "fork", "before", "before_e")
        .chain("fork", "other", "other_e")
        .chain("fork", "go", "ping", "after", "after_e")
        .build()
    )
    run = started(model)
    [before] = [s.id for s in run.subscriptions.values() if s.node_id == "before"]
    [go] = [t for t in run.tokens.values() if t.node_id == "go"]
    Advance(run, model, HandlerRegistry()).resume(go)
    # The catch event after the throw subscribed too, but after the signal was thrown.
    assert sorted(s.node_id for s in run.subscriptions.values()) == ["after", "before", "other"]
    assert run.effects == [SignalThrown("Ping", {}, frozenset({before}))]
