"""Signalling a waiting execution through the Python API (InstanceHandle.signal), as Camunda's
RuntimeService.signal: a receive task without a message (built in code, and written to BPMN and
read back), an external task (a late report from its worker is refused), a timer catch (its job
goes), the one waiting token behind the instance's own execution; refusals for a subprocess's
scope, for another instance's execution and for an ended instance."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.bpmn.parser import parse_bpmn
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import Conflict, InterlockError, NotFound
from engine.model import ReceiveTask, TimerDefinition


def _count(engine: Engine, table: str, instance_id: UUID) -> int:
    with engine.connection() as conn:
        row = conn.execute(
            f"SELECT count(*) FROM {table} WHERE instance_id = %s",
            (instance_id,),
        ).fetchone()
    assert row is not None
    found: int = row[0]
    return found


def _at(instance: InstanceHandle, node_id: str) -> UUID:
    [token] = [t.token_id for t in instance.tokens() if t.node_id == node_id]
    return token


def test_a_receive_task_without_a_message_waits_until_signalled(engine: Engine) -> None:
    model = (
        ProcessBuilder("go-ahead")
        .start_event("start")
        .receive_task("wait", "Wait for the go-ahead")
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )
    # Written to BPMN it has no messageRef, and it reads back so.
    text = write_bpmn([model])
    assert 'id="wait"' in text and "messageRef" not in text
    [parsed] = parse_bpmn(text.encode(), "go-ahead.bpmn")
    node = parsed.node("wait")
    assert isinstance(node, ReceiveTask) and node.message_name is None

    engine.deploy(model)
    instance = engine.start_latest("go-ahead")
    assert [(t.node_id, t.state.value) for t in instance.tokens()] == [("wait", "WaitForEvent")]
    assert _count(engine, "event_subscription", instance.id) == 0
    instance.signal(variables={"go": True})
    assert instance.state.value == "Completed"
    assert instance.variables() == {"go": True}
    with pytest.raises(NotFound):
        instance.signal()


def test_an_external_task_and_a_timer_catch_are_signalled(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("work-then-wait")
        .start_event("start")
        .service_task("work", topic="signalled-work")
        .intermediate_catch_event("later", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("end")
        .chain("start", "work", "later", "end")
        .build()
    )
    instance = engine.start_latest("work-then-wait")
    [locked] = engine.fetch_and_lock("w1", {"signalled-work": 60_000})
    instance.signal(_at(instance, "work"))
    # The external task retired with its token: its worker's late report is refused.
    with pytest.raises(InterlockError):
        engine.complete_external_task(locked["id"], "w1")
    assert [t.node_id for t in instance.tokens()] == ["later"]
    assert _count(engine, "job", instance.id) == 1
    instance.signal()
    assert _count(engine, "job", instance.id) == 0
    assert instance.state.value == "Completed"


def _nested(engine: Engine) -> InstanceHandle:
    engine.deploy(
        ProcessBuilder("nested-wait")
        .start_event("start")
        .sub_process("sub")
        .start_event("inner_start", parent="sub")
        .receive_task("inner", parent="sub")
        .end_event("inner_end", parent="sub")
        .end_event("end")
        .chain("start", "sub", "end")
        .chain("inner_start", "inner", "inner_end")
        .build()
    )
    return engine.start_latest("nested-wait")


def test_a_scope_is_not_signalled_and_the_instance_stands_for_its_one_waiting_token(
    engine: Engine,
) -> None:
    instance = _nested(engine)
    with pytest.raises(Conflict) as refused:
        instance.signal(_at(instance, "sub"))
    assert "subProcess" in refused.value.message
    assert sorted(t.node_id for t in instance.tokens()) == ["inner", "sub"]
    # The instance's own execution: its innermost waiting token, the receive task's.
    instance.signal()
    assert instance.state.value == "Completed"


def test_another_instances_execution_is_not_found(engine: Engine) -> None:
    first, second = _nested(engine), _nested(engine)
    other: Any = _at(second, "inner")
    with pytest.raises(NotFound):
        first.signal(other)
    assert sorted(t.node_id for t in second.tokens()) == ["inner", "sub"]
