"""The JavaScript isolate: no host access, time and memory limits, the facade scripts expect, and
values crossing as JSON."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from engine.scripting import (
    Isolate,
    ScriptError,
    ScriptLimits,
    Subject,
    TaskFacts,
    evaluate,
)

SUBJECT = Subject(
    execution_id="exec-1",
    instance_id="inst-1",
    activity_id="Task_A",
    activity_name="Task A",
    business_key="order-7",
    definition_id="p:1:x",
    event_name="start",
)
TASK_SUBJECT = Subject(
    execution_id="exec-1",
    instance_id="inst-1",
    activity_id="Task_Approve",
    business_key="order-7",
    event_name="create",
    task=TaskFacts(
        id="task-9", name="Approve", assignee=None, priority=50, task_definition_key="Task_Approve"
    ),
)


@pytest.mark.parametrize("name", ["require", "process", "fetch", "XMLHttpRequest", "setTimeout"])
def test_the_isolate_has_no_host_access(name: str) -> None:
    assert evaluate(f"typeof {name}", {}) == "undefined"


@pytest.mark.parametrize(
    "name", ["WebAssembly", "ArrayBuffer", "SharedArrayBuffer", "Uint8Array", "DataView"]
)
def test_memory_outside_the_heap_is_out_of_reach(name: str) -> None:
    assert evaluate(f"typeof {name}", {}) == "undefined"


def test_an_endless_loop_times_out_and_the_isolate_recovers() -> None:
    isolate = Isolate(ScriptLimits(timeout_seconds=0.2))
    started = time.monotonic()
    with pytest.raises(ScriptError) as caught:
        isolate.run("while (true) {}", {}, SUBJECT, where="script task 'Spin'")
    assert time.monotonic() - started < 5
    assert caught.value.message == "script task 'Spin': the script ran longer than 0.2 s"
    assert caught.value.detail["reason"] == "timeout"
    assert isolate.run("1 + 1", {}, SUBJECT, where="next").value == 2


def test_a_huge_allocation_hits_the_memory_limit_and_the_isolate_recovers() -> None:
    isolate = Isolate(ScriptLimits(timeout_seconds=10, max_memory=32 * 1024 * 1024))
    with pytest.raises(ScriptError) as caught:
        isolate.run(
            "var kept = []; for (;;) { kept.push(new Array(1000000).fill(1.5)); }",
            {},
            SUBJECT,
            where="script task 'Hog'",
        )
    assert caught.value.message == (
        "script task 'Hog': the script went over its memory limit of 33554432 bytes"
    )
    assert isolate.run("'alive'", {}, SUBJECT, where="next").value == "alive"


def test_what_a_script_throws_names_where_and_the_line() -> None:
    with pytest.raises(ScriptError) as caught:
        evaluate("var a = 1;\nthrow new Error('no credit');", {}, where="script task 'Check'")
    assert caught.value.message == "script task 'Check': Error: no credit (line 2)"
    with pytest.raises(ScriptError) as caught:
        evaluate("missing + 1", {}, where="condition")
    assert caught.value.message == "condition: ReferenceError: missing is not defined (line 1)"
    with pytest.raises(ScriptError) as caught:
        evaluate("if (", {}, where="listener")
    assert "listener: SyntaxError" in caught.value.message


def test_the_facade_records_calls_in_order() -> None:
    outcome = Isolate().run(
        "execution.setVariable('net', amount * 2);\n"
        "execution.setVariable('key', execution.getProcessBusinessKey() + ':' + "
        "execution.activityId + ':' + execution.getId() + ':' + execution.eventName);\n"
        "execution.setVariableLocal('seen', execution.hasVariable('amount'));\n"
        "execution.getVariable('net') + 1",
        {"amount": 21},
        SUBJECT,
        where="t",
    )
    assert outcome.value == 43
    assert outcome.changes == (
        ("set", "net", 42, False),
        ("set", "key", "order-7:Task_A:exec-1:start", False),
        ("set", "seen", True, True),
    )


def test_variables_are_globals_to_read_and_assigning_one_changes_nothing() -> None:
    outcome = Isolate().run(
        "var before = amount; amount = 5; [before, amount, execution.getVariable('amount')]",
        {"amount": 1, "eval": "not the builtin", "execution": "not the facade"},
        SUBJECT,
        where="t",
    )
    assert outcome.value == [1, 5, 1]
    assert outcome.changes == ()


def test_task_facade_sets_assignee_and_priority() -> None:
    outcome = Isolate().run(
        "task.setAssignee(approver); task.priority = 80;"
        "[task.getId(), task.name, task.assignee, task.getPriority(), task.eventName]",
        {"approver": "mary"},
        TASK_SUBJECT,
        where="t",
    )
    assert outcome.value == ["task-9", "Approve", "mary", 80, "create"]
    assert outcome.changes == (("assignee", None, "mary", False), ("priority", None, 80, False))


def test_values_cross_as_json_and_dates_as_iso_strings() -> None:
    moment = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    outcome = Isolate().run(
        "execution.setVariable('when', new Date(Date.UTC(2031, 0, 1)));"
        "execution.setVariable('items', [1, {a: 'x'}]);"
        "execution.setVariable('nothing', undefined);"
        "[typeof due, due, order.lines.length]",
        {"due": moment, "order": {"lines": [1, 2, 3]}},
        SUBJECT,
        where="t",
    )
    assert outcome.value == ["string", "2030-01-02T03:04:05+00:00", 3]
    assert outcome.changes == (
        ("set", "when", "2031-01-01T00:00:00.000Z", False),
        ("set", "items", [1, {"a": "x"}], False),
        ("set", "nothing", None, False),
    )


def test_a_value_json_cannot_carry_becomes_null() -> None:
    assert evaluate("(function () {})", {}) is None
    assert evaluate("undefined", {}) is None


def test_remove_variable_is_recorded_and_the_name_is_gone_for_the_script() -> None:
    outcome = Isolate().run(
        "execution.removeVariable('x'); task; execution.removeVariableLocal('y');"
        "execution.hasVariable('x')",
        {"x": 1, "y": 2},
        SUBJECT,
        where="t",
    )
    assert outcome.value is False
    assert [tuple(change) for change in outcome.changes] == [
        ("remove", "x", None, False),
        ("remove", "y", None, True),
    ]


def test_evaluate_serves_mappings_over_given_variables() -> None:
    assert evaluate("items.map(function (i) { return i * 2; })", {"items": [1, 2]}) == [2, 4]
    assert evaluate("execution.getVariable('name').toUpperCase()", {"name": "ada"}) == "ADA"


def test_nothing_a_script_does_outlives_it_in_the_shared_isolate() -> None:
    isolate = Isolate()
    outcome = isolate.run(
        "leak = 1; globalThis.other = 2; Array.prototype.extra = 3; JSON.parse = null;"
        "Object.prototype.polluted = true; typeof leak",
        {},
        SUBJECT,
        where="first",
    )
    assert outcome.value == "number"
    later = Isolate().run(
        "[typeof leak, typeof other, [].extra, typeof JSON.parse, ({}).polluted]",
        {},
        SUBJECT,
        where="second",
    )
    assert later.value == ["undefined", "undefined", None, "function", None]


def test_a_global_that_cannot_be_deleted_retires_the_isolate() -> None:
    Isolate().run(
        "Object.defineProperty(globalThis, 'stuck', { value: 1, configurable: false }); 0",
        {},
        SUBJECT,
        where="first",
    )
    assert evaluate("typeof stuck", {}) == "undefined"
    assert Isolate().run("typeof stuck", {}, SUBJECT, where="x").value == "undefined"


def test_a_script_runs_with_its_time_limit_on_a_thread_whose_event_loop_is_running() -> None:
    """An ASGI server or a test browser runs an asyncio loop on its thread: an isolate first
    needed there still enforces its time limit and answers."""
    results: list[Any] = []

    async def inside_a_running_loop() -> None:
        results.append(evaluate("6 * 7", {}))
        with pytest.raises(ScriptError, match="ran longer than"):
            Isolate(ScriptLimits(timeout_seconds=0.05)).run(
                "while (true) {}", {}, SUBJECT, where="script"
            )
        results.append(evaluate("1 + 1", {}))

    thread = threading.Thread(target=lambda: asyncio.run(inside_a_running_loop()))
    thread.start()
    thread.join()
    assert results == [42, 2]
