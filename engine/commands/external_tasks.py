"""The external-task protocol: workers fetch and lock work, then report back.

Every report checks, over one committed state of the instance, that the reporting worker holds
the task (the reports a worker makes run optimistically, see engine/core/executor.py):
a report from another worker is an ExternalTaskLeaseConflict; a report about a task that was
completed or retired changes nothing and says so. A failure report without retries opens an
incident and leaves the worker its lock: until the lock expires it may still report (complete the
task, report a BPMN error or a failure with retries: the incident resolves in the same
transaction) or extend the lock, as in Camunda 7; after that it is a lease conflict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import (
    advance,
    check_retries,
    persist,
    persist_audited,
    require_running,
)
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.permits import ENGINE_WORK, RETRY_JOB, UPDATE_INSTANCE, Permit, check
from engine.core.runtime import ExternalTaskRow, InstanceRun, Token
from engine.errors import BadRequest, Conflict, InvariantViolation, InvariantViolationKind, NotFound
from engine.states import AuditEntity, AuditOperation, TaskState, TokenState, WorkLogState
from engine.store import external_tasks as store
from engine.store import runs


@dataclass(frozen=True)
class TopicRequest:
    topic: str
    lock_duration_ms: int
    variables: tuple[str, ...] | None = None
    # Only tasks of these tenants (None: of any), or with `without_tenant` only those of none.
    tenant_ids: tuple[str, ...] | None = None
    without_tenant: bool = False
    # Only tasks of instances of these definitions (by id or by key; None: of any), of this
    # business key, whose instance variables equal these (name, JSON value) pairs.
    definition_ids: tuple[str, ...] | None = None
    definition_keys: tuple[str, ...] | None = None
    business_key: str | None = None
    process_variables: tuple[tuple[str, Any], ...] | None = None


@dataclass(frozen=True)
class FetchResult(Result):
    # One dict per locked task: ids, topic, worker, lock expiry, retries, error, priority and
    # the requested variables as {name: {"type": ..., "value": ...}}.
    tasks: list[dict[str, Any]] = field(default_factory=list)


class NothingLocked(Exception):
    """A fetch with `roll_back_if_empty` locked nothing: its transaction rolled back."""

    command_outcome = "empty"


@dataclass(frozen=True)
class FetchAndLock:
    """Lock up to `max_tasks` available tasks of the topics for the worker (one statement).

    With `roll_back_if_empty`, a fetch that locks nothing raises `NothingLocked` instead of
    returning no tasks, so that its transaction rolls back: an idempotency key is then spent only
    on a fetch that locked tasks, and a retried request gets exactly those tasks back."""

    name: ClassVar[str] = "FetchAndLock"
    # Which tasks a worker may lock is a read's narrowing, not a refusal.
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = FetchResult
    one_statement: ClassVar[bool] = True

    worker_id: str
    max_tasks: int
    topics: tuple[TopicRequest, ...]
    use_priority: bool = True
    roll_back_if_empty: bool = False

    def execute(self, tx: Tx) -> FetchResult:
        if not self.worker_id:
            raise BadRequest("a worker id is required")
        if self.max_tasks < 1 or not self.topics:
            return self._found([])
        for topic in self.topics:
            if topic.lock_duration_ms <= 0:
                raise BadRequest(f"lock duration of topic '{topic.topic}' must be positive")
        wanted = {t.topic: t.variables for t in self.topics}
        locked = store.fetch_and_lock(
            tx.conn,
            worker_id=self.worker_id,
            lock_ms_by_topic={t.topic: t.lock_duration_ms for t in self.topics},
            max_tasks=self.max_tasks,
            use_priority=self.use_priority,
            now=tx.now,
            narrowing={
                t.topic: store.Narrowing(
                    t.tenant_ids,
                    t.without_tenant,
                    t.definition_ids,
                    t.definition_keys,
                    t.business_key,
                    dict(t.process_variables) if t.process_variables is not None else None,
                )
                for t in self.topics
            },
        )
        tasks = []
        for task, run in locked:
            tx.snapshots.put(task.id, run)
            names = wanted.get(task.topic)
            tasks.append(
                {
                    "id": str(task.id),
                    "topic": task.topic,
                    "worker_id": task.worker_id,
                    "lock_expires_at": task.lock_expires_at.isoformat()
                    if task.lock_expires_at
                    else None,
                    "instance_id": str(task.instance_id),
                    "definition_id": task.definition_id,
                    "definition_key": task.definition_key,
                    "business_key": task.business_key,
                    "tenant_id": task.tenant_id,
                    "node_id": task.node_id,
                    "retries": task.retries,
                    "error_message": task.error_message,
                    "error_details": task.error_details,
                    "priority": task.priority,
                    "created_at": task.created_at.isoformat(),
                    "variables": {
                        name: {"type": value.type, "value": value.to_json()}
                        for name, value in run.typed_for(run.tokens.get(task.token_id)).items()
                        if names is None or name in names
                    },
                }
            )
        return self._found(tasks)

    def _found(self, tasks: list[dict[str, Any]]) -> FetchResult:
        if not tasks and self.roll_back_if_empty:
            raise NothingLocked
        return FetchResult(tasks)


@dataclass(frozen=True)
class ExternalTaskResult(Result):
    task_id: str
    instance_id: str
    instance_state: str


def _locked_by(
    tx: Tx, task_id: UUID, worker_id: str | None, permits: tuple[Permit, ...]
) -> tuple[InstanceRun, ExternalTaskRow]:
    """Load the task's instance (under its lock, unless the attempt is optimistic), check the
    actor holds the command's permit on it, and that the reporter holds the task."""
    try:
        run = load(tx, task_id, locate=runs.BY_EXTERNAL_TASK)
    except NotFound:
        raise NotFound(f"external task {task_id} does not exist", task_id=str(task_id)) from None
    (needed,) = permits
    check(tx, needed, instance=run.instance.id, definition=run.instance.definition_key)
    task = run.external_tasks.get(task_id)
    if task is None:
        state = store.state_of(tx.conn, task_id)
        if state == TaskState.COMPLETED:
            raise Conflict(f"external task {task_id} is already completed", task_id=str(task_id))
        raise Conflict(
            f"external task {task_id} was retired: its token left the task (a boundary event "
            "fired or the instance was cancelled); the report changes nothing",
            task_id=str(task_id),
        )
    if worker_id is not None and task.worker_id != worker_id:
        holder = f"worker '{task.worker_id}'" if task.worker_id else "no worker"
        raise InvariantViolation(
            InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT,
            f"external task {task_id} is locked by {holder}, not by '{worker_id}'",
            task_id=str(task_id),
            worker_id=worker_id,
        )
    return run, task


def _held(tx: Tx, run: InstanceRun, task: ExternalTaskRow) -> Token:
    """The task's token. A worker whose failure report opened an incident keeps its lock: until
    the lock expires it may still report or extend the lock, as in Camunda 7; after that it is a
    lease conflict, as for any worker without the lock. An expired lock is not revived."""
    token = run.tokens[task.token_id]
    if token.state is TokenState.FAILED and (
        task.lock_expires_at is None or task.lock_expires_at <= tx.now
    ):
        raise InvariantViolation(
            InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT,
            f"external task {task.id} has an open incident and the lock of worker "
            f"'{task.worker_id}' on it has expired",
            task_id=str(task.id),
            worker_id=task.worker_id,
        )
    return token


def _result(run: InstanceRun, task: ExternalTaskRow) -> ExternalTaskResult:
    return ExternalTaskResult(str(task.id), str(run.instance.id), run.instance.state.value)


@dataclass(frozen=True)
class _OnTask:
    """A command on one external task; its result names the task and its instance."""

    result_type: ClassVar[type[Result]] = ExternalTaskResult
    # Camunda's: UPDATE on the instance or UPDATE_INSTANCE on its definition.
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    task_id: UUID


@dataclass(frozen=True)
class _Report(_OnTask):
    """A report of the worker `worker_id`, which must hold the task (see `_locked_by`)."""

    optimistic: ClassVar[bool] = True

    worker_id: str

    def _completing(self, tx: Tx) -> tuple[InstanceRun, ExternalTaskRow, Token]:
        """The running instance, the task marked completed, and its token back to Waiting if a
        failure had stopped it (its incident resolves)."""
        run, task = _locked_by(tx, self.task_id, self.worker_id, self.permits)
        require_running(run)
        token = _held(tx, run, task)
        if token.state is TokenState.FAILED:
            run.restore_failed(token.id, external_task_id=task.id, state=TokenState.WAITING)
        task.state, task.ended_at, task.dirty = TaskState.COMPLETED, tx.now, True
        return run, task, token


@dataclass(frozen=True)
class CompleteExternalTask(_Report):
    name: ClassVar[str] = "CompleteExternalTask"

    variables: Mapping[str, Any] = field(default_factory=dict)
    # Locals of the task's activity instance (Camunda's `localVariables`).
    local_variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> ExternalTaskResult:
        run, task, token = self._completing(tx)
        run.emit("external_task.completed", token)
        advance(tx, run).resume(token, self.variables, self.local_variables)
        persist(tx, run)
        return _result(run, task)


@dataclass(frozen=True)
class FailExternalTask(_Report):
    """A worker's failure report: `retries` left (0 opens an incident) and how long to wait."""

    name: ClassVar[str] = "FailExternalTask"

    message: str
    details: str | None = None
    retries: int = 0
    retry_timeout_ms: int = 0

    def execute(self, tx: Tx) -> ExternalTaskResult:
        if self.retries < 0 or self.retry_timeout_ms < 0:
            raise BadRequest("retries and retry timeout cannot be negative")
        check_retries(self.retries)
        run, task = _locked_by(tx, self.task_id, self.worker_id, self.permits)
        token = _held(tx, run, task)
        task.retries = self.retries
        task.error_message, task.error_details = self.message, self.details
        task.dirty = True
        run.log_attempt(WorkLogState.FAILED, task)
        if self.retries > 0:
            # Fetchable again once the retry timeout has passed (an open incident resolves).
            run.restore_failed(token.id, external_task_id=task.id, state=TokenState.WAITING)
            task.worker_id = None
            task.lock_expires_at = tx.now + timedelta(milliseconds=self.retry_timeout_ms)
            run.emit("external_task.failed", token)
        else:
            # The worker keeps its lock until it expires (see `_held`); with no retries left
            # nobody can fetch the task.
            if token.state is not TokenState.FAILED:
                advance(tx, run).fail(
                    token, "failedExternalTask", self.message, external_task_id=task.id
                ).details = self.details
        persist(tx, run)
        return _result(run, task)


@dataclass(frozen=True)
class ExternalTaskBpmnError(_Report):
    """The worker reports a business error: it is thrown at the task like an error event."""

    name: ClassVar[str] = "ExternalTaskBpmnError"

    error_code: str
    error_message: str = ""
    variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> ExternalTaskResult:
        if not self.error_code:
            raise BadRequest("a BPMN error needs an error code")
        run, task, token = self._completing(tx)
        flow = advance(tx, run)
        flow.set_variables(self.variables, token)
        flow.throw_error(token, self.error_code, self.error_message)
        if token.state is TokenState.FAILED:
            # Uncaught, with incidents configured: the task waits (without retries) for a retry.
            task.state, task.ended_at, task.retries, task.worker_id = TaskState.OPEN, None, 0, None
            task.error_message = f"BPMN error '{self.error_code}': {self.error_message}"
            for incident in run.incidents.values():
                if incident.token_id == token.id and incident.is_new:
                    incident.external_task_id = task.id
        persist(tx, run)
        return _result(run, task)


@dataclass(frozen=True)
class ExtendLock(_Report):
    name: ClassVar[str] = "ExtendLock"

    new_duration_ms: int

    def execute(self, tx: Tx) -> ExternalTaskResult:
        if self.new_duration_ms <= 0:
            raise BadRequest("the new lock duration must be positive")
        run, task = _locked_by(tx, self.task_id, self.worker_id, self.permits)
        _held(tx, run, task)
        task.lock_expires_at = tx.now + timedelta(milliseconds=self.new_duration_ms)
        task.dirty = True
        persist(tx, run)
        return _result(run, task)


@dataclass(frozen=True)
class UnlockExternalTask(_OnTask):
    name: ClassVar[str] = "UnlockExternalTask"

    def execute(self, tx: Tx) -> ExternalTaskResult:
        run, task = _locked_by(tx, self.task_id, None, self.permits)
        before = task.worker_id
        task.worker_id, task.lock_expires_at, task.dirty = None, None, True
        persist_audited(
            tx,
            run,
            AuditOperation.UNLOCK,
            AuditEntity.EXTERNAL_TASK,
            entity_id=str(task.id),
            property="workerId",
            before=before,
        )
        return _result(run, task)


@dataclass(frozen=True)
class SetExternalTaskRetries(_OnTask):
    name: ClassVar[str] = "SetExternalTaskRetries"
    permits: ClassVar[tuple[Permit, ...]] = (RETRY_JOB,)

    retries: int

    def execute(self, tx: Tx) -> ExternalTaskResult:
        check_retries(self.retries)
        run, task = _locked_by(tx, self.task_id, None, self.permits)
        before = task.retries
        task.retries, task.dirty = self.retries, True
        if self.retries > 0:
            restore_external_task(run, task)
        persist_audited(
            tx,
            run,
            AuditOperation.SET_EXTERNAL_TASK_RETRIES,
            AuditEntity.EXTERNAL_TASK,
            entity_id=str(task.id),
            property="retries",
            before=before,
            after=self.retries,
        )
        return _result(run, task)


def restore_external_task(run: InstanceRun, task: ExternalTaskRow) -> None:
    """A failed external task may be fetched again: incidents resolve, the token waits again."""
    task.worker_id, task.lock_expires_at, task.dirty = None, None, True
    run.restore_failed(task.token_id, external_task_id=task.id, state=TokenState.WAITING)
