"""Camunda's expression context: the execution, the task, the authenticated user, the clock and
string methods, through tables of allowed methods only. The results are pinned literally."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine.errors import ExpressionError
from engine.language.expression_context import ExecutionFacts, ExpressionContext, TaskFacts
from engine.language.expressions import compile_expression

NOW = datetime(2030, 1, 31, 9, 30, tzinfo=UTC)
VARIABLES: dict[str, Any] = {
    "amount": 1500,
    "name": "Ada Lovelace",
    "padded": "  x  ",
    "blank": "",
    "due": datetime(2030, 2, 1, tzinfo=UTC),
    "order": {"id": "o-1"},
}
CONTEXT = ExpressionContext(
    now=NOW,
    execution=ExecutionFacts(
        id="token-1",
        process_instance_id="instance-1",
        activity_id="Task_Approve",
        business_key="INV-7",
        process_definition_id="invoice:1:abc",
        variables=VARIABLES,
    ),
    task=TaskFacts(
        id="task-9",
        task_definition_key="Task_Approve",
        name="Approve invoice",
        assignee="demo",
        priority=60,
        variables=VARIABLES,
    ),
    authenticated_user_id="mary",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the execution
        ("${execution.getVariable('amount')}", 1500),
        ("${execution.getVariable('missing')}", None),
        ("${execution.hasVariable('name')}", True),
        ("${execution.getVariable('amount') > 1000}", True),
        ("${execution.processBusinessKey}", "INV-7"),
        ("${execution.getProcessBusinessKey()}", "INV-7"),
        ("${execution.businessKey}", "INV-7"),
        ("${execution.getBusinessKey()}", "INV-7"),
        ("${execution.id}", "token-1"),
        ("${execution.getId()}", "token-1"),
        ("${execution.activityId}", "Task_Approve"),
        ("${execution.getActivityId()}", "Task_Approve"),
        ("${execution.processInstanceId}", "instance-1"),
        ("${execution.getProcessInstanceId()}", "instance-1"),
        ("${execution.processDefinitionId}", "invoice:1:abc"),
        ("${execution['activityId']}", "Task_Approve"),
        # the task
        ("${task.assignee}", "demo"),
        ("${task.getAssignee()}", "demo"),
        ("${task.id}", "task-9"),
        ("${task.name}", "Approve invoice"),
        ("${task.getName()}", "Approve invoice"),
        ("${task.taskDefinitionKey}", "Task_Approve"),
        ("${task.priority}", 60),
        ("${task.getVariable('name')}", "Ada Lovelace"),
        # the user
        ("${authenticatedUserId}", "mary"),
        ("${authenticatedUserId == 'mary'}", True),
        # dates on the command's clock
        ("${now()}", datetime(2030, 1, 31, 9, 30, tzinfo=UTC)),
        ("${dateTime()}", datetime(2030, 1, 31, 9, 30, tzinfo=UTC)),
        ("${dateTime().toDate()}", datetime(2030, 1, 31, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusWeeks(1).toDate()}", datetime(2030, 2, 7, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusDays(2).toDate()}", datetime(2030, 2, 2, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusMonths(1).toDate()}", datetime(2030, 2, 28, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusYears(2).toDate()}", datetime(2032, 1, 31, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusHours(15).toDate()}", datetime(2030, 2, 1, 0, 30, tzinfo=UTC)),
        ("${dateTime().plusMinutes(45).toDate()}", datetime(2030, 1, 31, 10, 15, tzinfo=UTC)),
        ("${dateTime().plusSeconds(30).toDate()}", datetime(2030, 1, 31, 9, 30, 30, tzinfo=UTC)),
        ("${dateTime().minusDays(31).toDate()}", datetime(2029, 12, 31, 9, 30, tzinfo=UTC)),
        ("${dateTime().minusWeeks(1).toDate()}", datetime(2030, 1, 24, 9, 30, tzinfo=UTC)),
        ("${dateTime().minusMonths(2).toDate()}", datetime(2029, 11, 30, 9, 30, tzinfo=UTC)),
        ("${dateTime().minusHours(10).toDate()}", datetime(2030, 1, 30, 23, 30, tzinfo=UTC)),
        ("${now().plusDays(1)}", datetime(2030, 2, 1, 9, 30, tzinfo=UTC)),
        ("${dateTime().plusDays(1).plusHours(1)}", datetime(2030, 2, 1, 10, 30, tzinfo=UTC)),
        ("${now() < due}", True),
        ("${dateTime().plusDays(1).toDate() > due}", True),
        # strings
        ("${name.contains('Love')}", True),
        ("${name.contains('love')}", False),
        ("${name.startsWith('Ada')}", True),
        ("${name.endsWith('lace')}", True),
        ("${name.toUpperCase()}", "ADA LOVELACE"),
        ("${name.toLowerCase()}", "ada lovelace"),
        ("${name.length()}", 12),
        ("${padded.trim()}", "x"),
        ("${padded.trim().length()}", 1),
        ("${blank.isEmpty()}", True),
        ("${name.isEmpty()}", False),
        ("${name.equals('Ada Lovelace')}", True),
        ("${name.equals(1)}", False),
        ("${name.equalsIgnoreCase('ADA LOVELACE')}", True),
        ("${name.substring(4)}", "Lovelace"),
        ("${name.substring(0, 3)}", "Ada"),
        ("${'abc'.toUpperCase()}", "ABC"),
        ("${order.id.startsWith('o-')}", True),
        ("${execution.processBusinessKey.startsWith('INV')}", True),
        ("${name.contains('Ada') && amount > 1000 ? 'big' : 'small'}", "big"),
    ],
)
def test_evaluates_in_context(text: str, expected: Any) -> None:
    result = compile_expression(text).evaluate(VARIABLES, CONTEXT)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("${execution.getClass()}", "getClass() is not a method any value allows"),
        ("${''.__class__}", "names starting with '_' are not allowed"),
        ("${name.__len__()}", "__len__() is not a method any value allows"),
        ("${name.getClass()}", "getClass() is not a method any value allows"),
        ("${name.format('x')}", "format() is not a method any value allows"),
        ("${name.split(',')}", "split() is not a method any value allows"),
        (
            "${execution.setVariable('a', 1)}",
            "execution.setVariable() changes the instance; only listeners",
        ),
        ("${execution.getProcessEngineServices()}", "is not a method any value allows"),
        ("${execution.foo}", "the execution has no property 'foo'"),
        ("${execution.toUpperCase()}", "the execution has no method toUpperCase()"),
        ("${execution.processEngine}", "the execution has no property 'processEngine'"),
        (
            "${system('ls')}",
            "calls are not allowed to system() (the functions are JSON() and S() and dateTime()",
        ),
        ("${getClass()}", "calls are not allowed to getClass()"),
        ("${dateTime().toDate()()}", "only named functions and methods can be called"),
    ],
)
def test_refused_when_compiled(text: str, problem: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert problem in str(caught.value)
    assert text in str(caught.value)


@pytest.mark.parametrize(
    ("text", "variables", "context", "problem"),
    [
        ("${amount.contains('1')}", VARIABLES, CONTEXT, "contains() is not a method a int allows"),
        ("${name.plusDays(1)}", VARIABLES, CONTEXT, "plusDays() is not a method a string allows"),
        (
            "${order.startsWith('x')}",
            VARIABLES,
            CONTEXT,
            "startsWith() is not a method a JSON object",
        ),
        ("${missing.trim()}", {"missing": None}, CONTEXT, "cannot call trim() on null"),
        ("${name.contains(1)}", VARIABLES, CONTEXT, "contains() needs a string argument"),
        ("${name.substring(5, 2)}", VARIABLES, CONTEXT, "substring(5, 2) is out of range"),
        ("${name.substring(1, 2, 3)}", VARIABLES, CONTEXT, "takes 1 to 2 arguments, not 3"),
        ("${name.trim(1)}", VARIABLES, CONTEXT, "trim() takes 0 arguments, not 1"),
        ("${dateTime().plusDays('1')}", VARIABLES, CONTEXT, "plusDays() needs an integer"),
        ("${dateTime().plusYears(9000).toDate()}", VARIABLES, CONTEXT, "out of range"),
        ("${dateTime(1)}", VARIABLES, CONTEXT, "dateTime() takes no arguments"),
        ("${task.owner}", VARIABLES, CONTEXT, "the task has no property 'owner'"),
        ("${execution}", VARIABLES, CONTEXT, "the execution itself is not a value"),
        ("${task}", VARIABLES, CONTEXT, "the task itself is not a value"),
        ("${dateTime()}", VARIABLES, None, "dateTime() needs the command's clock"),
        ("${now()}", VARIABLES, ExpressionContext(), "now() needs the command's clock"),
        ("${execution.id}", VARIABLES, None, "unknown variable 'execution'"),
        ("${task.id}", VARIABLES, ExpressionContext(now=NOW), "unknown variable 'task'"),
        ("${now() < amount}", VARIABLES, CONTEXT, "cannot compare datetime < int"),
    ],
)
def test_refused_when_run(
    text: str, variables: dict[str, Any], context: ExpressionContext | None, problem: str
) -> None:
    expression = compile_expression(text)
    with pytest.raises(ExpressionError) as caught:
        expression.evaluate(variables, context)
    assert problem in str(caught.value)
    assert text in str(caught.value)


def test_context_names_come_before_variables_as_in_camunda() -> None:
    variables = {"task": {"id": "a variable"}, "authenticatedUserId": "spoofed"}
    expression = compile_expression("${task.id}")
    assert expression.evaluate(variables) == "a variable"
    assert expression.evaluate(variables, ExpressionContext(now=NOW)) == "a variable"
    assert expression.evaluate(variables, CONTEXT) == "task-9"
    user = compile_expression("${authenticatedUserId}")
    assert user.evaluate(variables, ExpressionContext()) is None
    assert user.evaluate(variables, CONTEXT) == "mary"


def test_methods_are_table_entries_not_python_attributes() -> None:
    class Sneaky(str):
        def upper(self) -> str:
            raise AssertionError("a Python attribute was called")

    # A str subclass is not the str type: its methods are not looked up at all.
    with pytest.raises(ExpressionError, match="is not a method a Sneaky allows"):
        compile_expression("${s.toUpperCase()}").evaluate({"s": Sneaky("x")}, CONTEXT)
