"""Expressions that act, as Camunda models write them: listener, mapping and service-task
expressions that call `execution.setVariable(...)`, `task.setAssignee(...)` and the like. The
calls are recorded and applied inside the command that evaluates them: in its transaction, so a
failure later in the same command takes them back too. Any other call, and an acting call where
nothing may act, is refused at deployment, naming the file, the line, the element and the call."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.deployments import Deploy, Resource
from engine.errors import ModelError
from engine.scripting import ScriptError
from engine.states import InstanceState
from tests.engine.clock import ManualClock

START = datetime(2031, 3, 3, 9, 0, tzinfo=UTC)

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Defs" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
)

APPROVAL = (
    HEAD
    + """  <bpmn:process id="approval" isExecutable="true">
    <bpmn:startEvent id="start">
      <bpmn:extensionElements>
        <camunda:executionListener event="end"
            expression="${execution.setVariable('approved', amount &lt; 1000)}" />
        <camunda:executionListener event="end" expression="${execution.removeVariable('d')}" />
      </bpmn:extensionElements>
    </bpmn:startEvent>
    <bpmn:exclusiveGateway id="decide" default="toReject" />
    <bpmn:userTask id="review" name="Review">
      <bpmn:extensionElements>
        <camunda:taskListener event="create" expression="${task.setAssignee(clerk)}" />
        <camunda:taskListener event="create"
            expression="${task.setName('Review order ' + orderId)}" />
        <camunda:taskListener event="create" expression="${task.setPriority(80)}" />
        <camunda:taskListener event="create"
            expression="${task.setDueDate(dateTime().plusDays(2).toDate())}" />
        <camunda:taskListener event="assignment"
            expression="${task.setVariable('assignedTo', task.assignee)}" />
        <camunda:executionListener event="start"
            expression="${execution.setVariableLocal('note', 'local to review')}" />
        <camunda:inputOutput>
          <camunda:inputParameter name="ignored"
            >${execution.setVariable('mapped', true)}</camunda:inputParameter>
          <camunda:outputParameter name="copiedNote">${note}</camunda:outputParameter>
        </camunda:inputOutput>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:serviceTask id="book"
        camunda:expression="${execution.setVariable('booked', execution.getVariable('approved'))}">
      <bpmn:extensionElements>
        <camunda:executionListener event="end"
            expression="${execution.getVariable('booked') ? 1 / 0 : 0}" />
      </bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:userTask id="rejected" />
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="decide" />
    <bpmn:sequenceFlow id="toReview" sourceRef="decide" targetRef="review">
      <bpmn:conditionExpression>${approved}</bpmn:conditionExpression>
    </bpmn:sequenceFlow>
    <bpmn:sequenceFlow id="toReject" sourceRef="decide" targetRef="rejected" />
    <bpmn:sequenceFlow id="f3" sourceRef="review" targetRef="book" />
    <bpmn:sequenceFlow id="f4" sourceRef="book" targetRef="end" />
    <bpmn:sequenceFlow id="f5" sourceRef="rejected" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>
"""
)


DRAFT_LISTENER = (
    '<camunda:executionListener event="end" expression="${execution.removeVariable(\'d\')}" />'
)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4, clock=ManualClock(START)) as engine:
        yield engine


def deploy(engine: Engine, text: str, name: str = "approval.bpmn") -> None:
    engine.run(Deploy((Resource(name, text.encode()),)))


def refused(engine: Engine, text: str, name: str = "acting.bpmn") -> ModelError:
    with pytest.raises(ModelError) as caught:
        deploy(engine, text, name)
    return caught.value


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_listener_sets_a_variable_the_same_command_then_reads(engine: Engine) -> None:
    deploy(engine, APPROVAL)
    instance = engine.start_latest(
        "approval", {"amount": 250, "d": "x", "clerk": "kermit", "orderId": "A-7"}
    )
    variables = instance.variables()
    # Set by the start event's end listener, read by the gateway in the same command.
    assert variables["approved"] is True
    assert "d" not in variables
    [task] = engine.user_tasks(instance.id)
    assert task.node_id == "review"
    # The input parameter's expression acted; the local variable stays on the activity.
    assert variables["mapped"] is True
    assert "note" not in variables and "ignored" not in variables


def test_a_listener_that_decides_the_other_way(engine: Engine) -> None:
    deploy(engine, APPROVAL)
    instance = engine.start_latest(
        "approval", {"amount": 5000, "d": "x", "clerk": "kermit", "orderId": "A-8"}
    )
    assert instance.variables()["approved"] is False
    [task] = engine.user_tasks(instance.id)
    assert task.node_id == "rejected"


def test_task_listeners_assign_name_prioritise_and_schedule_the_task(engine: Engine) -> None:
    deploy(engine, APPROVAL)
    instance = engine.start_latest(
        "approval", {"amount": 10, "d": None, "clerk": "kermit", "orderId": "A-9"}
    )
    [task] = engine.user_tasks(instance.id)
    assert (task.assignee, task.name, task.priority) == ("kermit", "Review order A-9", 80)
    assert task.due_at == START + timedelta(days=2)
    # The assignment listener ran after create, seeing the assignee the create listener set.
    assert instance.variables()["assignedTo"] == "kermit"
    assert engine.user_tasks(assignee="kermit")[0].id == task.id


def test_a_failure_later_in_the_command_rolls_the_changes_back(engine: Engine) -> None:
    deploy(engine, APPROVAL)
    instance = engine.start_latest(
        "approval", {"amount": 10, "d": None, "clerk": "kermit", "orderId": "A-10"}
    )
    [task] = engine.user_tasks(instance.id)
    before = instance.variables()
    # Completing the task: the output copies the local note, the service task's expression sets
    # `booked`, then the service task's end listener divides by zero: the whole command fails.
    with pytest.raises(ScriptError) as caught:
        engine.complete_task(task.id)
    assert "division by zero" in str(caught.value)
    assert instance.variables() == before
    assert "booked" not in instance.variables() and "copiedNote" not in instance.variables()
    [still] = engine.user_tasks(instance.id)
    assert still.id == task.id
    assert instance.state == InstanceState.ACTIVE


def test_set_local_lives_on_its_activity_and_an_output_copies_it(engine: Engine) -> None:
    text = APPROVAL.replace("${execution.getVariable('booked') ? 1 / 0 : 0}", "${0}")
    deploy(engine, text)
    instance = engine.start_latest(
        "approval", {"amount": 10, "d": None, "clerk": "kermit", "orderId": "A-11"}
    )
    [task] = engine.user_tasks(instance.id)
    engine.complete_task(task.id)
    variables = instance.variables()
    assert instance.state == InstanceState.COMPLETED
    assert variables["copiedNote"] == "local to review"
    assert "note" not in variables
    assert variables["booked"] is True


def test_builder_listeners_and_service_tasks_act_too(engine: Engine) -> None:
    model = (
        ProcessBuilder("built")
        .start_event("start")
        .service_task("count", expression="${execution.setVariable('count', count + 1)}")
        .user_task("wait")
        .chain("start", "count", "wait")
        .listener("wait", "create", script="${task.setAssignee('piggy')}", format="juel", task=True)
        .listener("wait", "start", script="${execution.removeVariable('secret')}", format="juel")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("built", {"count": 41, "secret": "s"})
    assert instance.variables() == {"count": 42}
    [task] = engine.user_tasks(instance.id)
    assert task.assignee == "piggy"


@pytest.mark.parametrize(
    ("written", "element", "call"),
    [
        # An acting call where nothing may act: a sequence flow's condition.
        (
            '<bpmn:conditionExpression>${execution.setVariable("x", 1)}</bpmn:conditionExpression>',
            "toReview",
            "execution.setVariable() changes the instance",
        ),
        # A call no value allows, in a listener.
        (
            '<camunda:executionListener event="end" '
            'expression="${execution.getProcessEngineServices()}" />',
            "start",
            "getProcessEngineServices()",
        ),
        # The task is not there to change in an execution listener.
        (
            '<camunda:executionListener event="end" expression="${task.setAssignee(\'x\')}" />',
            "start",
            "task.setAssignee() changes the instance; only task listeners may call it",
        ),
        # An acting method on something else than the execution or the task.
        (
            '<camunda:executionListener event="end" expression="${order.setVariable(\'x\', 1)}" />',
            "start",
            "setVariable() changes the instance: call it on execution or task",
        ),
    ],
)
def test_what_may_not_act_is_refused_at_deployment(
    engine: Engine, written: str, element: str, call: str
) -> None:
    if written.startswith("<bpmn:conditionExpression>"):
        text = APPROVAL.replace(
            "<bpmn:conditionExpression>${approved}</bpmn:conditionExpression>", written
        )
    else:
        text = APPROVAL.replace(
            DRAFT_LISTENER,
            written,
        )
    assert text != APPROVAL
    error = refused(engine, text)
    assert error.element_id == element
    assert error.line == line_of(text, written)
    assert "acting.bpmn" in str(error)
    assert call in str(error)
    assert engine.definitions("approval") == []


def test_a_listener_expression_failing_at_run_time_names_the_listener(engine: Engine) -> None:
    text = APPROVAL.replace(
        "${execution.removeVariable('d')}", "${execution.setVariable(draftName, 1)}"
    )
    deploy(engine, text)
    with pytest.raises(ScriptError) as caught:
        engine.start_latest(
            "approval",
            {"amount": 1, "d": None, "clerk": "k", "orderId": "1", "draftName": 7},
        )
    message = str(caught.value)
    assert "end listener of startEvent 'start'" in message
    assert "setVariable()" in message and "variable names must be non-empty strings" in message
    assert engine.list_instances().items == []


def test_the_process_listeners_act_on_the_instance(engine: Engine) -> None:
    model = (
        ProcessBuilder("closing")
        .start_event("start")
        .end_event("end")
        .chain("start", "end")
        .listener("closing", "start", script="${execution.setVariable('opened', 1)}", format="juel")
        .listener(
            "closing",
            "end",
            script="${execution.setVariable('closed', execution.getVariable('opened') + 1)}",
            format="juel",
        )
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("closing")
    assert instance.state == InstanceState.COMPLETED
    assert instance.variables() == {"opened": 1, "closed": 2}
