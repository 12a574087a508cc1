"""A user task delegated and resolved as Camunda 7 does it (the owner keeps the task while the
delegate works on it; a PENDING task cannot be completed; resolving gives it back to its owner),
its details changed, and a BPMN error or an escalation thrown from it, caught by the boundary
events on the task."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.commands.task_changes import (
    DelegateUserTask,
    ResolveUserTask,
    TaskDetails,
    ThrowFromUserTask,
    UpdateUserTask,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.queries.camunda import tasks as task_reads
from engine.queries.camunda.common import CamundaPage
from engine.states import DelegationState, InstanceState, TaskState

REVIEW = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Defs_review"
    targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="review" isExecutable="true">
    <bpmn:startEvent id="Start" />
    <bpmn:userTask id="Review" name="Review" />
    <bpmn:boundaryEvent id="Rejected" attachedToRef="Review">
      <bpmn:errorEventDefinition errorRef="Error_Rejected" />
    </bpmn:boundaryEvent>
    <bpmn:boundaryEvent id="AskHelp" attachedToRef="Review" cancelActivity="false">
      <bpmn:escalationEventDefinition escalationRef="Escalation_Help" />
    </bpmn:boundaryEvent>
    <bpmn:userTask id="HandleRejection" name="Handle rejection" />
    <bpmn:userTask id="Help" name="Help the reviewer" />
    <bpmn:endEvent id="Done" />
    <bpmn:endEvent id="Closed" />
    <bpmn:endEvent id="Helped" />
    <bpmn:sequenceFlow id="f1" sourceRef="Start" targetRef="Review" />
    <bpmn:sequenceFlow id="f2" sourceRef="Review" targetRef="Done" />
    <bpmn:sequenceFlow id="f3" sourceRef="Rejected" targetRef="HandleRejection" />
    <bpmn:sequenceFlow id="f4" sourceRef="HandleRejection" targetRef="Closed" />
    <bpmn:sequenceFlow id="f5" sourceRef="AskHelp" targetRef="Help" />
    <bpmn:sequenceFlow id="f6" sourceRef="Help" targetRef="Helped" />
  </bpmn:process>
  <bpmn:error id="Error_Rejected" errorCode="REJECTED" />
  <bpmn:escalation id="Escalation_Help" escalationCode="HELP" />
</bpmn:definitions>
"""


@pytest.fixture
def review(engine: Engine) -> Engine:
    engine.deploy(REVIEW)
    return engine


def _task(engine: Engine, instance: InstanceHandle, node_id: str) -> UUID:
    [task] = [t for t in instance.user_tasks() if t.node_id == node_id]
    return task.id


def _row(engine: Engine, task_id: UUID) -> task_reads.TaskRow:
    rows = task_reads.user_tasks(engine, CamundaPage(), task_id=task_id)
    assert isinstance(rows, list) and len(rows) == 1, rows
    return rows[0]


def test_delegation_keeps_the_owner_and_resolving_gives_the_task_back(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.set_assignee(task_id, "ann")
    review.run(DelegateUserTask(task_id, "bob"))
    row = _row(review, task_id)
    assert (row.owner, row.assignee, row.delegation_state) == ("ann", "bob", "PENDING")
    # The delegate cannot complete it: it is resolved back to the owner first.
    with pytest.raises(Conflict, match="delegated task cannot be completed"):
        review.complete_task(task_id, {"verdict": "ok"})
    assert _row(review, task_id).delegation_state == DelegationState.PENDING
    assert "verdict" not in instance.variables()
    review.run(ResolveUserTask(task_id, {"checked": True}))
    row = _row(review, task_id)
    assert (row.owner, row.assignee, row.delegation_state) == ("ann", "ann", "RESOLVED")
    assert instance.variables() == {"checked": True}
    review.complete_task(task_id)
    assert instance.state == InstanceState.COMPLETED


def test_delegating_again_keeps_the_first_owner(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.run(DelegateUserTask(task_id, "bob"))
    # Nobody held it: nobody owns it, and resolving leaves it unassigned.
    assert (_row(review, task_id).owner, _row(review, task_id).assignee) == (None, "bob")
    review.set_assignee(task_id, "ann")
    review.run(UpdateUserTask(task_id, TaskDetails(owner="ann", assignee="ann")))
    review.run(DelegateUserTask(task_id, "bob"))
    review.run(DelegateUserTask(task_id, "carl"))
    row = _row(review, task_id)
    assert (row.owner, row.assignee, row.delegation_state) == ("ann", "carl", "PENDING")


def test_a_task_that_is_not_open_cannot_be_delegated(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.complete_task(task_id)
    with pytest.raises(NotFound):
        review.run(DelegateUserTask(task_id, "bob"))
    with pytest.raises(NotFound):
        review.run(ResolveUserTask(task_id))


def test_details_are_set_all_at_once(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    other = _task(review, review.start_latest("review"), "Review")
    due = datetime(2027, 1, 31, 12, 0, tzinfo=UTC)
    follow_up = datetime(2027, 1, 20, 8, 30, tzinfo=UTC)
    details = TaskDetails(
        name="Check the order",
        description="Compare with the invoice",
        priority=80,
        owner="ann",
        due_at=due,
        follow_up_at=follow_up,
        parent_task_id=other,
    )
    review.run(UpdateUserTask(task_id, details))
    row = _row(review, task_id)
    assert (row.name, row.description, row.priority, row.owner) == (
        "Check the order",
        "Compare with the invoice",
        80,
        "ann",
    )
    assert (row.due_at, row.follow_up_at, row.parent_task_id) == (due, follow_up, other)
    # Whatever is left out is cleared, as Camunda's saveTask does.
    review.run(UpdateUserTask(task_id, TaskDetails(name="Check")))
    row = _row(review, task_id)
    assert (row.name, row.description, row.priority, row.owner, row.due_at) == (
        "Check",
        None,
        0,
        None,
        None,
    )
    with pytest.raises(BadRequest) as refused:
        review.run(UpdateUserTask(task_id, TaskDetails(parent_task_id=task_id)))
    assert refused.value.detail.get("field") == "parentTaskId"


def test_a_bpmn_error_from_the_task_is_caught_by_its_boundary_event(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.run(ThrowFromUserTask(task_id, "REJECTED", "not in stock", variables={"why": "stock"}))
    assert sorted(t.node_id for t in instance.user_tasks()) == ["HandleRejection"]
    assert instance.variables() == {"why": "stock"}
    [review_task] = [t for t in review.user_tasks(instance.id, state=None) if t.id == task_id]
    assert review_task.state != TaskState.OPEN
    # The task is gone: a late completion is refused.
    with pytest.raises((Conflict, NotFound)):
        review.complete_task(task_id)
    review.complete_task(_task(review, instance, "HandleRejection"))
    assert instance.state == InstanceState.COMPLETED


def test_an_escalation_caught_without_interrupting_leaves_the_task_open(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.run(ThrowFromUserTask(task_id, "HELP", escalation=True))
    assert sorted(t.node_id for t in instance.user_tasks()) == ["Help", "Review"]
    review.complete_task(_task(review, instance, "Help"))
    review.complete_task(task_id)
    assert instance.state == InstanceState.COMPLETED


def test_an_error_code_is_required(review: Engine) -> None:
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    with pytest.raises(BadRequest) as refused:
        review.run(ThrowFromUserTask(task_id, ""))
    assert refused.value.detail.get("field") == "errorCode"
    assert sorted(t.node_id for t in instance.user_tasks()) == ["Review"]


def test_an_uncaught_error_ends_the_instance_and_its_task(review: Engine) -> None:
    """As Camunda with its default settings: nothing catches the error, the execution ends."""
    instance = review.start_latest("review")
    task_id = _task(review, instance, "Review")
    review.run(ThrowFromUserTask(task_id, "NOBODY_CATCHES"))
    assert instance.state.is_final
    assert instance.user_tasks() == []
    with pytest.raises(NotFound):
        review.run(ThrowFromUserTask(task_id, "NOBODY_CATCHES"))
