"""camunda:initiator and the authenticated user: whoever starts an instance is known to it;
expressions in the model reach the execution, the clock and string methods; a
camunda:taskPriority expression sets the external task's priority; the starter attributes and
job priorities are accepted and change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from engine.api import Engine
from engine.bpmn import parse_bpmn
from engine.errors import ExpressionError
from engine.model import ServiceTask, StartEvent
from engine.states import InstanceState
from tests.engine.clock import ManualClock
from tests.server import PASSWORD, LiveServer

FILE = Path(__file__).parent.parent / "data" / "bpmn" / "leave_initiator.bpmn"
START = datetime(2030, 5, 6, 9, 0, tzinfo=UTC)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4, clock=ManualClock(START)) as engine:
        engine.deploy(FILE)
        yield engine


def test_the_model_keeps_the_initiator_and_the_priority_expression() -> None:
    [model] = parse_bpmn(FILE.read_bytes(), FILE.name)
    start, check = model.node("StartEvent_Request"), model.node("Task_CheckBalance")
    assert isinstance(start, StartEvent) and start.initiator == "requester"
    assert isinstance(check, ServiceTask) and check.task_priority == "${days > 5 ? 80 : 20}"


def test_the_starter_becomes_the_initiator_and_expressions_use_the_context(
    engine: Engine,
) -> None:
    instance = engine.start_latest("leave_initiator", {"days": 7}, started_by="mary")
    assert instance.variables() == {"days": 7, "requester": "mary"}
    [check] = engine.fetch_and_lock("hr", {"leave-balance": 60_000})
    assert check["priority"] == 80
    engine.complete_external_task(check["id"], "hr")

    [task] = instance.user_tasks()
    assert (task.assignee, task.priority, task.due_at) == (
        "MARY",
        70,
        datetime(2030, 5, 13, 9, 0, tzinfo=UTC),
    )
    engine.complete_task(task.id, {"approver": "Mary"})
    assert instance.state is InstanceState.COMPLETED
    [track] = instance.history()
    assert track.steps[-1].node_id == "EndEvent_SelfApproved"


def test_an_unknown_starter_is_null_and_a_method_on_null_fails_naming_the_expression(
    engine: Engine,
) -> None:
    instance = engine.start_latest("leave_initiator", {"days": 2})
    assert instance.variables() == {"days": 2, "requester": None}
    [check] = engine.fetch_and_lock("hr", {"leave-balance": 60_000})
    assert check["priority"] == 20
    with pytest.raises(ExpressionError) as caught:
        engine.complete_external_task(check["id"], "hr")
    assert "cannot call toUpperCase() on null" in str(caught.value)
    assert "${execution.getVariable('requester').toUpperCase()}" in str(caught.value)
    # Nothing was written: the external task is still there, locked by its worker.
    assert instance.user_tasks() == []
    [still] = engine.external_tasks(instance_id=instance.id)
    assert still.worker_id == "hr"


def test_a_priority_expression_that_gives_no_integer_fails_naming_the_node(
    engine: Engine,
) -> None:
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("leave_initiator", {"days": "many"}, started_by="mary")
    assert "cannot compare str > int" in str(caught.value)
    assert engine.list_instances().items == []


def test_both_apis_start_with_the_authenticated_user(server: LiveServer) -> None:
    server.engine.deploy(FILE)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        camunda = client.post(
            "/engine-rest/process-definition/key/leave_initiator/start",
            json={"variables": {"days": {"value": 1, "type": "Integer"}}},
            auth=("operator", PASSWORD),
        )
        assert camunda.status_code == 200, camunda.text
        native = client.post(
            "/api/v1/definitions/key/leave_initiator/start",
            json={"variables": {"days": 1}},
            headers=server.bearer("operator"),
        )
        assert native.status_code == 201, native.text
    started_by = {
        server.engine.instance(started).variables()["requester"]
        for started in (camunda.json()["id"], native.json()["id"])
    }
    assert started_by == {"operator", "operator-token"}
