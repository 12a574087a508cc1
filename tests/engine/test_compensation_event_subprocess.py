"""Compensation event subprocesses on real PostgreSQL: an event subprocess whose start event is a
compensation start event, inside an embedded subprocess, runs when that completed subprocess is
compensated (by a throw to all, by a throw naming the subprocess, by the cancel of a transaction
around it) instead of the subprocess's own compensation handlers, which run only when it throws
compensation itself; it sees the subprocess's local variables as they were when the subprocess
completed (Camunda's snapshot), beside the process's current ones, each iteration of a
multi-instance subprocess its own; a file written as Camunda
Modeler writes it (isForCompensation on the event subprocess) is accepted, and one at process
level is refused naming the element."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.bpmn import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import ModelError
from engine.model import ProcessModel, SubProcess
from engine.states import InstanceState, TokenMode

Seen = list[tuple[str, Any]]


@pytest.fixture
def seen(engine: Engine) -> Iterator[Seen]:
    """(node, what it saw) for every handler that ran, in order: `book` sets the subprocess's
    local `reservation`, `notify` and `cancel` read it (and `status`, the process's)."""
    order: Seen = []

    def book(context: TaskContext) -> None:
        context.set("reservation", f"{context.get('reservation')}-booked")
        order.append((context.node_id, context.get("reservation")))

    def look(context: TaskContext) -> None:
        order.append((context.node_id, (context.get("reservation"), context.get("status"))))

    engine.register_handler("book", book)
    engine.register_handler("look", look)
    yield order


def visits(engine: Engine, instance_id: UUID) -> list[tuple[str, str, str]]:
    """(node, state, mode) of the instance's history rows, in order."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id, state, mode FROM history WHERE instance_id = %s "
            "AND node_id IS NOT NULL ORDER BY started_at, id",
            (instance_id,),
        ).fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def compensated(engine: Engine, instance_id: UUID) -> list[str]:
    return [
        node
        for node, _, mode in visits(engine, instance_id)
        if mode == TokenMode.COMPENSATION.value
    ]


BOOKING = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:process id="booking" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:subProcess id="trip" name="Book the trip">
      <bpmn:extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="reservation">R-${tripNo}</camunda:inputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
      <bpmn:startEvent id="trip_start"/>
      <bpmn:serviceTask id="hotel" camunda:delegateExpression="${book}"/>
      <bpmn:boundaryEvent id="hotel_done" attachedToRef="hotel">
        <bpmn:compensateEventDefinition/>
      </bpmn:boundaryEvent>
      <bpmn:serviceTask id="cancel_hotel" isForCompensation="true"
          camunda:delegateExpression="${look}"/>
      <bpmn:endEvent id="trip_end"/>
      <bpmn:sequenceFlow id="t1" sourceRef="trip_start" targetRef="hotel"/>
      <bpmn:sequenceFlow id="t2" sourceRef="hotel" targetRef="trip_end"/>
      <bpmn:association id="a1" sourceRef="hotel_done" targetRef="cancel_hotel"/>
      <bpmn:subProcess id="undo_trip" name="Undo the trip" triggeredByEvent="true"
          isForCompensation="true">
        <bpmn:startEvent id="undo_start"><bpmn:compensateEventDefinition/></bpmn:startEvent>
        <bpmn:serviceTask id="notify" camunda:delegateExpression="${look}"/>
        <bpmn:endEvent id="undo_end"/>
        <bpmn:sequenceFlow id="u1" sourceRef="undo_start" targetRef="notify"/>
        <bpmn:sequenceFlow id="u2" sourceRef="notify" targetRef="undo_end"/>
      </bpmn:subProcess>
    </bpmn:subProcess>
    <bpmn:userTask id="review"/>
    <bpmn:endEvent id="undo_all"><bpmn:compensateEventDefinition/></bpmn:endEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="trip"/>
    <bpmn:sequenceFlow id="f2" sourceRef="trip" targetRef="review"/>
    <bpmn:sequenceFlow id="f3" sourceRef="review" targetRef="undo_all"/>
  </bpmn:process>
</bpmn:definitions>
"""


def test_a_throw_to_all_runs_the_event_subprocess_over_the_snapshot(
    engine: Engine, seen: Seen
) -> None:
    [model] = parse_bpmn(BOOKING)
    event_sub = model.node("undo_trip")
    assert isinstance(event_sub, SubProcess) and event_sub.triggered_by_event
    engine.deploy(BOOKING)
    instance = engine.start_latest("booking", {"tripNo": 7, "status": "open"})
    assert seen == [("hotel", "R-7-booked")]
    assert "reservation" not in instance.variables()  # local to the subprocess, which ended
    [review] = instance.user_tasks()
    engine.complete_task(review.id, {"status": "refused"})
    assert instance.state is InstanceState.COMPLETED
    # The event subprocess ran instead of the inner handler, over the subprocess's locals as
    # they were when it completed, and the process's variables as they are now.
    assert seen == [("hotel", "R-7-booked"), ("notify", ("R-7-booked", "refused"))]
    assert compensated(engine, instance.id) == [
        "trip",
        "undo_trip",
        "undo_start",
        "notify",
        "undo_end",
    ]
    states = {node: state for node, state, _ in visits(engine, instance.id)}
    assert states["undo_trip"] == states["trip"] == "Completed"
    assert "reservation" not in instance.variables()  # the snapshot went with its compensation


def trip(key: str, *, rethrow: bool) -> ProcessModel:
    """start -> trip[ hotel (undo: cancel_hotel) -> flight (undo: cancel_flight) ;
    undo_trip: compensation start -> notify [-> rethrow to all] -> end ] -> review ->
    throw naming `trip` -> end."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    for step in ("hotel", "flight"):
        b.service_task(step, handler="book", parent="trip")
        b.service_task(f"cancel_{step}", handler="look", parent="trip")
        b.compensation_boundary(f"{step}_done", step, f"cancel_{step}")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "flight", "trip_end")
    b.sub_process("undo_trip", parent="trip", triggered_by_event=True)
    b.compensation_start("undo_start", parent="undo_trip")
    b.service_task("notify", handler="look", parent="undo_trip")
    b.end_event("undo_end", parent="undo_trip")
    path = ["undo_start", "notify"]
    if rethrow:
        b.compensation_throw("undo_inner", parent="undo_trip")
        path.append("undo_inner")
    b.chain(*path, "undo_end")
    b.service_task("other", handler="book")  # compensable too, but not named by the throw
    b.service_task("cancel_other", handler="look")
    b.compensation_boundary("other_done", "other", "cancel_other")
    b.user_task("review")
    b.compensation_throw("undo", activity="trip")
    b.end_event("end")
    b.chain("start", "trip", "other", "review", "undo", "end")
    return b.build()


@pytest.mark.parametrize("source", ["builder", "bpmn"])
def test_a_throw_naming_the_subprocess_runs_its_event_subprocess_only(
    engine: Engine, seen: Seen, source: str
) -> None:
    model = trip("trip-ref", rethrow=False)
    engine.deploy(model if source == "builder" else write_bpmn([model]))
    instance = engine.start_latest("trip-ref", {"reservation": "R", "status": "open"})
    [review] = instance.user_tasks()
    engine.complete_task(review.id)
    assert instance.state is InstanceState.COMPLETED
    ran = [node for node, _ in seen]
    assert ran == ["hotel", "flight", "other", "notify"]  # no inner handler, not `other`'s
    assert compensated(engine, instance.id) == [
        "trip",
        "undo_trip",
        "undo_start",
        "notify",
        "undo_end",
    ]


def test_a_throw_inside_the_event_subprocess_runs_the_inner_handlers_newest_first(
    engine: Engine, seen: Seen
) -> None:
    engine.deploy(trip("trip-rethrow", rethrow=True))
    instance = engine.start_latest("trip-rethrow", {"reservation": "R", "status": "open"})
    [review] = instance.user_tasks()
    engine.complete_task(review.id)
    assert instance.state is InstanceState.COMPLETED
    ran = [node for node, _ in seen]
    assert ran == ["hotel", "flight", "other", "notify", "cancel_flight", "cancel_hotel"]
    assert compensated(engine, instance.id).count("cancel_hotel") == 1


def cancelled_transaction(key: str) -> ProcessModel:
    """start -> tx[ inner[ activity (undo: the user task black_box) ; undo_inner: compensation
    start -> rethrow naming `activity` -> end ] -> before_cancel (user task) -> cancel end ];
    tx's cancel boundary -> cancelled (end)."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.sub_process("inner", parent="tx")
    b.start_event("inner_start", parent="inner")
    b.service_task("activity", handler="book", parent="inner")
    b.user_task("black_box", parent="inner")
    b.compensation_boundary("activity_done", "activity", "black_box")
    b.end_event("inner_end", parent="inner")
    b.chain("inner_start", "activity", "inner_end")
    b.sub_process("undo_inner", parent="inner", triggered_by_event=True)
    b.compensation_start("undo_inner_start", parent="undo_inner")
    b.compensation_throw("rethrow", parent="undo_inner", activity="activity")
    b.end_event("undo_inner_end", parent="undo_inner")
    b.chain("undo_inner_start", "rethrow", "undo_inner_end")
    b.user_task("before_cancel", parent="tx")
    b.end_event("cancel_end", cancel=True, parent="tx")
    b.chain("tx_start", "inner", "before_cancel", "cancel_end")
    b.end_event("end")
    b.cancel_boundary("catch_cancel", "tx")
    b.end_event("cancelled")
    b.chain("start", "tx", "end")
    b.chain("catch_cancel", "cancelled")
    return b.build()


def test_a_cancelled_transaction_compensates_a_subprocess_through_its_event_subprocess(
    engine: Engine, seen: Seen
) -> None:
    engine.deploy(cancelled_transaction("tx-esp"))
    instance = engine.start_latest("tx-esp", {"reservation": "R"})
    [before] = instance.user_tasks()
    engine.complete_task(before.id)
    [handler] = [t for t in instance.user_tasks() if t.state == "Open"]
    assert handler.node_id == "black_box"  # the event subprocess threw to `activity`
    live = sorted(position.node_id for position in instance.tokens())
    assert {"cancel_end", "inner", "undo_inner", "rethrow", "black_box"} <= set(live)
    engine.complete_task(handler.id)
    assert instance.state is InstanceState.COMPLETED
    nodes = [node for node, _, _ in visits(engine, instance.id)]
    assert nodes[-2:] == ["catch_cancel", "cancelled"]
    assert compensated(engine, instance.id) == [
        "inner",
        "undo_inner",
        "undo_inner_start",
        "rethrow",
        "black_box",
        "undo_inner_end",
    ]


AT_PROCESS_LEVEL = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:process id="flat" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:userTask id="book"/>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="book"/>
    <bpmn:sequenceFlow id="f2" sourceRef="book" targetRef="end"/>
    <bpmn:subProcess id="undo" triggeredByEvent="true">
      <bpmn:startEvent id="undo_start"><bpmn:compensateEventDefinition/></bpmn:startEvent>
      <bpmn:userTask id="unbook"/>
      <bpmn:endEvent id="undo_end"/>
      <bpmn:sequenceFlow id="u1" sourceRef="undo_start" targetRef="unbook"/>
      <bpmn:sequenceFlow id="u2" sourceRef="unbook" targetRef="undo_end"/>
    </bpmn:subProcess>
  </bpmn:process>
</bpmn:definitions>
"""


def test_a_compensation_event_subprocess_at_process_level_is_refused(engine: Engine) -> None:
    with pytest.raises(ModelError) as refused:
        engine.deploy(AT_PROCESS_LEVEL)
    assert "embedded subprocess" in refused.value.message
    assert refused.value.element_id == "undo"


@pytest.mark.parametrize("sequential", [True, False])
def test_each_iteration_of_a_multi_instance_subprocess_is_compensated_over_its_own_snapshot(
    engine: Engine, seen: Seen, sequential: bool
) -> None:
    """trip[ hotel ; undo_trip: compensation start -> notify -> end ] for each `reservation` in
    `hotels` (the element variable, local to each iteration) -> throw to all -> confirm ->
    end."""
    b = ProcessBuilder("trip-each")
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    b.service_task("hotel", handler="book", parent="trip")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "trip_end")
    b.sub_process("undo_trip", parent="trip", triggered_by_event=True)
    b.compensation_start("undo_start", parent="undo_trip")
    b.service_task("notify", handler="look", parent="undo_trip")
    b.end_event("undo_end", parent="undo_trip")
    b.chain("undo_start", "notify", "undo_end")
    b.multi_instance(
        "trip", sequential=sequential, collection="${hotels}", element_variable="reservation"
    )
    b.compensation_throw("undo")
    b.user_task("confirm")
    b.end_event("end")
    b.chain("start", "trip", "undo", "confirm", "end")
    engine.deploy(b.build())
    instance = engine.start_latest(
        "trip-each", {"hotels": ["Rupert", "Milliways", "Taunton"], "status": "open"}
    )
    with engine.connection() as conn:
        kept = conn.execute(
            "SELECT name FROM variable WHERE instance_id = %s AND scope_key <> ''",
            (instance.id,),
        ).fetchall()
    assert kept == []  # every snapshot went with its compensation, none left for the body
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED
    booked = [value for node, value in seen if node == "hotel"]
    assert booked == ["Rupert-booked", "Milliways-booked", "Taunton-booked"]
    notified = [value for node, value in seen if node == "notify"]
    # Each iteration's compensation once, newest first, over what that iteration held.
    assert notified == [(value, "open") for value in reversed(booked)]
    assert compensated(engine, instance.id).count("undo_trip") == 3
