"""Complete a user task: its token leaves the task and runs on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import advance, load, persist, require_running
from engine.errors import Conflict, InvariantViolation, InvariantViolationKind, NotFound
from engine.executor import Result, Tx
from engine.runtime import InstanceRun
from engine.states import TaskState
from engine.store import runs, tasks


@dataclass(frozen=True)
class TaskResult(Result):
    task_id: str
    instance_id: str
    instance_state: str


def _load(tx: Tx, task_id: UUID) -> InstanceRun:
    """The instance of the user task, found by the task's id in the load itself."""
    try:
        return load(tx, task_id, locate=runs.BY_USER_TASK)
    except NotFound:
        raise NotFound(f"user task {task_id} does not exist", task_id=str(task_id)) from None


@dataclass(frozen=True)
class CompleteUserTask:
    name: ClassVar[str] = "CompleteUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    optimistic: ClassVar[bool] = True

    task_id: UUID
    variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> TaskResult:
        run = _load(tx, self.task_id)
        task = run.tasks.get(self.task_id)
        if task is None:  # not open: say precisely why
            found = tasks.get(tx.conn, self.task_id)
            state = found.state if found else "missing"
            if state == TaskState.COMPLETED:
                raise InvariantViolation(
                    InvariantViolationKind.TOKEN_FINALIZED_TWICE,
                    f"user task {self.task_id} is already completed",
                    task_id=str(self.task_id),
                )
            raise Conflict(
                f"user task {self.task_id} was retired: its token left the task without it",
                task_id=str(self.task_id),
            )
        require_running(run)
        token = run.tokens[task.token_id]
        task.state, task.ended_at, task.dirty = TaskState.COMPLETED, tx.now, True
        run.emit("task.completed", token)
        advance(tx, run).complete_task(task, token, self.variables)
        persist(tx, run)
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)


@dataclass(frozen=True)
class AssignUserTask:
    """Claim (`user_id`, only when nobody holds it unless `force`), unclaim (None), or set the
    assignee outright (`force`)."""

    name: ClassVar[str] = "AssignUserTask"
    result_type: ClassVar[type[Result]] = TaskResult

    task_id: UUID
    user_id: str | None
    force: bool = False

    def execute(self, tx: Tx) -> TaskResult:
        run = _load(tx, self.task_id)
        task = run.tasks.get(self.task_id)
        if task is None:
            raise Conflict(f"user task {self.task_id} is no longer open", task_id=str(self.task_id))
        if (
            not self.force
            and self.user_id is not None
            and task.assignee not in (None, self.user_id)
        ):
            raise Conflict(
                f"user task {self.task_id} is already claimed by '{task.assignee}'",
                task_id=str(self.task_id),
                assignee=task.assignee,
            )
        changed = task.assignee != self.user_id
        task.assignee, task.dirty = self.user_id, True
        if changed and self.user_id is not None:
            advance(tx, run).assigned(task)
        run.emit("task.assigned", run.tokens.get(task.token_id))
        persist(tx, run)
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)
