"""A service task whose camunda:expression is more than a handler's name evaluates it in the
execution's context and keeps the value in its result variable."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from engine.api import Engine
from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ExpressionError, ModelError
from engine.model import ProcessModel, ServiceTask
from engine.states import InstanceState
from tests.engine.clock import ManualClock

START = datetime(2030, 7, 1, 12, 0, tzinfo=UTC)


def pricing() -> ProcessModel:
    return (
        ProcessBuilder("pricing")
        .start_event("start")
        .service_task(
            "gross",
            expression="${execution.getVariable('net') * 1.25}",
            result_variable="gross",
        )
        .service_task(
            "reference",
            expression="${execution.processBusinessKey.toLowerCase()}",
            result_variable="reference",
        )
        .service_task(
            "due", expression="${dateTime().plusMonths(1).toDate()}", result_variable="due"
        )
        .service_task("touch", expression="${net > 0}")
        .user_task("review")
        .chain("start", "gross", "reference", "due", "touch", "review")
        .build()
    )


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4, clock=ManualClock(START)) as engine:
        yield engine


def test_the_expression_is_written_and_read_back() -> None:
    model = pricing()
    [again] = parse_bpmn(write_bpmn([model]), "pricing.bpmn")
    assert again == model
    gross = again.node("gross")
    assert isinstance(gross, ServiceTask) and gross.handler is None
    assert gross.expression is not None
    assert gross.expression.source == "${execution.getVariable('net') * 1.25}"


def test_the_values_go_to_the_result_variables(engine: Engine) -> None:
    engine.deploy(pricing())
    instance = engine.start_latest("pricing", {"net": 80}, business_key="INV-42")
    assert instance.info().state == InstanceState.ACTIVE
    assert instance.variables() == {
        "net": 80,
        "gross": 100.0,
        "reference": "inv-42",
        "due": datetime(2030, 8, 1, 12, 0, tzinfo=UTC),
    }


def test_a_failing_expression_names_the_task_and_writes_nothing(engine: Engine) -> None:
    engine.deploy(pricing())
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("pricing", {"net": 80})
    assert "camunda:expression of service task 'reference' failed" in str(caught.value)
    assert "cannot call toLowerCase() on null" in str(caught.value)
    assert engine.list_instances().items == []


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        ('camunda:expression="${execution.getClass()}"', "getClass() is not a method"),
        ('camunda:expression="${a + 1}" camunda:class="a.B"', "exactly one implementation"),
        ('camunda:expression="${a +}"', "camunda:expression: unexpected end of expression"),
    ],
)
def test_bad_expressions_fail_the_deployment(attributes: str, problem: str) -> None:
    document = (
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">'
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />'
        f'<bpmn:serviceTask id="n" {attributes} />'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="n" /></bpmn:process>'
        "</bpmn:definitions>"
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(document, "bad.bpmn")
    assert problem in str(caught.value)
    assert caught.value.element_id == "n"


def test_user_task_attributes_see_the_task_being_created_and_the_starter(engine: Engine) -> None:
    model = (
        ProcessBuilder("review")
        .start_event("start")
        .user_task(
            "check",
            "Review Order",
            assignee="${authenticatedUserId}",
            candidate_groups="${task.taskDefinitionKey.toUpperCase()}",
            priority="${task.name.length() + (task.assignee == 'mary' ? 100 : 0)}",
            due_date="${now().plusHours(36)}",
        )
        .chain("start", "check")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("review", started_by="mary")
    [task] = instance.user_tasks()
    assert (task.assignee, task.candidate_groups, task.priority, task.due_at) == (
        "mary",
        ["CHECK"],
        112,
        datetime(2030, 7, 3, 0, 0, tzinfo=UTC),
    )


def test_an_expression_refused_at_deployment_names_file_line_and_element() -> None:
    document = (
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">\n'
        '<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s" />\n'
        '<bpmn:userTask id="n" camunda:dueDate="${execution.getClass()}" />\n'
        '<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="n" /></bpmn:process>'
        "</bpmn:definitions>"
    )
    with pytest.raises(ModelError) as caught:
        parse_bpmn(document, "review.bpmn")
    error = caught.value
    assert (error.file, error.line, error.element_id) == ("review.bpmn", 3, "n")
    assert "camunda:dueDate: getClass() is not a method any value allows" in str(error)
    assert "${execution.getClass()}" in str(error)
