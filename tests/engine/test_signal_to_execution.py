"""A signal to one execution (Camunda's RuntimeService.signalEventReceived(signalName,
executionId)): only that execution's own subscription to the signal receives it, with its
variables; the same instance's other subscriptions to it and other instances' stay; an
execution that is not there, or has no subscription to that signal, is NotFound naming both.
Audited as a broadcast is."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.executions import TriggerExecutionSignal
from engine.core import audit
from engine.errors import BadRequest, NotFound
from engine.states import AuditChannel, InstanceState


def _deploy(engine: Engine) -> None:
    # start -> split -> a signal catch `hear` | a user task `work` with an interrupting signal
    # boundary `stop`, both on the signal `alarm`.
    engine.deploy(
        ProcessBuilder("alarmed")
        .start_event("s")
        .parallel_gateway("split")
        .intermediate_catch_event("hear", signal="alarm")
        .end_event("heard")
        .user_task("work")
        .end_event("worked")
        .chain("s", "split", "hear", "heard")
        .chain("split", "work", "worked")
        .boundary_event("stop", "work", signal="alarm")
        .end_event("stopped")
        .chain("stop", "stopped")
        .build()
    )


def _at(instance: InstanceHandle, node_id: str) -> UUID:
    [token] = [t.token_id for t in instance.tokens() if t.node_id == node_id]
    return token


def _subscriptions(engine: Engine, instance_id: UUID) -> list[str]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id FROM event_subscription WHERE instance_id = %s ORDER BY node_id",
            (instance_id,),
        ).fetchall()
    return [row[0] for row in rows]


def test_the_signal_reaches_the_executions_own_subscription_alone(engine: Engine) -> None:
    _deploy(engine)
    first, second = engine.start_latest("alarmed"), engine.start_latest("alarmed")
    assert _subscriptions(engine, first.id) == ["hear", "stop"]

    result = engine.signal("alarm", {"loud": True}, execution_id=_at(first, "hear"))
    assert result.deliveries == [{"kind": "instance", "instance_id": str(first.id)}]
    # The catch went on; the boundary of the same instance, on the same signal, still waits.
    assert [t.node_id for t in first.tokens()] == ["work"]
    assert _subscriptions(engine, first.id) == ["stop"]
    assert first.variables() == {"loud": True}
    assert _subscriptions(engine, second.id) == ["hear", "stop"]
    assert second.variables() == {}

    # The task's execution holds the boundary's subscription: the boundary interrupts it.
    engine.signal("alarm", execution_id=str(_at(first, "work")))
    assert engine.instance(first.id).state is InstanceState.COMPLETED
    assert sorted(t.node_id for t in second.tokens()) == ["hear", "work"]
    assert _subscriptions(engine, second.id) == ["hear", "stop"]


def test_an_execution_without_the_subscription_is_not_found(engine: Engine) -> None:
    _deploy(engine)
    instance = engine.start_latest("alarmed")
    hear = _at(instance, "hear")
    with pytest.raises(NotFound) as wrong_name:
        engine.signal("other", execution_id=hear)
    assert wrong_name.value.message == (
        f"execution {hear} has no subscription to the signal 'other'"
    )
    assert wrong_name.value.detail == {"execution_id": str(hear), "signal_name": "other"}
    # The instance's own execution subscribes to nothing here: its tokens do.
    with pytest.raises(NotFound):
        engine.signal("alarm", execution_id=instance.id)
    unknown = UUID("00000000-0000-7000-8000-000000000000")
    with pytest.raises(NotFound) as missing:
        engine.run(TriggerExecutionSignal(unknown, "alarm"))
    assert missing.value.message == f"execution {unknown} does not exist"
    with pytest.raises(NotFound):
        engine.signal("alarm", execution_id="not-an-id")
    with pytest.raises(BadRequest):
        engine.signal("alarm", execution_id=hear, tenant_id="t1")
    engine.signal("alarm", execution_id=hear)
    with pytest.raises(NotFound):  # delivered once: its subscription is gone
        engine.signal("alarm", execution_id=hear)
    assert _subscriptions(engine, instance.id) == ["stop"]


def test_a_repeated_idempotency_key_delivers_once(engine: Engine) -> None:
    _deploy(engine)
    instance = engine.start_latest("alarmed")
    hear = _at(instance, "hear")
    first = engine.signal("alarm", execution_id=hear, idempotency_key="k-1")
    again = engine.signal("alarm", execution_id=hear, idempotency_key="k-1")
    assert first == again
    assert _subscriptions(engine, instance.id) == ["stop"]


def test_an_operators_signal_to_an_execution_is_audited_as_a_broadcast(engine: Engine) -> None:
    _deploy(engine)
    instance = engine.start_latest("alarmed")
    hear = _at(instance, "hear")
    with audit.acting(audit.Actor("olga", AuditChannel.API)):
        engine.signal("alarm", {"loud": True}, execution_id=hear)
    with engine.connection() as conn:
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT user_id, operation, entity, entity_id, property, after, details "
            "FROM audit_entry WHERE instance_id = %s",
            (instance.id,),
        ).fetchall()
    assert rows == [
        (
            "olga",
            "CorrelateMessage",
            "ProcessInstance",
            str(instance.id),
            "signalName",
            "alarm",
            {"execution": str(hear), "variables": ["loud"]},
        )
    ]
