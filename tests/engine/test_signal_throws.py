"""Signal throw events reach every receiver in the throwing command's transaction: subscriptions
of other instances of several definitions, signal start events, and the throwing instance's own
boundary events and event-based gateways."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel, TimerDefinition
from engine.states import InstanceState
from engine.store.instances import InstanceFilter
from tests.engine.test_escalations import complete, visits, waiting

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def _announcer() -> ProcessModel:
    return (
        ProcessBuilder("announcer")
        .start_event("s")
        .user_task("prepare")
        .intermediate_throw_event("announce", signal="Launch")
        .end_event("e")
        .chain("s", "prepare", "announce", "e")
        .build()
    )


def _waiting_receiver() -> ProcessModel:
    return (
        ProcessBuilder("waiting_receiver")
        .start_event("s")
        .intermediate_catch_event("launched", signal="Launch")
        .user_task("after")
        .end_event("e")
        .chain("s", "launched", "after", "e")
        .build()
    )


def _working_receiver() -> ProcessModel:
    return (
        ProcessBuilder("working_receiver")
        .start_event("s")
        .user_task("work")
        .end_event("e")
        .chain("s", "work", "e")
        .boundary_event("stop", "work", signal="Launch")
        .user_task("stopped")
        .end_event("stopped_e")
        .chain("stop", "stopped", "stopped_e")
        .build()
    )


def _started_by_signal() -> ProcessModel:
    return (
        ProcessBuilder("started_by_signal")
        .start_event("s", signal="Launch")
        .user_task("greet")
        .end_event("e")
        .chain("s", "greet", "e")
        .build()
    )


def _started_by_signal_instances(engine: Engine) -> list[UUID]:
    page = engine.list_instances(InstanceFilter(definition_key="started_by_signal"))
    return [info.id for info in page.items]


def test_a_signal_throw_reaches_three_instances_of_two_definitions_and_a_start_event(
    engine: Engine,
) -> None:
    engine.deploy(_announcer(), _waiting_receiver(), _working_receiver(), _started_by_signal())
    waiting_a = engine.start_latest("waiting_receiver")
    waiting_b = engine.start_latest("waiting_receiver")
    working = engine.start_latest("working_receiver")
    announcer = engine.start_latest("announcer")
    assert _started_by_signal_instances(engine) == []
    complete(engine, announcer, "prepare")
    assert announcer.state == InstanceState.COMPLETED
    assert waiting(waiting_a) == ["after"] and waiting(waiting_b) == ["after"]
    assert waiting(working) == ["stopped"]
    assert ("work", "Terminated") in visits(working)
    [started] = _started_by_signal_instances(engine)
    assert waiting(engine.instance(started)) == ["greet"]
    started_at = engine.instance(started).info().started_at
    # One command: every receiver moved at the throwing command's time.
    [throw] = [s for p in announcer.history() for s in p.steps if s.node_id == "announce"]
    moved = [
        s.ended_at
        for instance in (waiting_a, waiting_b)
        for p in instance.history()
        for s in p.steps
        if s.node_id == "launched"
    ]
    [stop] = [s for p in working.history() for s in p.steps if s.node_id == "stop"]
    assert moved == [throw.ended_at, throw.ended_at]
    assert stop.started_at == throw.ended_at == started_at


def test_a_signal_throw_reaches_its_own_instances_boundary_event_and_event_gateway(
    engine: Engine,
) -> None:
    model = (
        ProcessBuilder("own")
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("work")
        .end_event("work_e")
        .boundary_event("stop", "work", signal="Halt")
        .end_event("stopped")
        .chain("stop", "stopped")
        .event_based_gateway("which")
        .intermediate_catch_event("halted", signal="Halt")
        .intermediate_catch_event("timeout", timer=TimerDefinition(kind="duration", text="PT1H"))
        .user_task("after_halt")
        .end_event("gateway_e")
        .end_event("timeout_e")
        .chain("which", "halted", "after_halt", "gateway_e")
        .chain("which", "timeout", "timeout_e")
        .user_task("go")
        .intermediate_throw_event("halt", signal="Halt")
        .end_event("go_e")
        .chain("s", "fork", "work", "work_e")
        .chain("fork", "which")
        .chain("fork", "go", "halt", "go_e")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("own")
    assert waiting(instance) == ["go", "work"]
    complete(engine, instance, "go")
    assert waiting(instance) == ["after_halt"]
    found = visits(instance)
    assert ("work", "Terminated") in found
    assert ("stopped", "Completed") in found
    assert ("halted", "Completed") in found
    assert engine.jobs(instance.id) == []


def test_a_signal_end_event_and_an_intermediate_signal_throw_with_variables_of_a_modeler_file(
    engine: Engine,
) -> None:
    listener = (
        ProcessBuilder("claims_desk")
        .start_event("s")
        .intermediate_catch_event("urgent", signal="UrgentClaim")
        .intermediate_catch_event("closed", signal="ClaimClosed")
        .end_event("e")
        .chain("s", "urgent", "closed", "e")
        .build()
    )
    engine.deploy(DATA / "claim_intake.bpmn", listener)
    desk = engine.start_latest("claims_desk")
    claim = engine.start_latest("claim_intake", {"urgent": True, "claimant": "Ada"})
    assert [t.node_id for t in desk.tokens()] == ["closed"]
    # The urgent signal carried what its camunda:in mappings pass.
    assert desk.variables() == {"claimant": "Ada", "urgentClaim": True}
    complete(engine, claim, "Task_Assess")
    assert claim.state == InstanceState.COMPLETED
    assert desk.state == InstanceState.COMPLETED


def test_a_signal_reaches_only_what_waited_for_it_when_it_was_thrown(engine: Engine) -> None:
    """As in Camunda, where a throw delivers before its token moves on: a catch event the
    throwing token reaches after the throw keeps waiting; one that waited before receives it."""
    model = (
        ProcessBuilder("echo")
        .start_event("s")
        .parallel_gateway("fork")
        .intermediate_catch_event("before", signal="Ping")
        .end_event("before_e")
        .user_task("go")
        .intermediate_throw_event("ping", signal="Ping")
        .intermediate_catch_event("after", signal="Ping")
        .end_event("after_e")
        .chain("s", "fork", "before", "before_e")
        .chain("fork", "go", "ping", "after", "after_e")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("echo")
    complete(engine, instance, "go")
    assert [t.node_id for t in instance.tokens()] == ["after"]
    assert ("before", "Completed") in visits(instance)
