"""User tasks: complete one (its token leaves the task and runs on), claim or assign it, change
its variables, and change its identity links (candidates, assignee). A standalone task (of no
instance) is completed, claimed and assigned by engine/commands/standalone_tasks.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar
from uuid import UUID

from engine.commands import standalone_tasks
from engine.commands.common import advance, persist, persist_audited, require_running
from engine.commands.loading import load, model_of
from engine.commands.standalone_tasks import StandaloneTaskRow
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import (
    ASSIGN_TASK,
    CLAIM_TASK,
    UPDATE_TASK_VARIABLES,
    WORK_ON_TASK,
    Permit,
    check,
)
from engine.core.runtime import InstanceRun, Token, UserTaskRow
from engine.errors import (
    BadRequest,
    Conflict,
    InvariantViolation,
    InvariantViolationKind,
    NeedsTransaction,
    NotFound,
    Suspended,
)
from engine.language.forms import submit
from engine.language.variables import TypedValue
from engine.model import UserTask
from engine.semantics import conditions
from engine.states import AuditEntity, AuditOperation, DelegationState, InstanceState, TaskState
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


def standalone(tx: Tx, task_id: UUID) -> StandaloneTaskRow | None:
    """The standalone task `task_id` (of no instance), locked, when no instance's task has the
    id: asked after the instance's load found none. Its writes need a transaction of their own,
    so an optimistic attempt runs again under one."""
    if tx.optimistic:
        raise NeedsTransaction(f"standalone task {task_id} is written in a transaction")
    return standalone_tasks.locked(tx, task_id)


def load_open(tx: Tx, task_id: UUID) -> tuple[InstanceRun, UserTaskRow]:
    """The instance of the user task, and the task, which must be open."""
    run = _load(tx, task_id)
    task = run.tasks.get(task_id)
    if task is None:
        raise NotFound(f"user task {task_id} is not open", task_id=str(task_id))
    return run, task


def task_check(tx: Tx, permit: Permit, run: InstanceRun, task: UserTaskRow) -> None:
    """Refuse unless the actor holds `permit` on the task: as its assignee or a candidate where
    the permit says so, or by grants on the task or its process definition."""
    check(
        tx,
        permit,
        task=task.id,
        definition=run.instance.definition_key,
        assignee=task.assignee,
        candidate_users=task.candidate_users,
        candidate_groups=task.candidate_groups,
    )


def reassign(
    tx: Tx,
    run: InstanceRun,
    task: UserTaskRow,
    assignee: str | None,
    operation: AuditOperation,
    details: dict[str, Any] | None = None,
) -> None:
    """The task's assignee becomes `assignee` (its assignment listeners run when somebody new
    holds it); the change is persisted with the operator's audit entry of `operation`."""
    before = task.assignee
    task.assignee, task.dirty = assignee, True
    if assignee is not None and assignee != before:
        advance(tx, run).assigned(task)
    run.emit("task.assigned", run.tokens.get(task.token_id))
    persist_audited(
        tx,
        run,
        operation,
        AuditEntity.TASK,
        entity_id=str(task.id),
        property="assignee",
        before=before,
        after=assignee,
        details=details,
    )


@dataclass(frozen=True)
class CompleteUserTask:
    name: ClassVar[str] = "CompleteUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    optimistic: ClassVar[bool] = True
    permits: ClassVar[tuple[Permit, ...]] = (WORK_ON_TASK,)

    task_id: UUID
    variables: Mapping[str, Any] = field(default_factory=dict)
    # Submitted values of the task's generated form (camunda:formData), checked and typed by
    # engine/language/forms.py against the variables as they are in this transaction; a form that
    # does not pass raises FormInvalid and nothing is written.
    form: Mapping[str, Any] | None = None

    def execute(self, tx: Tx) -> TaskResult:
        audit.require_transaction(tx)
        try:
            run = _load(tx, self.task_id)
        except NotFound:
            alone = standalone(tx, self.task_id)
            if alone is None:
                raise
            values = {**self.variables, **(self.form or {})}
            standalone_tasks.complete(tx, alone, WORK_ON_TASK, values)
            return TaskResult(str(self.task_id), "", "")
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
        task_check(tx, WORK_ON_TASK, run, task)
        require_running(run)
        if task.delegation_state == DelegationState.PENDING:
            # As Camunda: the delegate resolves it; its owner completes it.
            raise Conflict(
                "A delegated task cannot be completed, but should be resolved instead.",
                task_id=str(self.task_id),
                delegation_state=task.delegation_state,
            )
        variables = dict(self.variables)
        token = run.tokens[task.token_id]
        if self.form is not None:
            node = model_of(tx, run).node(task.node_id)
            fields = node.form_fields if isinstance(node, UserTask) else ()
            variables.update(submit(fields, self.form, run.typed_for(token)))
        task.state, task.ended_at, task.dirty = TaskState.COMPLETED, tx.now, True
        run.emit("task.completed", token)
        advance(tx, run).complete_task(task, token, variables)
        persist_audited(
            tx,
            run,
            AuditOperation.COMPLETE,
            AuditEntity.TASK,
            entity_id=str(task.id),
            details={"node": task.node_id, "variables": sorted(variables)} if variables else None,
        )
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)


@dataclass(frozen=True)
class AssignUserTask:
    """Claim (`user_id`, only when nobody holds it unless `force`), unclaim (None), or set the
    assignee outright (`force`)."""

    name: ClassVar[str] = "AssignUserTask"
    result_type: ClassVar[type[Result]] = TaskResult
    # Claiming or giving it back: a candidate's work; setting somebody as the assignee: an
    # assignment's.
    permits: ClassVar[tuple[Permit, ...]] = (CLAIM_TASK, ASSIGN_TASK)

    task_id: UUID
    user_id: str | None
    force: bool = False

    def execute(self, tx: Tx) -> TaskResult:
        # Setting somebody as the assignee is an assignment; taking it or giving it back, a claim.
        assigning = self.force and self.user_id is not None
        try:
            run = _load(tx, self.task_id)
        except NotFound:
            alone = standalone(tx, self.task_id)
            if alone is None:
                raise
            permit = ASSIGN_TASK if assigning else CLAIM_TASK
            standalone_tasks.assign(tx, alone, permit, self.user_id, self.force)
            return TaskResult(str(self.task_id), "", "")
        task = run.tasks.get(self.task_id)
        if task is None:
            raise Conflict(f"user task {self.task_id} is no longer open", task_id=str(self.task_id))
        task_check(tx, ASSIGN_TASK if assigning else CLAIM_TASK, run, task)
        if not self.force and run.instance.state is InstanceState.SUSPENDED:
            # Camunda refuses a claim (not an assignment) of a suspended instance's task.
            raise Suspended(f"user task {self.task_id} is suspended", task_id=str(self.task_id))
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
        # Taking or releasing it is a claim; setting somebody as the assignee, an assignment.
        operation = AuditOperation.ASSIGN if self.force and self.user_id else AuditOperation.CLAIM
        reassign(tx, run, task, self.user_id, operation)
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)


@dataclass(frozen=True)
class ModifyTaskVariables:
    """Set (`modifications`) and delete (`deletions`) variables of an open user task, in one
    transaction. `local`: the task's own activity instance's (they vanish with it unless an
    output copies them); otherwise as Camunda's setVariable and removeVariable do from the task:
    the nearest scope outwards that has the name, else the instance's root scope."""

    name: ClassVar[str] = "ModifyTaskVariables"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_TASK_VARIABLES,)

    task_id: UUID
    modifications: Mapping[str, TypedValue] = field(default_factory=dict)
    deletions: tuple[str, ...] = ()
    local: bool = True

    def execute(self, tx: Tx) -> TaskResult:
        run, task = load_open(tx, self.task_id)
        task_check(tx, UPDATE_TASK_VARIABLES, run, task)
        if run.instance.state.is_final:
            raise Conflict(
                f"process instance {run.instance.id} is already {run.instance.state.value}",
                instance_id=str(run.instance.id),
            )
        token = run.tokens[task.token_id]
        names = [*self.modifications, *self.deletions]
        # The values before and after, read only when someone acts (an entry is written).
        audited = tx.actor is not None
        before = audit.variable_values(self._visible(run, token), names) if audited else {}
        owners = [task.token_id] if self.local else run.scope_chain(token)
        for name in self.deletions:
            holder = next((o for o in owners if name in run.locals.get(o, {})), None)
            if holder is not None:
                run.remove_variable(holder, name)
            elif not self.local and name in run.variables:
                run.remove_variable(None, name)
        for name, value in self.modifications.items():
            if self.local:
                run.set_local(task.token_id, name, value)
            else:
                run.set_visible(token, name, value)
        if audited:
            audit.record_variables(
                tx,
                run,
                before,
                audit.variable_values(self._visible(run, token), names),
                entity_id=str(task.id),
                details={"local": self.local},
            )
        conditions.variables_changed(advance(tx, run))
        persist(tx, run)
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)

    def _visible(self, run: InstanceRun, token: Token) -> dict[str, TypedValue]:
        """The variables the change reads and writes: the task's locals, or all it sees."""
        return dict(run.locals.get(token.id, {})) if self.local else run.typed_for(token)


class LinkType(StrEnum):
    """Camunda's identity-link types of a task this engine models as links (the owner is set by
    delegation or by a change of the task's details, not as a link)."""

    CANDIDATE = "candidate"
    ASSIGNEE = "assignee"


@dataclass(frozen=True)
class ChangeTaskIdentityLink:
    """Add (`remove` False) or remove an identity link of an open task, as Camunda's
    /task/{id}/identity-links does: a candidate user (`user_id`) or group (`group_id`), exactly
    one of them, or the assignee (a user). Adding a link the task has, or removing one it has
    not, changes nothing but is still audited as asked."""

    name: ClassVar[str] = "ChangeTaskIdentityLink"
    result_type: ClassVar[type[Result]] = TaskResult
    permits: ClassVar[tuple[Permit, ...]] = (ASSIGN_TASK,)

    task_id: UUID
    type: LinkType
    user_id: str | None = None
    group_id: str | None = None
    remove: bool = False

    def execute(self, tx: Tx) -> TaskResult:
        if (self.user_id is None) == (self.group_id is None):
            raise BadRequest("give exactly one of userId and groupId", field="userId")
        if self.type is LinkType.ASSIGNEE and self.user_id is None:
            raise BadRequest("an assignee link names a user in userId", field="userId")
        run, task = load_open(tx, self.task_id)
        task_check(tx, ASSIGN_TASK, run, task)
        if self.type is LinkType.ASSIGNEE:
            self._assignee(tx, run, task)
        else:
            self._candidate(tx, run, task)
        return TaskResult(str(self.task_id), str(run.instance.id), run.instance.state.value)

    def _assignee(self, tx: Tx, run: InstanceRun, task: UserTaskRow) -> None:
        # Removing the assignee link of somebody else leaves the assignee as it is.
        kept = None if task.assignee == self.user_id else task.assignee
        reassign(tx, run, task, kept if self.remove else self.user_id, AuditOperation.ASSIGN)

    def _candidate(self, tx: Tx, run: InstanceRun, task: UserTaskRow) -> None:
        user = self.user_id is not None
        names = task.candidate_users if user else task.candidate_groups
        name = self.user_id if user else self.group_id
        assert name is not None
        before = list(names)
        after = [n for n in before if n != name] if self.remove else _with(before, name)
        if user:
            task.candidate_users = after
        else:
            task.candidate_groups = after
        task.dirty = True
        persist_audited(
            tx,
            run,
            AuditOperation.UPDATE,
            AuditEntity.TASK,
            entity_id=str(task.id),
            property="candidateUsers" if user else "candidateGroups",
            before=",".join(before),
            after=",".join(after),
        )


def _with(names: list[str], name: str) -> list[str]:
    return names if name in names else [*names, name]
