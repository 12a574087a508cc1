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
from tests.compat.processes import REVIEW_WITH_BOUNDARIES


@pytest.fixture
def review(engine: Engine) -> Engine:
    engine.deploy(REVIEW_WITH_BOUNDARIES)
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
