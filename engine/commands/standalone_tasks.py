"""Standalone user tasks (Camunda's POST /task/create): a task of no process instance, created
by hand, claimed, completed and commented on like any other. Nothing moves when it completes:
it ends. Its permits are the task's own (Camunda's TASK resource: CREATE to create it; READ,
TASK_WORK, TASK_ASSIGN or UPDATE on it), never its definition's, since it has none
(engine/core/permits.py `facts_of`). Its changes are audited; it has no instance whose history
or live stream they could join.

The task commands of engine/commands/tasks.py and engine/commands/task_notes.py look a task up
by its instance first, and here when it has none."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.deployments import checked_tenant
from engine.core import actors, audit
from engine.core.executor import Result, Tx
from engine.core.permits import CREATE_TASK, Permit, check
from engine.db.ids import new_id
from engine.errors import BadRequest, Conflict, InvariantViolation, InvariantViolationKind
from engine.states import AuditEntity, AuditOperation, DelegationState, TaskState
from engine.store import standalone_tasks as store
from engine.store.standalone_tasks import StandaloneTaskRow

__all__ = [
    "CreateStandaloneTask",
    "StandaloneTaskRow",
    "assign",
    "check_on",
    "complete",
    "delegate",
    "locked",
    "resolve",
    "update",
]

# Camunda's task priority is an Integer.
PRIORITY_RANGE = 2**31


@dataclass(frozen=True)
class CreatedTask(Result):
    task_id: str


@dataclass(frozen=True)
class CreateStandaloneTask:
    """Camunda's POST /task/create: an open user task of no instance, with Camunda's TaskDto
    fields. A given id must be new."""

    name: ClassVar[str] = "CreateStandaloneTask"
    result_type: ClassVar[type[Result]] = CreatedTask
    permits: ClassVar[tuple[Permit, ...]] = (CREATE_TASK,)

    task_id: UUID | None = None
    task_name: str | None = None
    description: str | None = None
    assignee: str | None = None
    owner: str | None = None
    delegation_state: str | None = None
    due_at: datetime | None = None
    follow_up_at: datetime | None = None
    priority: int = 50
    parent_task_id: UUID | None = None
    tenant_id: str | None = None

    def execute(self, tx: Tx) -> CreatedTask:
        check(tx, CREATE_TASK)
        if self.delegation_state is not None and self.delegation_state not in tuple(
            DelegationState
        ):
            raise BadRequest(
                f"'delegationState' must be one of {', '.join(DelegationState)}",
                field="delegationState",
            )
        if not -PRIORITY_RANGE <= self.priority < PRIORITY_RANGE:
            raise BadRequest("'priority' must be a 32-bit integer", field="priority")
        task_id = self.task_id or new_id()
        if self.task_id is not None and store.exists(tx.conn, task_id):
            raise BadRequest(
                f"Cannot create task: 'id': a task with id {task_id} already exists", field="id"
            )
        if self.parent_task_id is not None and not store.exists(tx.conn, self.parent_task_id):
            raise BadRequest(
                f"Cannot create task: 'parentTaskId': task {self.parent_task_id} does not exist",
                field="parentTaskId",
            )
        tenant_id = checked_tenant(self.tenant_id, "tenantId")
        seen = actors.tenant_ids()
        if tenant_id is not None and seen is not None and tenant_id not in seen:
            # As Camunda: a task belongs to one of the creator's tenants.
            raise BadRequest(
                f"Cannot create task: 'tenantId': {tenant_id!r} is not one of your tenants",
                field="tenantId",
            )
        fields = {
            "name": self.task_name,
            "description": self.description,
            "assignee": self.assignee,
            "owner": self.owner,
            "delegation_state": self.delegation_state,
            "due_at": self.due_at,
            "follow_up_at": self.follow_up_at,
            "priority": self.priority,
            "parent_task_id": self.parent_task_id,
            "tenant_id": tenant_id,
        }
        store.insert(tx.conn, task_id, tx.now, fields)
        audit.record(
            tx,
            AuditOperation.CREATE,
            AuditEntity.TASK,
            entity_id=str(task_id),
            after=self.task_name,
            details={"standalone": True},
        )
        return CreatedTask(str(task_id))


def locked(tx: Tx, task_id: UUID) -> StandaloneTaskRow | None:
    """The standalone task `task_id`, locked; None when there is none (a task of an instance,
    or no task)."""
    return store.lock(tx.conn, task_id)


def check_on(tx: Tx, permit: Permit, task: StandaloneTaskRow) -> None:
    """Refuse unless the actor holds `permit` on the task itself (or as its assignee or a
    candidate, where the permit says so)."""
    check(
        tx,
        permit,
        task=task.id,
        assignee=task.assignee,
        candidate_users=task.candidate_users,
        candidate_groups=task.candidate_groups,
    )


def _open(task: StandaloneTaskRow) -> None:
    if task.state == TaskState.COMPLETED:
        raise InvariantViolation(
            InvariantViolationKind.TOKEN_FINALIZED_TWICE,
            f"user task {task.id} is already completed",
            task_id=str(task.id),
        )
    if task.state != TaskState.OPEN:
        raise Conflict(f"user task {task.id} is no longer open", task_id=str(task.id))


def complete(tx: Tx, task: StandaloneTaskRow, permit: Permit, variables: Mapping[str, Any]) -> None:
    """Complete the standalone task (its permit checked): it ends, and nothing else moves. It
    keeps no variables, so none may be given."""
    _open(task)
    check_on(tx, permit, task)
    if task.delegation_state == DelegationState.PENDING:
        raise Conflict(
            "A delegated task cannot be completed, but should be resolved instead.",
            task_id=str(task.id),
            delegation_state=task.delegation_state,
        )
    if variables:
        raise BadRequest(
            "a standalone task belongs to no process instance and keeps no variables",
            field="variables",
        )
    store.complete(tx.conn, task.id, tx.now)
    audit.record(tx, AuditOperation.COMPLETE, AuditEntity.TASK, entity_id=str(task.id))


def assign(
    tx: Tx,
    task: StandaloneTaskRow,
    permit: Permit,
    user_id: str | None,
    force: bool,
) -> None:
    """Claim (`user_id`, only when nobody holds it unless `force`), unclaim (None) or assign
    the standalone task, as AssignUserTask does a task of an instance."""
    _open(task)
    check_on(tx, permit, task)
    if not force and user_id is not None and task.assignee not in (None, user_id):
        raise Conflict(
            f"user task {task.id} is already claimed by '{task.assignee}'",
            task_id=str(task.id),
            assignee=task.assignee,
        )
    store.set_assignee(tx.conn, task.id, user_id)
    operation = AuditOperation.ASSIGN if force and user_id else AuditOperation.CLAIM
    audit.record(
        tx,
        operation,
        AuditEntity.TASK,
        entity_id=str(task.id),
        property="assignee",
        before=task.assignee,
        after=user_id,
    )


def _changed(tx: Tx, task: StandaloneTaskRow, values: Mapping[str, Any]) -> None:
    store.set_details(tx.conn, task.id, dict(values))


def delegate(tx: Tx, task: StandaloneTaskRow, permit: Permit, user_id: str | None) -> None:
    """Camunda's delegateTask of a standalone task: its owner (its assignee, unless it has one)
    keeps it while `user_id` works on it; PENDING until resolved."""
    _open(task)
    check_on(tx, permit, task)
    owner = task.owner if task.owner is not None else task.assignee
    values = {"assignee": user_id, "owner": owner, "delegation_state": DelegationState.PENDING}
    _changed(tx, task, values)
    audit.record(
        tx,
        AuditOperation.DELEGATE,
        AuditEntity.TASK,
        entity_id=str(task.id),
        property="assignee",
        before=task.assignee,
        after=user_id,
        details={"owner": owner, "delegationState": DelegationState.PENDING.value},
    )


def resolve(tx: Tx, task: StandaloneTaskRow, permit: Permit, variables: Mapping[str, Any]) -> None:
    """Camunda's resolveTask of a standalone task: back to its owner, RESOLVED. It keeps no
    variables, so none may be given."""
    _open(task)
    check_on(tx, permit, task)
    if variables:
        raise BadRequest(
            "a standalone task belongs to no process instance and keeps no variables",
            field="variables",
        )
    values = {"assignee": task.owner, "delegation_state": DelegationState.RESOLVED}
    _changed(tx, task, values)
    audit.record(
        tx,
        AuditOperation.RESOLVE_TASK,
        AuditEntity.TASK,
        entity_id=str(task.id),
        property="assignee",
        before=task.assignee,
        after=task.owner,
    )


def update(
    tx: Tx,
    task: StandaloneTaskRow,
    permit: Permit,
    values: Mapping[str, Any],
    shown: Mapping[str, str],
) -> None:
    """Camunda's saveTask of a standalone task: its details become `values` (names of
    store.DETAILS); one audit entry per property that changed, named as `shown` names it."""
    _open(task)
    check_on(tx, permit, task)
    changed = {name: value for name, value in values.items() if getattr(task, name) != value}
    _changed(tx, task, changed)
    for name, value in changed.items():
        before = getattr(task, name)
        audit.record(
            tx,
            AuditOperation.UPDATE,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property=shown[name],
            before=_json(before),
            after=_json(value),
        )


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    return value
