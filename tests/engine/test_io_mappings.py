"""Input and output parameters and the other ways locals arrive (a worker's localVariables, a
message's processVariablesLocal, a task's local variables), run on real PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import ExpressionError
from engine.queries import instances as reads
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def scoped_rows(engine: Engine, instance_id: UUID) -> set[tuple[str, str, Any]]:
    """(owner node, or "" for the root scope, name, value) of every variable row."""
    tokens = {str(t.id): t.node_id for t in reads.tokens(engine, instance_id)}
    return {
        (tokens.get(row.scope_key, row.scope_key), row.name, row.value)
        for row in reads.variables_in_scopes(engine, instance_id)
    }


def open_task(engine: Engine, instance_id: UUID, node_id: str) -> str:
    [task] = [t for t in engine.user_tasks(instance_id) if t.node_id == node_id]
    return str(task.id)


@pytest.fixture
def seen(engine: Engine) -> dict[str, dict[str, Any]]:
    """What each handler of order_mappings.bpmn saw."""
    seen: dict[str, dict[str, Any]] = {}

    def prepare(context: TaskContext) -> None:
        seen["prepare"] = dict(context.variables)
        context.set("greeting", "changed inside")  # a local: the root never gets it

    def inspect(context: TaskContext) -> None:
        seen["inspect"] = dict(context.variables)
        context.set("amount", context.variables["amount"] + 1)  # the subprocess's amount

    engine.register_handler("prepareOrder", prepare)
    engine.register_handler("inspectOrder", inspect)
    engine.deploy(DATA / "order_mappings.bpmn")
    return seen


def test_the_order_runs_through_every_mapping(
    engine: Engine, seen: dict[str, dict[str, Any]]
) -> None:
    instance = engine.start_latest("order_mappings", {"amount": 7, "city": "Oslo"})
    iid = instance.id
    # The handler saw the inputs as locals beside the root's variables.
    assert seen["prepare"] == {
        "amount": 7,
        "city": "Oslo",
        "greeting": "hello",
        "total": 14,
        "items": ["first", 7, ["nested"]],
        "address": {"city": "Oslo", "zip": "1000"},
        "nothing": None,
    }
    # Only the output came out; the locals (and what the handler set on one) vanished.
    assert instance.variables() == {"amount": 7, "city": "Oslo", "prepared": 14}
    # The user task's inputs are its locals; its assignee expression saw them.
    assert scoped_rows(engine, iid) == {
        ("", "amount", 7),
        ("", "city", "Oslo"),
        ("", "prepared", 14),
        ("Task_Review", "decision", "pending"),
        ("Task_Review", "reviewer", "ann"),
    }
    [task] = engine.user_tasks(iid)
    assert task.assignee == "ann"
    # Completing with a name the task has locally updates the local (Camunda's setVariable);
    # the output copies it out, a new name goes to the root.
    engine.complete_task(task.id, {"decision": "approved", "note": "fine"})
    assert instance.variables() == {
        "amount": 7,
        "city": "Oslo",
        "prepared": 14,
        "approved": "approved",
        "note": "fine",
    }
    # Inside the subprocess its input hides the root's amount; the handler's change stays inside.
    assert seen["inspect"]["amount"] == 107
    assert ("Sub_Check", "amount", 108) in scoped_rows(engine, iid)
    [work] = engine.fetch_and_lock("w1", {"report-check": 10_000})
    assert work["variables"]["amount"]["value"] == 108
    engine.complete_external_task(
        work["id"], "w1", {"checked": True}, local_variables={"report": "ok"}
    )
    # The subprocess ended without outputs: its amount vanished, the root's is unchanged; the
    # worker's local went with the task.
    assert instance.variables()["amount"] == 7
    assert {(owner, name) for owner, name, _ in scoped_rows(engine, iid) if owner} == set()
    assert instance.variables()["checked"] is True
    # The message's processVariablesLocal is a local of the catch event, copied out by its output.
    engine.correlate_message(
        "OrderConfirmed", instance_id=iid, local_variables={"confirmer": "bob"}
    )
    assert instance.state is InstanceState.COMPLETED
    final = instance.variables()
    assert final["confirmation"] == "bob"
    assert "confirmer" not in final


def test_a_local_set_from_outside_waits_with_the_catch_event_until_the_message(
    engine: Engine, seen: dict[str, dict[str, Any]]
) -> None:
    instance = engine.start_latest("order_mappings", {"amount": 1, "city": "Rome"})
    engine.complete_task(open_task(engine, instance.id, "Task_Review"))
    [work] = engine.fetch_and_lock("w1", {"report-check": 10_000})
    engine.complete_external_task(work["id"], "w1")
    # Without confirmer the output expression fails: the command changes nothing.
    with pytest.raises(ExpressionError, match="output parameter 'confirmation' of 'Catch_Confirm'"):
        engine.correlate_message("OrderConfirmed", instance_id=instance.id)
    assert instance.state is InstanceState.ACTIVE
    engine.correlate_message(
        "OrderConfirmed", instance_id=instance.id, variables={"confirmer": "root"}
    )
    assert instance.variables()["confirmation"] == "root"


def boundary_model() -> ProcessBuilder:
    """start -> work (inputs; output copies `local`) -> end; an interrupting message boundary."""
    return (
        ProcessBuilder("io_boundary")
        .start_event("start")
        .user_task("work")
        .end_event("end")
        .end_event("cancelled")
        .chain("start", "work", "end")
        .boundary_event("stop", "work", message="Stop")
        .chain("stop", "cancelled")
        .input_output("work", inputs={"local": "${seed}"}, outputs={"copied": "${local}"})
    )


def test_an_interrupted_activity_applies_no_outputs_and_its_locals_vanish(engine: Engine) -> None:
    engine.deploy(boundary_model().build())
    instance = engine.start_latest("io_boundary", {"seed": "s"})
    assert ("work", "local", "s") in scoped_rows(engine, instance.id)
    engine.correlate_message("Stop", instance_id=instance.id)
    assert instance.state is InstanceState.COMPLETED
    assert scoped_rows(engine, instance.id) == {("", "seed", "s")}


def test_a_user_task_completes_normally_and_its_output_copies_the_local(engine: Engine) -> None:
    engine.deploy(boundary_model().build())
    instance = engine.start_latest("io_boundary", {"seed": "s"})
    engine.complete_task(open_task(engine, instance.id, "work"))
    assert instance.variables() == {"seed": "s", "copied": "s"}


def test_outputs_of_an_activity_in_a_subprocess_land_where_the_name_lives(engine: Engine) -> None:
    """An output is set in the parent scope by Camunda's rule: the subprocess's own local when it
    has the name, else the root."""
    model = (
        ProcessBuilder("io_nested")
        .start_event("start")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .task("inner", parent="sub")
        .user_task("hold", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "inner", "hold", "sub_end")
        .end_event("end")
        .chain("start", "sub", "end")
        .input_output("sub", inputs={"counter": "${counter + 10}"})
        .input_output("inner", outputs={"counter": "${counter + 1}", "fresh": "new"})
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("io_nested", {"counter": 1})
    assert scoped_rows(engine, instance.id) == {
        ("", "counter", 1),
        ("", "fresh", "new"),
        ("sub", "counter", 12),
    }
    engine.complete_task(open_task(engine, instance.id, "hold"))
    assert instance.variables() == {"counter": 1, "fresh": "new"}


def test_a_failing_input_expression_changes_nothing(engine: Engine) -> None:
    model = (
        ProcessBuilder("io_bad")
        .start_event("start")
        .user_task("first")
        .user_task("second")
        .end_event("end")
        .chain("start", "first", "second", "end")
        .input_output("second", inputs={"x": "${missing + 1}"})
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("io_bad")
    task_id = open_task(engine, instance.id, "first")
    with pytest.raises(ExpressionError, match="input parameter 'x' of 'second'"):
        engine.complete_task(task_id, {"written": True})
    assert instance.variables() == {}
    assert [t.node_id for t in engine.user_tasks(instance.id)] == ["first"]


def test_task_local_variables_are_set_and_deleted_in_one_command(engine: Engine) -> None:
    engine.deploy(boundary_model().build())
    instance = engine.start_latest("io_boundary", {"seed": "s"})
    task_id = open_task(engine, instance.id, "work")
    engine.modify_task_variables(task_id, {"extra": 3, "local": "over"}, ["seed"])
    # Deleting a name the task does not hold locally leaves the root's alone.
    assert scoped_rows(engine, instance.id) == {
        ("", "seed", "s"),
        ("work", "local", "over"),
        ("work", "extra", 3),
    }
    engine.modify_task_variables(task_id, {}, ["extra"])
    engine.complete_task(task_id)
    assert instance.variables() == {"seed": "s", "copied": "over"}


def test_a_workers_local_variables_reach_the_output_and_then_vanish(engine: Engine) -> None:
    model = (
        ProcessBuilder("io_worker")
        .start_event("start")
        .service_task("work", topic="work")
        .user_task("after")
        .end_event("end")
        .chain("start", "work", "after", "end")
        .input_output("work", outputs={"result": "${report}"})
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("io_worker", {"report": "outer"})
    [task] = engine.fetch_and_lock("w1", {"work": 10_000})
    engine.complete_external_task(
        task["id"], "w1", {"seen": 1}, local_variables={"report": "from worker"}
    )
    # The local hid the root's `report` for the output, and vanished with the task.
    assert instance.variables() == {"report": "outer", "seen": 1, "result": "from worker"}
    assert scoped_rows(engine, instance.id) == {
        ("", "report", "outer"),
        ("", "seen", 1),
        ("", "result", "from worker"),
    }


def test_a_message_start_events_local_variables_go_to_the_new_instance(engine: Engine) -> None:
    model = (
        ProcessBuilder("io_message_start")
        .start_event("start", message="Begin")
        .user_task("wait")
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )
    engine.deploy(model)
    result = engine.correlate_message("Begin", variables={"a": 1}, local_variables={"b": 2})
    [delivery] = result.deliveries
    assert engine.instance(delivery["instance_id"]).variables() == {"a": 1, "b": 2}


def test_task_variables_set_and_deleted_where_camunda_finds_them(engine: Engine) -> None:
    """Not local: a name the task or an enclosing scope holds is changed there, a new name goes
    to the root; a deletion removes the nearest one."""
    model = (
        ProcessBuilder("io_task_vars")
        .start_event("start")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .user_task("review", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "review", "sub_end")
        .end_event("end")
        .chain("start", "sub", "end")
        .input_output("sub", inputs={"level": "${level + 1}", "inner": "i"})
        .input_output("review", inputs={"mine": "m"})
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("io_task_vars", {"level": 1, "gone": True})
    task_id = open_task(engine, instance.id, "review")
    engine.modify_task_variables(
        task_id, {"level": 10, "mine": "changed", "fresh": 1}, ["inner", "gone"], local=False
    )
    assert scoped_rows(engine, instance.id) == {
        ("", "level", 1),
        ("", "fresh", 1),
        ("sub", "level", 10),
        ("review", "mine", "changed"),
    }
    # Local deletions touch only the task's own; a name it does not hold is left alone.
    engine.modify_task_variables(task_id, {}, ["level", "mine"])
    assert ("sub", "level", 10) in scoped_rows(engine, instance.id)
    assert ("review", "mine", "changed") not in scoped_rows(engine, instance.id)


def test_a_subprocess_left_by_an_error_applies_no_outputs(engine: Engine) -> None:
    model = (
        ProcessBuilder("io_error")
        .start_event("start")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .service_task("work", topic="work", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "work", "sub_end")
        .boundary_event("failed", "sub", error_code="E1")
        .user_task("handle")
        .end_event("end")
        .end_event("end_failed")
        .chain("start", "sub", "end")
        .chain("failed", "handle", "end_failed")
        .input_output("sub", inputs={"inside": "i"}, outputs={"copied": "${inside}"})
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("io_error")
    [task] = engine.fetch_and_lock("w1", {"work": 10_000})
    engine.external_task_bpmn_error(task["id"], "w1", "E1", "broken", {"reported": True})
    assert [t.node_id for t in engine.user_tasks(instance.id)] == ["handle"]
    assert instance.variables() == {"reported": True}
    assert scoped_rows(engine, instance.id) == {("", "reported", True)}


JAVASCRIPT_MAPPINGS = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="t">
  <bpmn:process id="js_mappings" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="price" />
    <bpmn:serviceTask id="price" camunda:delegateExpression="${price}">
      <bpmn:extensionElements>
        <camunda:inputOutput>
          <camunda:inputParameter name="where">${execution.activityId}</camunda:inputParameter>
          <camunda:inputParameter name="lines">
            <camunda:script scriptFormat="javascript">items.map(function (i) {
              return i * 2; })</camunda:script>
          </camunda:inputParameter>
          <camunda:outputParameter name="total">
            <camunda:script scriptFormat="javascript">
              execution.getVariable('sum') + 1</camunda:script>
          </camunda:outputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="price" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>
"""


def test_javascript_mappings_compute_inputs_and_outputs_in_the_isolate(engine: Engine) -> None:
    seen: dict[str, Any] = {}

    def price(context: TaskContext) -> None:
        seen.update(context.variables)
        context.set("sum", sum(context.variables["lines"]))  # a new name: the root gets it

    engine.register_handler("price", price)
    engine.deploy(JAVASCRIPT_MAPPINGS.encode())
    instance = engine.start_latest("js_mappings", {"items": [1, 2, 3]})
    assert instance.state is InstanceState.COMPLETED
    assert seen["lines"] == [2, 4, 6]
    assert seen["where"] == "price"  # expressions in mappings reach the execution
    # The output read `sum` (12); the input `lines` was local and went with the task.
    assert instance.variables() == {"items": [1, 2, 3], "sum": 12, "total": 13}
