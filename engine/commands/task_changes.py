"""User tasks as Camunda's Tasklist changes them: delegate one to somebody and resolve it back to
its owner, change its details (name, description, dates, priority, owner, parent), and throw a
BPMN error or an escalation from it (a boundary event on the task, or further out, catches it).
A standalone task is delegated, resolved and changed the same way by
engine/commands/standalone_tasks.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from engine.commands import standalone_tasks
from engine.commands.common import advance, persist, persist_audited, require_running
from engine.commands.tasks import TaskResult, load_open, reassign, task_check
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import ASSIGN_TASK, UPDATE_TASK, WORK_ON_TASK, Permit
from engine.core.runtime import InstanceRun, UserTaskRow
from engine.errors import BadRequest, Suspended
from engine.states import (
    AuditEntity,
    AuditOperation,
    DelegationState,
    InstanceState,
    OutboxEvent,
)
from engine.store import tasks

__all__ = [
    "DelegateUserTask",
    "ResolveUserTask",
    "TaskDetails",
    "ThrowFromUserTask",
    "UpdateUserTask",
]


def _result(run: InstanceRun, task: UserTaskRow) -> TaskResult:
    return TaskResult(str(task.id), str(run.instance.id), run.instance.state.value)


def _alone(task: standalone_tasks.StandaloneTaskRow) -> TaskResult:
    """The result of a change of a standalone task (engine/commands/standalone_tasks.py): no
    instance."""
    return TaskResult(str(task.id), "", "")


@dataclass(frozen=True)
class DelegateUserTask:
    """Camunda's delegateTask: the task's owner (its assignee, unless it has an owner already)
    keeps it while `user_id` works on it as its assignee; the delegation is PENDING until the
    delegate resolves it."""

    name: ClassVar[str] = "DelegateUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (ASSIGN_TASK,)

    task_id: UUID
    user_id: str | None

    def execute(self, tx: Tx) -> TaskResult:
        alone = standalone_tasks.locked(tx, self.task_id)
        if alone is not None:
            standalone_tasks.delegate(tx, alone, ASSIGN_TASK, self.user_id)
            return _alone(alone)
        run, task = load_open(tx, self.task_id)
        task_check(tx, ASSIGN_TASK, run, task)
        if run.instance.state is InstanceState.SUSPENDED:
            raise Suspended("Cannot delegate a suspended task", task_id=str(self.task_id))
        if task.owner is None:
            task.owner = task.assignee
        task.delegation_state = DelegationState.PENDING
        details = {"owner": task.owner, "delegationState": task.delegation_state}
        reassign(tx, run, task, self.user_id, AuditOperation.DELEGATE, details)
        return _result(run, task)


@dataclass(frozen=True)
class ResolveUserTask:
    """Camunda's resolveTask: the delegate is done; the task goes back to its owner as its
    assignee and its delegation is RESOLVED. `variables` are set as a completion sets them."""

    name: ClassVar[str] = "ResolveUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (WORK_ON_TASK,)

    task_id: UUID
    variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> TaskResult:
        alone = standalone_tasks.locked(tx, self.task_id)
        if alone is not None:
            standalone_tasks.resolve(tx, alone, WORK_ON_TASK, self.variables)
            return _alone(alone)
        run, task = load_open(tx, self.task_id)
        task_check(tx, WORK_ON_TASK, run, task)
        require_running(run)
        task.delegation_state = DelegationState.RESOLVED
        details: dict[str, Any] | None = None
        if self.variables:
            advance(tx, run).set_variables(self.variables, run.tokens[task.token_id])
            details = {"variables": sorted(self.variables)}
        reassign(tx, run, task, task.owner, AuditOperation.RESOLVE_TASK, details)
        return _result(run, task)


@dataclass(frozen=True)
class TaskDetails:
    """What Camunda's PUT /task/{id} sets, every field at once as its saveTask does: a field
    left out is cleared (a priority left out is 0)."""

    name: str | None = None
    description: str | None = None
    priority: int = 0
    assignee: str | None = None
    owner: str | None = None
    delegation_state: DelegationState | None = None
    due_at: datetime | None = None
    follow_up_at: datetime | None = None
    parent_task_id: UUID | None = None


# The task's fields a change of details writes, with the property names Camunda's operation log
# gives them.
_PROPERTIES: tuple[tuple[str, str], ...] = (
    ("name", "name"),
    ("description", "description"),
    ("priority", "priority"),
    ("assignee", "assignee"),
    ("owner", "owner"),
    ("delegation_state", "delegation"),
    ("due_at", "dueDate"),
    ("follow_up_at", "followUpDate"),
    ("parent_task_id", "parentTask"),
)


def _logged(value: Any) -> Any:
    """A value as the audit entry keeps it (JSON-native)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    return value


@dataclass(frozen=True)
class UpdateUserTask:
    """Camunda's saveTask of an open task: its details become `details`; one audit entry per
    property that changed."""

    name: ClassVar[str] = "UpdateUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_TASK,)

    task_id: UUID
    details: TaskDetails

    def execute(self, tx: Tx) -> TaskResult:
        parent = self.details.parent_task_id
        if parent == self.task_id:
            raise BadRequest("a task cannot be its own parent", field="parentTaskId")
        alone = standalone_tasks.locked(tx, self.task_id)
        if alone is not None:
            if parent is not None and tasks.get(tx.conn, parent) is None:
                raise BadRequest(f"no task has the id {parent}", field="parentTaskId")
            values = {attribute: getattr(self.details, attribute) for attribute, _ in _PROPERTIES}
            standalone_tasks.update(tx, alone, UPDATE_TASK, values, dict(_PROPERTIES))
            return _alone(alone)
        run, task = load_open(tx, self.task_id)
        task_check(tx, UPDATE_TASK, run, task)
        if parent is not None and tasks.get(tx.conn, parent) is None:
            raise BadRequest(f"no task has the id {parent}", field="parentTaskId")
        changed: list[tuple[str, Any, Any]] = []
        for attribute, shown in _PROPERTIES:
            before, after = getattr(task, attribute), getattr(self.details, attribute)
            if before != after:
                changed.append((shown, _logged(before), _logged(after)))
                setattr(task, attribute, after)
        if changed:
            task.dirty = True
            if task.assignee is not None and any(c[0] == "assignee" for c in changed):
                advance(tx, run).assigned(task)
            run.emit(OutboxEvent.TASK_UPDATED, run.tokens.get(task.token_id))
        persist(tx, run)
        for shown, before, after in changed:
            audit.record_on(
                tx,
                run,
                AuditOperation.UPDATE,
                AuditEntity.TASK,
                entity_id=str(task.id),
                property=shown,
                before=before,
                after=after,
            )
        return _result(run, task)


@dataclass(frozen=True)
class ThrowFromUserTask:
    """Camunda's handleBpmnError (`escalation` False) and handleEscalation from an open user
    task: the error (or escalation) `code` is thrown where the task's token waits, so a
    boundary event on the task, or an event subprocess or boundary further out, catches it as
    if the task had thrown it. An interrupting catch retires the task; an escalation caught by
    a non-interrupting boundary leaves it open. `variables` are set first, where the task sees
    them."""

    name: ClassVar[str] = "ThrowFromUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (WORK_ON_TASK,)

    task_id: UUID
    code: str
    message: str = ""
    escalation: bool = False
    variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> TaskResult:
        what = "escalationCode" if self.escalation else "errorCode"
        if not self.code:
            raise BadRequest(f"{what} is required", field=what)
        run, task = load_open(tx, self.task_id)
        task_check(tx, WORK_ON_TASK, run, task)
        require_running(run)
        token = run.tokens[task.token_id]
        flow = advance(tx, run)
        flow.set_variables(self.variables, token)
        if self.escalation:
            flow.throw_escalation(token, self.code)
        else:
            flow.throw_error(token, self.code, self.message)
        persist_audited(
            tx,
            run,
            AuditOperation.UPDATE,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property="escalation" if self.escalation else "bpmnError",
            after=self.code,
            details={"message": self.message} if self.message else None,
        )
        return _result(run, task)
