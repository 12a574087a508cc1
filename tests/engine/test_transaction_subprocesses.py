"""Transaction subprocesses on real PostgreSQL: a cancel end event cancels its transaction (its
other work ends, the completed compensable activities inside it are compensated once each, newest
first, in the command that cancels), then the cancel boundary event's flow is taken; a
transaction that completes normally compensates nothing; nested scopes inside; multi-instance
transactions; the same model from the builder and from BPMN text (and written back); and the
deployment errors, naming file, line and element, of cancel events where they cannot work."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.bpmn import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import ModelError
from engine.loops.jobs import JobExecutor
from engine.model import BoundaryEvent, EndEvent, ProcessModel, Transaction
from engine.states import InstanceState, TokenMode, TokenView


@pytest.fixture
def ran(engine: Engine) -> Iterator[list[str]]:
    """The nodes the `log` handler ran, in order."""
    order: list[str] = []

    def log(context: TaskContext) -> None:
        order.append(context.node_id)

    engine.register_handler("log", log)
    yield order


Visit = tuple[str, str, str, str, datetime, datetime | None]


def visits(engine: Engine, instance_id: UUID) -> list[Visit]:
    """(node, type, state, mode, started, ended) of the instance's history rows, in order."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id, node_type, state, mode, started_at, ended_at FROM history "
            "WHERE instance_id = %s AND node_id IS NOT NULL ORDER BY started_at, id",
            (instance_id,),
        ).fetchall()
    return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]


def compensations(engine: Engine, instance_id: UUID) -> list[tuple[str, str]]:
    return [
        (node, state)
        for node, _, state, mode, _, _ in visits(engine, instance_id)
        if mode == TokenMode.COMPENSATION.value
    ]


def open_task(instance: InstanceHandle, node_id: str) -> Any:
    [task] = [t for t in instance.user_tasks() if t.node_id == node_id and t.state == "Open"]
    return task


def booking(key: str) -> ProcessModel:
    """start -> tx[ book (undo: unbook) -> pay (undo: refund) -> confirm (user task) ->
    ${cancel}? cancelled (cancel end) : done ] -> after_success; tx's cancel boundary ->
    after_cancel."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.transaction("tx", "Book the trip")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="log", parent="tx")
    b.service_task("unbook", handler="log", parent="tx")
    b.compensation_boundary("book_done", "book", "unbook")
    b.service_task("pay", handler="log", parent="tx")
    b.service_task("refund", handler="log", parent="tx")
    b.compensation_boundary("pay_done", "pay", "refund")
    b.user_task("confirm", parent="tx")
    b.exclusive_gateway("ok", parent="tx", default="to_done")
    b.end_event("cancelled", "Cancelled", cancel=True, parent="tx")
    b.end_event("done", parent="tx")
    b.chain("tx_start", "book", "pay", "confirm", "ok")
    b.flow("ok", "cancelled", condition="${cancel}")
    b.flow("ok", "done", id="to_done")
    b.cancel_boundary("tx_cancelled", "tx")
    b.user_task("after_success")
    b.user_task("after_cancel")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "after_success", "end")
    b.chain("tx_cancelled", "after_cancel", "end_cancelled")
    return b.build()


BOOKING_XML = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="Definitions_tx" targetNamespace="http://example.com/tx">
  <bpmn:process id="tx-xml" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:transaction id="tx" name="Book the trip">
      <bpmn:startEvent id="tx_start" />
      <bpmn:serviceTask id="book" camunda:delegateExpression="${log}" />
      <bpmn:boundaryEvent id="book_done" attachedToRef="book">
        <bpmn:compensateEventDefinition />
      </bpmn:boundaryEvent>
      <bpmn:serviceTask id="unbook" isForCompensation="true" camunda:delegateExpression="${log}" />
      <bpmn:serviceTask id="pay" camunda:delegateExpression="${log}" />
      <bpmn:boundaryEvent id="pay_done" attachedToRef="pay">
        <bpmn:compensateEventDefinition />
      </bpmn:boundaryEvent>
      <bpmn:serviceTask id="refund" isForCompensation="true" camunda:delegateExpression="${log}" />
      <bpmn:userTask id="confirm" />
      <bpmn:exclusiveGateway id="ok" default="to_done" />
      <bpmn:endEvent id="cancelled" name="Cancelled">
        <bpmn:cancelEventDefinition />
      </bpmn:endEvent>
      <bpmn:endEvent id="done" />
      <bpmn:sequenceFlow id="t1" sourceRef="tx_start" targetRef="book" />
      <bpmn:sequenceFlow id="t2" sourceRef="book" targetRef="pay" />
      <bpmn:sequenceFlow id="t3" sourceRef="pay" targetRef="confirm" />
      <bpmn:sequenceFlow id="t4" sourceRef="confirm" targetRef="ok" />
      <bpmn:sequenceFlow id="to_cancel" sourceRef="ok" targetRef="cancelled">
        <bpmn:conditionExpression>${cancel}</bpmn:conditionExpression>
      </bpmn:sequenceFlow>
      <bpmn:sequenceFlow id="to_done" sourceRef="ok" targetRef="done" />
      <bpmn:association id="a1" sourceRef="book_done" targetRef="unbook" />
      <bpmn:association id="a2" sourceRef="pay_done" targetRef="refund" />
    </bpmn:transaction>
    <bpmn:boundaryEvent id="tx_cancelled" attachedToRef="tx">
      <bpmn:cancelEventDefinition />
    </bpmn:boundaryEvent>
    <bpmn:userTask id="after_success" />
    <bpmn:userTask id="after_cancel" />
    <bpmn:endEvent id="end" />
    <bpmn:endEvent id="end_cancelled" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="tx" />
    <bpmn:sequenceFlow id="f2" sourceRef="tx" targetRef="after_success" />
    <bpmn:sequenceFlow id="f3" sourceRef="after_success" targetRef="end" />
    <bpmn:sequenceFlow id="f4" sourceRef="tx_cancelled" targetRef="after_cancel" />
    <bpmn:sequenceFlow id="f5" sourceRef="after_cancel" targetRef="end_cancelled" />
  </bpmn:process>
</bpmn:definitions>
"""


def _cancel_after_two(engine: Engine, ran: list[str], key: str) -> None:
    instance = engine.start_latest(key)
    assert ran == ["book", "pay"]
    engine.complete_task(open_task(instance, "confirm").id, {"cancel": True})
    # Both compensations ran once each, newest first, then the boundary's flow was taken.
    assert ran == ["book", "pay", "refund", "unbook"]
    assert compensations(engine, instance.id) == [("refund", "Completed"), ("unbook", "Completed")]
    assert [t.node_id for t in instance.user_tasks() if t.state == "Open"] == ["after_cancel"]
    seen = visits(engine, instance.id)
    by_node = {v[0]: v for v in seen}
    assert by_node["tx"][1:3] == ("transaction", "Terminated")
    assert by_node["cancelled"][1:3] == ("endEvent", "Completed")
    assert by_node["tx_cancelled"][1:3] == ("boundaryEvent", "Completed")
    # All of it in the one command that completed `confirm`: its visits share that command's
    # clock, and the confirm visit ended at it.
    moment = by_node["confirm"][5]
    assert moment is not None
    for node in ("cancelled", "refund", "unbook", "tx_cancelled", "after_cancel"):
        assert by_node[node][4] == moment, node
    assert by_node["tx"][5] == moment
    # What was compensated is no longer compensable.
    with engine.connection() as conn:
        left = conn.execute(
            "SELECT node_id FROM event_subscription WHERE instance_id = %s AND kind = 'compensate'",
            (instance.id,),
        ).fetchall()
    assert left == []
    engine.complete_task(open_task(instance, "after_cancel").id)
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay", "refund", "unbook"]  # nothing ran twice


def test_cancel_compensates_two_completed_activities_in_reverse_then_takes_the_boundary(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(booking("tx-built"))
    _cancel_after_two(engine, ran, "tx-built")


def test_the_same_model_from_bpmn_text_cancels_alike(engine: Engine, ran: list[str]) -> None:
    engine.deploy(BOOKING_XML)
    _cancel_after_two(engine, ran, "tx-xml")


def test_a_transaction_that_completes_normally_compensates_nothing(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(booking("tx-ok"))
    instance = engine.start_latest("tx-ok")
    engine.complete_task(open_task(instance, "confirm").id, {"cancel": False})
    assert ran == ["book", "pay"]
    assert compensations(engine, instance.id) == []
    assert [t.node_id for t in instance.user_tasks() if t.state == "Open"] == ["after_success"]
    by_node = {v[0]: v for v in visits(engine, instance.id)}
    assert by_node["tx"][1:3] == ("transaction", "Completed")
    assert "tx_cancelled" not in by_node
    engine.complete_task(open_task(instance, "after_success").id)
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay"]


def test_cancel_ends_parallel_work_and_compensates_nested_scopes(
    engine: Engine, ran: list[str]
) -> None:
    """A transaction forks: one branch runs an embedded subprocess with a compensable task and
    then cancels; the other waits at a user task. Cancelling ends the waiting branch, and the
    subprocess's inner task is compensated through the subprocess."""
    b = ProcessBuilder("tx-nested")
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.parallel_gateway("fork", parent="tx")
    b.service_task("reserve", handler="log", parent="tx")
    b.service_task("release", handler="log", parent="tx")
    b.compensation_boundary("reserved", "reserve", "release")
    b.sub_process("inner", parent="tx")
    b.start_event("inner_start", parent="inner")
    b.service_task("charge", handler="log", parent="inner")
    b.service_task("uncharge", handler="log", parent="inner")
    b.compensation_boundary("charged", "charge", "uncharge")
    b.end_event("inner_end", parent="inner")
    b.chain("inner_start", "charge", "inner_end")
    b.end_event("cancel", cancel=True, parent="tx")
    b.user_task("wait", parent="tx")
    b.end_event("waited", parent="tx")
    b.chain("tx_start", "fork", "reserve", "inner", "cancel")
    b.chain("fork", "wait", "waited")
    b.cancel_boundary("tx_cancelled", "tx")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "end")
    b.chain("tx_cancelled", "end_cancelled")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-nested")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["reserve", "charge", "uncharge", "release"]
    assert compensations(engine, instance.id) == [
        ("uncharge", "Completed"),
        ("release", "Completed"),
    ]
    states = {v[0]: v[2] for v in visits(engine, instance.id)}
    assert states["wait"] == "Terminated"
    assert states["tx"] == "Terminated"
    assert states["end_cancelled"] == "Completed"
    assert "end" not in states
    assert [t.state for t in instance.user_tasks()] != ["Open"]


def test_variables_of_a_transaction_are_its_own_scope(engine: Engine) -> None:
    """Input parameters of a transaction are its locals (gone when it leaves), as for an
    embedded subprocess."""
    b = ProcessBuilder("tx-scope")
    b.start_event("start")
    b.transaction("tx")
    b.input_output("tx", inputs={"inside": "${1 + 1}"})
    b.start_event("tx_start", parent="tx")
    b.user_task("look", parent="tx")
    b.end_event("tx_end", parent="tx")
    b.chain("tx_start", "look", "tx_end")
    b.user_task("after")
    b.end_event("end")
    b.chain("start", "tx", "after", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-scope")

    def inside() -> list[tuple[str, Any]]:
        with engine.connection() as conn:
            rows = conn.execute(
                "SELECT scope_key, value FROM variable WHERE instance_id = %s AND name = 'inside'",
                (instance.id,),
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    [(scope_key, _)] = inside()
    assert scope_key != ""  # a local of the transaction's scope, not a process variable
    assert "inside" not in instance.variables()
    engine.complete_task(open_task(instance, "look").id)
    assert inside() == []
    assert [t.node_id for t in instance.user_tasks() if t.state == "Open"] == ["after"]


def test_a_multi_instance_transaction_cancels_from_one_iteration(
    engine: Engine, ran: list[str]
) -> None:
    """Sequential iterations: the first completes normally; the second books and cancels. Only
    the cancelling iteration's work is compensated, and the body leaves by the boundary."""
    b = ProcessBuilder("tx-mi")
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="log", parent="tx")
    b.service_task("unbook", handler="log", parent="tx")
    b.compensation_boundary("booked", "book", "unbook")
    b.exclusive_gateway("again", parent="tx", default="to_ok")
    b.end_event("cancel", cancel=True, parent="tx")
    b.end_event("ok", parent="tx")
    b.chain("tx_start", "book", "again")
    b.flow("again", "cancel", condition="${loopCounter == 1}")
    b.flow("again", "ok", id="to_ok")
    b.multi_instance("tx", cardinality=3, sequential=True)
    b.cancel_boundary("tx_cancelled", "tx")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "end")
    b.chain("tx_cancelled", "end_cancelled")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-mi")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "book", "unbook"]
    states = [(v[0], v[2]) for v in visits(engine, instance.id)]
    assert ("end_cancelled", "Completed") in states
    assert ("end", "Completed") not in states
    assert [s for n, s in states if n == "tx"].count("Completed") == 1  # the first iteration


def test_the_builder_and_the_writer_keep_a_transaction() -> None:
    model = booking("tx-trip")
    [back] = parse_bpmn(write_bpmn([model]), "written.bpmn")
    assert back == model
    assert isinstance(back.node("tx"), Transaction)
    cancel_end = back.node("cancelled")
    assert isinstance(cancel_end, EndEvent) and cancel_end.cancel
    boundary = back.node("tx_cancelled")
    assert isinstance(boundary, BoundaryEvent) and boundary.is_cancel
    assert "<bpmn:transaction " in write_bpmn([model])
    [from_text] = parse_bpmn(BOOKING_XML, "booking.bpmn")
    assert isinstance(from_text.node("tx"), Transaction)
    [again] = parse_bpmn(write_bpmn([from_text]), "again.bpmn")
    assert again == from_text
    # The transaction's method (##Compensate, ##Store, ##Image) changes nothing, as in Camunda.
    method = BOOKING_XML.replace(
        '<bpmn:transaction id="tx"', '<bpmn:transaction id="tx" method="##Image"'
    )
    assert parse_bpmn(method, "method.bpmn") == [from_text]


HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'id="D" targetNamespace="http://example.com/tx">\n'
    '  <bpmn:process id="p" isExecutable="true">\n'
)
TAIL = "\n  </bpmn:process>\n</bpmn:definitions>\n"


def refused(body: str, element: str) -> ModelError:
    """The deployment error of `body`: it names the file, the element and that element's line."""
    text = f"{HEAD}{body}{TAIL}"
    with pytest.raises(ModelError) as caught:
        parse_bpmn(text, "tx.bpmn")
    error = caught.value
    assert error.file == "tx.bpmn"
    assert error.element_id == element
    line = next(i for i, row in enumerate(text.splitlines(), 1) if f'id="{element}"' in row)
    assert error.line == line
    assert f"tx.bpmn, line {line}, element '{element}'" in str(error)
    return error


CANCEL_END = '<bpmn:endEvent id="{id}"><bpmn:cancelEventDefinition /></bpmn:endEvent>'
CANCEL_BOUNDARY = (
    '<bpmn:boundaryEvent id="{id}" attachedToRef="{to}"{extra}>'
    "<bpmn:cancelEventDefinition /></bpmn:boundaryEvent>"
)


def scope(tag: str, inner: str, boundaries: str = "") -> str:
    return (
        '    <bpmn:startEvent id="s" />\n'
        f'    <bpmn:{tag} id="t">\n'
        '      <bpmn:startEvent id="ts" />\n'
        f"      {inner}\n"
        '      <bpmn:sequenceFlow id="tf" sourceRef="ts" targetRef="c" />\n'
        f"    </bpmn:{tag}>\n"
        f"    {boundaries}\n"
        '    <bpmn:endEvent id="e" />\n'
        '    <bpmn:endEvent id="ce" />\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t" />\n'
        '    <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e" />\n'
    )


def with_exit(boundaries: str, *ids: str) -> str:
    flows = "".join(
        f'\n    <bpmn:sequenceFlow id="x{n}" sourceRef="{i}" targetRef="ce" />'
        for n, i in enumerate(ids)
    )
    return boundaries + flows


def test_a_cancel_end_event_outside_a_transaction_is_refused() -> None:
    error = refused(scope("subProcess", CANCEL_END.format(id="c")), "c")
    assert "only supported inside transaction subprocess" in error.message
    at_process = (
        '    <bpmn:startEvent id="s" />\n'
        '    <bpmn:endEvent id="c"><bpmn:cancelEventDefinition /></bpmn:endEvent>\n'
        '    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="c" />'
    )
    refused(at_process, "c")


def test_a_cancel_boundary_event_on_a_subprocess_is_refused() -> None:
    body = scope(
        "subProcess",
        '<bpmn:endEvent id="c" />',
        with_exit(CANCEL_BOUNDARY.format(id="b", to="t", extra=""), "b"),
    )
    error = refused(body, "b")
    assert "only supported on transaction subprocesses" in error.message


def test_a_transaction_with_a_cancel_end_event_and_no_cancel_boundary_is_refused() -> None:
    error = refused(scope("transaction", CANCEL_END.format(id="c")), "c")
    assert "no cancel boundary event" in error.message


def test_two_cancel_boundary_events_on_one_transaction_are_refused() -> None:
    boundaries = CANCEL_BOUNDARY.format(id="b1", to="t", extra="") + CANCEL_BOUNDARY.format(
        id="b2", to="t", extra=""
    )
    body = scope("transaction", CANCEL_END.format(id="c"), with_exit(boundaries, "b1", "b2"))
    error = refused(body, "b2")
    assert "multiple boundary events with cancelEventDefinition" in error.message


def test_a_non_interrupting_cancel_boundary_event_is_refused() -> None:
    boundary = CANCEL_BOUNDARY.format(id="b", to="t", extra=' cancelActivity="false"')
    body = scope("transaction", CANCEL_END.format(id="c"), with_exit(boundary, "b"))
    assert "always interrupts" in refused(body, "b").message


def test_the_builder_refuses_a_cancel_end_event_outside_a_transaction() -> None:
    b = ProcessBuilder("tx-bad")
    b.start_event("start")
    b.end_event("cancel", cancel=True)
    b.chain("start", "cancel")
    with pytest.raises(ModelError, match="only supported inside transaction") as caught:
        b.build()
    assert caught.value.element_id == "cancel"


def test_a_transaction_without_cancel_events_deploys_and_runs_as_a_subprocess(
    engine: Engine,
) -> None:
    body = scope("transaction", '<bpmn:endEvent id="c" />')
    [model] = parse_bpmn(f"{HEAD}{body}{TAIL}", "tx.bpmn")
    assert isinstance(model.node("t"), Transaction)
    engine.deploy(f"{HEAD}{body}{TAIL}")
    instance = engine.start_latest("p")
    assert instance.state is InstanceState.COMPLETED
    assert [(v[0], v[1]) for v in visits(engine, instance.id)] == [
        ("s", "startEvent"),
        ("t", "transaction"),
        ("ts", "startEvent"),
        ("c", "endEvent"),
        ("e", "endEvent"),
    ]


def test_asynchronous_handlers_continue_the_cancellation_job_by_job(
    engine: Engine, ran: list[str]
) -> None:
    """Handlers with asyncBefore are jobs: the cancel end event waits until the last one has run,
    and the job that runs it takes the cancel boundary's flow."""
    b = ProcessBuilder("tx-async")
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="log", parent="tx")
    b.service_task("unbook", handler="log", parent="tx", async_before=True)
    b.compensation_boundary("booked", "book", "unbook")
    b.service_task("pay", handler="log", parent="tx")
    b.service_task("refund", handler="log", parent="tx", async_before=True)
    b.compensation_boundary("paid", "pay", "refund")
    b.end_event("cancel", cancel=True, parent="tx")
    b.chain("tx_start", "book", "pay", "cancel")
    b.cancel_boundary("cancelled", "tx")
    b.user_task("after_cancel")
    b.end_event("end")
    b.chain("start", "tx", "end")
    b.chain("cancelled", "after_cancel")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-async")
    assert ran == ["book", "pay"]
    live = {(t.node_id, t.state, t.mode) for t in instance.tokens()}
    assert live == {
        ("tx", TokenView.WAIT_FOR_EVENT, TokenMode.FORWARD),
        ("cancel", TokenView.WAIT_FOR_EVENT, TokenMode.FORWARD),
        ("refund", TokenView.ALIVE, TokenMode.COMPENSATION),
        ("unbook", TokenView.ALIVE, TokenMode.COMPENSATION),
    }
    executor = JobExecutor(engine, owner="tx-test", batch_size=1, lock_seconds=30)
    assert executor.run_once() == 1
    assert len(ran) == 3 and instance.user_tasks() == []  # one handler left: still waiting
    assert executor.run_once() == 1
    assert sorted(ran[2:]) == ["refund", "unbook"]
    assert [t.node_id for t in instance.user_tasks()] == ["after_cancel"]
    assert executor.run_once() == 0


def test_after_a_transaction_completed_a_compensation_throw_reaches_inside_it(
    engine: Engine, ran: list[str]
) -> None:
    """As an embedded subprocess: what completed inside a transaction that completed normally
    is compensated by a later throw event of the process."""
    b = ProcessBuilder("tx-later")
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="log", parent="tx")
    b.service_task("unbook", handler="log", parent="tx")
    b.compensation_boundary("booked", "book", "unbook")
    b.end_event("tx_end", parent="tx")
    b.chain("tx_start", "book", "tx_end")
    b.cancel_boundary("cancelled", "tx")
    b.compensation_throw("undo")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "undo", "end")
    b.chain("cancelled", "end_cancelled")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-later")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "unbook"]
    states = {v[0]: v[2] for v in visits(engine, instance.id)}
    assert states["tx"] == "Completed" and "end_cancelled" not in states


def test_an_error_boundary_on_a_transaction_catches_without_compensating(
    engine: Engine, ran: list[str]
) -> None:
    """Other boundary events of a transaction work as on a subprocess: an error thrown inside
    is caught by the transaction's error boundary event, and nothing is compensated."""
    b = ProcessBuilder("tx-error")
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="log", parent="tx")
    b.service_task("unbook", handler="log", parent="tx")
    b.compensation_boundary("booked", "book", "unbook")
    b.exclusive_gateway("which", parent="tx", default="to_cancel")
    b.end_event("fail", error_code="E1", parent="tx")
    b.end_event("cancel", cancel=True, parent="tx")
    b.chain("tx_start", "book", "which")
    b.flow("which", "fail", condition="${broken}")
    b.flow("which", "cancel", id="to_cancel")
    b.cancel_boundary("cancelled", "tx")
    b.boundary_event("failed", "tx", error_code="E1")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.end_event("end_failed")
    b.chain("start", "tx", "end")
    b.chain("cancelled", "end_cancelled")
    b.chain("failed", "end_failed")
    engine.deploy(b.build())
    instance = engine.start_latest("tx-error", {"broken": True})
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book"]
    states = {v[0]: v[2] for v in visits(engine, instance.id)}
    assert states["end_failed"] == "Completed"
    assert states["tx"] == "Terminated"
    assert "end_cancelled" not in states and "unbook" not in states
