"""Starting by key or id a process that has no none start event, as Camunda 7 chooses its initial
activity: a process whose only start event is a message start event starts through that event
(from the builder and from BPMN text, by `start_latest` and `start_definition`, by a call
activity, and still by its message), its generated form being the process's start form; a none
start event beside it is chosen instead; with several start events and no none start event the
start is refused with Camunda's message; the history shows the message start event as the
instance's first activity."""

from __future__ import annotations

from uuid import UUID

import pytest

from engine.api import Engine
from engine.bpmn import parse_bpmn
from engine.builder import ProcessBuilder
from engine.errors import BadRequest
from engine.model import ProcessModel
from engine.states import InstanceState

REFUSED = (
    "Process 'Two ways in' has no default start activity (e.g. none start event), hence you "
    "cannot use 'startProcessInstanceBy...' but have to start it using one of the modeled start "
    "events (e.g. message start events): initial is null"
)


def visited(engine: Engine, instance_id: UUID) -> list[tuple[str, str]]:
    """(node, state) of the instance's history rows, in the order they started."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id, state FROM history WHERE instance_id = %s AND node_id IS NOT NULL "
            "ORDER BY started_at, id",
            (instance_id,),
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


def invoice(key: str, *, none_start: bool = False) -> ProcessModel:
    """on_invoice (message newInvoice) -> review; with `none_start`, also start -> by_hand."""
    b = ProcessBuilder(key)
    b.start_event("on_invoice", "Invoice received", message="newInvoice")
    b.user_task("review", "Review invoice")
    b.end_event("done")
    b.chain("on_invoice", "review", "done")
    if none_start:
        b.start_event("start")
        b.user_task("by_hand", "Enter invoice")
        b.end_event("entered")
        b.chain("start", "by_hand", "entered")
    return b.build()


def test_a_process_with_one_message_start_event_starts_by_key_through_it(engine: Engine) -> None:
    engine.deploy(invoice("invoice-only"))
    instance = engine.start_latest("invoice-only", {"amount": 30})
    assert instance.state.value == "Active"
    [task] = instance.user_tasks()
    assert task.node_id == "review"
    assert instance.variables() == {"amount": 30}
    assert visited(engine, instance.id) == [("on_invoice", "Completed"), ("review", "Active")]
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    assert [node for node, _ in visited(engine, instance.id)] == ["on_invoice", "review", "done"]


def test_it_starts_by_definition_id_and_still_by_its_message(engine: Engine) -> None:
    engine.deploy(invoice("invoice-by-id"))
    by_id = engine.start_definition(engine.latest_definition("invoice-by-id").id)
    assert [t.node_id for t in by_id.user_tasks()] == ["review"]
    [delivery] = engine.correlate_message("newInvoice").deliveries
    assert delivery["kind"] == "start"
    started = UUID(delivery["instance_id"])
    assert started != by_id.id
    assert visited(engine, started) == [("on_invoice", "Completed"), ("review", "Active")]


def test_a_none_start_event_beside_it_is_the_one_a_start_by_key_takes(engine: Engine) -> None:
    engine.deploy(invoice("invoice-both", none_start=True))
    instance = engine.start_latest("invoice-both")
    assert [t.node_id for t in instance.user_tasks()] == ["by_hand"]
    assert visited(engine, instance.id)[0] == ("start", "Completed")


TWO_MESSAGES = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:message id="m1" name="orderByMail"/>
  <bpmn:message id="m2" name="orderByPhone"/>
  <bpmn:process id="two-ways" name="Two ways in" isExecutable="true">
    <bpmn:startEvent id="by_mail"><bpmn:messageEventDefinition messageRef="m1"/></bpmn:startEvent>
    <bpmn:startEvent id="by_phone"><bpmn:messageEventDefinition messageRef="m2"/></bpmn:startEvent>
    <bpmn:userTask id="take_order"/>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="by_mail" targetRef="take_order"/>
    <bpmn:sequenceFlow id="f2" sourceRef="by_phone" targetRef="take_order"/>
    <bpmn:sequenceFlow id="f3" sourceRef="take_order" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>
"""

ONE_MESSAGE = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:message id="m1" name="paymentArrived"/>
  <bpmn:process id="payment" isExecutable="true">
    <bpmn:startEvent id="arrived"><bpmn:messageEventDefinition messageRef="m1"/></bpmn:startEvent>
    <bpmn:userTask id="book_payment"/>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="arrived" targetRef="book_payment"/>
    <bpmn:sequenceFlow id="f2" sourceRef="book_payment" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>
"""


def test_a_bpmn_file_with_one_message_start_event_starts_by_key(engine: Engine) -> None:
    [model] = parse_bpmn(ONE_MESSAGE)
    assert model.initial is not None and model.initial.id == "arrived"
    engine.deploy(ONE_MESSAGE)
    instance = engine.start_latest("payment")
    assert [t.node_id for t in instance.user_tasks()] == ["book_payment"]
    assert visited(engine, instance.id)[0] == ("arrived", "Completed")


def test_several_start_events_and_no_none_start_are_refused_with_camundas_message(
    engine: Engine,
) -> None:
    [model] = parse_bpmn(TWO_MESSAGES)
    assert model.initial is None
    engine.deploy(TWO_MESSAGES)
    with pytest.raises(BadRequest) as refused:
        engine.start_latest("two-ways")
    assert refused.value.message == REFUSED
    definition_id = engine.latest_definition("two-ways").id
    with pytest.raises(BadRequest):
        engine.start_definition(definition_id)
    with engine.connection() as conn:
        count = conn.execute(
            "SELECT count(*) FROM process_instance WHERE definition_key = 'two-ways'"
        ).fetchone()
    assert count is not None and count[0] == 0  # the refusal wrote nothing
    [delivery] = engine.correlate_message("orderByPhone").deliveries  # each still starts one
    assert visited(engine, UUID(delivery["instance_id"]))[0] == ("by_phone", "Completed")


def test_a_call_activity_calls_a_process_through_its_only_message_start_event(
    engine: Engine,
) -> None:
    engine.deploy(invoice("invoice-called"))
    caller = ProcessBuilder("invoice-caller")
    caller.start_event("start")
    caller.call_activity("call", called_element="invoice-called")
    caller.end_event("end")
    caller.chain("start", "call", "end")
    engine.deploy(caller.build())
    parent = engine.start_latest("invoice-caller")
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT id FROM process_instance WHERE super_instance_id = %s", (parent.id,)
        ).fetchone()
    assert row is not None
    assert visited(engine, row[0]) == [("on_invoice", "Completed"), ("review", "Active")]


WITH_FORM = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    id="defs" targetNamespace="http://example.com/bpmn">
  <bpmn:message id="m1" name="claimFiled"/>
  <bpmn:process id="claim" isExecutable="true">
    <bpmn:startEvent id="filed">
      <bpmn:extensionElements>
        <camunda:formData>
          <camunda:formField id="amount" label="Amount" type="long"/>
        </camunda:formData>
      </bpmn:extensionElements>
      <bpmn:messageEventDefinition messageRef="m1"/>
    </bpmn:startEvent>
    <bpmn:userTask id="assess"/>
    <bpmn:endEvent id="end"/>
    <bpmn:sequenceFlow id="f1" sourceRef="filed" targetRef="assess"/>
    <bpmn:sequenceFlow id="f2" sourceRef="assess" targetRef="end"/>
  </bpmn:process>
</bpmn:definitions>
"""


def test_the_start_form_is_the_message_start_events_form(engine: Engine) -> None:
    engine.deploy(WITH_FORM)
    definition_id = engine.latest_definition("claim").id
    form = engine.start_form(definition_id)
    assert [field.id for field in form.fields] == ["amount"]
    instance = engine.start_latest("claim", form={"amount": "1200"})
    assert instance.variables() == {"amount": 1200}
    assert visited(engine, instance.id)[0] == ("filed", "Completed")
