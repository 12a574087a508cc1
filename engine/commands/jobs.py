"""Run a due job (a timer, an asynchronous continuation, a retry), or record that it failed."""

from __future__ import annotations

import dataclasses
import logging
import traceback
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Protocol, TypeVar
from uuid import UUID

import psycopg

from engine.commands.batches import run_batch_job
from engine.commands.cleanup import run_cleanup_job
from engine.commands.common import advance, persist
from engine.commands.instances import start_instance
from engine.commands.job_retries import JobResult
from engine.commands.loading import load, model_of
from engine.commands.scheduled_suspension import run_suspension_job
from engine.core import audit
from engine.core.executor import Command, Idempotency, Result, Tx
from engine.core.permits import (
    ADMINISTER,
    ENGINE_WORK,
    UPDATE_DEFINITION,
    UPDATE_INSTANCE,
    Permit,
    check,
)
from engine.core.runtime import IncidentRow, InstanceRun, JobRow
from engine.db.ids import new_id
from engine.db.outage import is_database_outage
from engine.errors import BadRequest, DatabaseUnavailable, Forbidden, InterlockError
from engine.language import timers
from engine.model import StartEvent
from engine.observe.metrics import JOB_LAG_SECONDS
from engine.schema import JOB_CHANNEL
from engine.semantics import waits
from engine.states import (
    AuditEntity,
    AuditOperation,
    IncidentState,
    InstanceState,
    JobKind,
    JobOutcome,
    TokenState,
    WorkLogState,
)
from engine.store import definitions, runs, work_log
from engine.store import jobs as job_store

log = logging.getLogger("engine.jobs")
T = TypeVar("T", bound=Result)

# Failures of the database itself, not of the job: the executor already retried serialization
# failures and deadlocks (both OperationalErrors) and reports an outage as DatabaseUnavailable.
# Counting them against the job's retries would turn an outage into incidents; the job's lock
# expires instead and it runs again later. `is_database_outage` (engine/db/outage.py) tells them
# apart: a statement or lock timeout is the job's own failure, counted down like any other (the
# same job would time out again and again).
DATABASE_ERRORS: tuple[type[Exception], ...] = (
    psycopg.OperationalError,
    psycopg.InterfaceError,
    DatabaseUnavailable,
)


class Runner(Protocol):
    """What runs a command: `Engine.run`, `Executor.run`."""

    def __call__(
        self, command: Command[T], idempotency_key: str | Idempotency | None = None
    ) -> T: ...


def run_job(
    run: Runner,
    job_id: UUID,
    owner: str | None,
    idempotency_key: str | Idempotency | None = None,
) -> JobResult:
    """The one way a job runs, for the job executor and for a request to execute it now: run it
    as `owner` (None: whoever holds it). When its command raises (a handler failed, a statement
    timed out), its transaction has rolled back and the failure is counted down in a new one,
    recorded under the same idempotency key as the outcome of executing the job. A failure of the
    database itself, and a refusal of the caller, propagate and count nothing."""
    command = ExecuteJob(job_id, owner)
    key = Idempotency.of(idempotency_key, command)
    try:
        return run(command, key)
    except Exception as exc:
        if is_database_outage(exc) or isinstance(exc, Forbidden):
            raise
        message = f"{type(exc).__name__}: {exc.message if isinstance(exc, InterlockError) else exc}"
        log.info("job %s failed: %s", job_id, message)
        failure = JobFailure(message, traceback.format_exc())
        return run(ExecuteJob(job_id, owner, failure), key)


def _owned(job: JobRow | job_store.JobInfo | None, owner: str | None) -> JobOutcome | None:
    if job is None:
        return JobOutcome.GONE
    if owner is not None and job.lock_owner != owner:
        return JobOutcome.NOT_OWNER
    return None


@dataclass(frozen=True)
class JobFailure:
    """How an attempt to run a job failed: its message and details (a traceback)."""

    message: str
    details: str | None = None


@dataclass(frozen=True)
class ExecuteJob:
    """Exactly once: the job's work and the job row's removal commit together, and only the
    executor that holds the job's lock may run it.

    With `failure`, the job does not run: an attempt of this same command failed (its
    transaction rolled back), and this one counts that failure down as `FailJob` does. Its
    outcome is recorded as the execution's, so that the idempotency key of a request to execute
    the job replays the failure instead of running the job a second time."""

    name: ClassVar[str] = "ExecuteJob"
    result_type: ClassVar[type[Result]] = JobResult
    # Camunda's for executing a job now: UPDATE on its instance (UPDATE_INSTANCE on the
    # definition), UPDATE on the definition of a timer start job; the engine's own jobs (batch,
    # history cleanup): an administrator's. The job executor acts for nobody: nothing is checked.
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE, UPDATE_DEFINITION, ADMINISTER)

    job_id: UUID
    owner: str | None = None
    failure: JobFailure | None = None

    def execute(self, tx: Tx) -> JobResult:
        if self.failure is not None:
            failed = FailJob(self.job_id, self.owner, self.failure.message, self.failure.details)
            return self._audited(tx, failed.execute(tx))
        exists, instance_id = job_store.instance_of(tx.conn, self.job_id)
        if not exists:
            return JobResult(str(self.job_id), JobOutcome.GONE)
        if instance_id is None:
            return self._audited(tx, self._start_timer(tx))
        run = load(tx, instance_id)
        check(tx, UPDATE_INSTANCE, instance=instance_id, definition=run.instance.definition_key)
        outcome = _execute_in(tx, run, self.job_id, self.owner)
        if outcome not in UNTOUCHED:
            persist(tx, run)
        return self._audited(tx, JobResult(str(self.job_id), outcome, str(instance_id)), run)

    def _audited(self, tx: Tx, result: JobResult, run: InstanceRun | None = None) -> JobResult:
        """An operator's request to run the job now is audited with its outcome (the job
        executors act for nobody: their runs write no entry)."""
        if result.outcome in UNTOUCHED:
            return result
        fields: dict[str, Any] = {
            "entity_id": str(self.job_id),
            "details": {"outcome": result.outcome}
            | ({"error": self.failure.message} if self.failure else {}),
        }
        if run is not None:
            audit.record_on(tx, run, AuditOperation.EXECUTE_JOB, AuditEntity.JOB, **fields)
        else:
            instance_id = UUID(result.instance_id) if result.instance_id else None
            audit.record(
                tx, AuditOperation.EXECUTE_JOB, AuditEntity.JOB, instance_id=instance_id, **fields
            )
        return result

    def _start_timer(self, tx: Tx) -> JobResult:
        job = job_store.get(tx.conn, self.job_id, lock=True)
        skipped = _owned(job, self.owner)
        if skipped or job is None:
            return JobResult(str(self.job_id), skipped or JobOutcome.GONE)
        if job.kind in (JobKind.HISTORY_CLEANUP, JobKind.BATCH):
            check(tx, ADMINISTER)
        if job.kind == JobKind.HISTORY_CLEANUP:
            _log_unowned(tx, job, WorkLogState.SUCCESSFUL)
            run_cleanup_job(tx)
            return JobResult(str(self.job_id), JobOutcome.EXECUTED)
        if job.kind == JobKind.BATCH:
            _log_unowned(tx, job, WorkLogState.SUCCESSFUL)
            run_batch_job(tx, job.id)
            return JobResult(str(self.job_id), JobOutcome.EXECUTED)
        if job.kind == JobKind.SUSPENSION:
            # The change checks its own permits for whoever runs it.
            run_suspension_job(tx, job.id)
            return JobResult(str(self.job_id), JobOutcome.EXECUTED)
        assert job.definition_id is not None
        definition = definitions.by_id(tx.conn, job.definition_id)
        assert definition is not None
        check(tx, UPDATE_DEFINITION, definition=definition.key)
        if job.suspended or definition.suspended:
            # Acquired just before the suspension (of the job or its definition), or asked for by
            # an operator: it waits for the activation, its retries untouched.
            if self.owner is not None:
                job_store.release(tx.conn, self.owner, [job.id])
            return JobResult(str(self.job_id), JobOutcome.INSTANCE_NOT_ACTIVE)
        _log_unowned(tx, job, WorkLogState.SUCCESSFUL)
        model = tx.definitions.get(tx.conn, definition.id, definition.key)
        start = model.node(job.node_id)
        assert isinstance(start, StartEvent)
        result = start_instance(tx, definition, model, start, {}, None)
        due, left = None, job.repetitions_left
        if job.timer_text is not None and (left is None or left > 1):
            scheduled = job.due_at - timedelta(milliseconds=job.due_shift_ms)
            zone = tx.settings.timer_limits.zone
            due = timers.next_cycle_due(job.timer_text, scheduled, tx.now, zone)
            left = None if left is None else left - 1
        tx.announcements.add(JOB_CHANNEL)
        job_store.update_start_job(
            tx.conn, job, due_at=due, retries=job.retries, repetitions_left=left, error_message=None
        )
        return JobResult(str(self.job_id), JobOutcome.EXECUTED, result.instance_id)


def _log_unowned(
    tx: Tx,
    job: job_store.JobInfo,
    state: WorkLogState,
    details: str | None = None,
) -> None:
    """Log an attempt of a job of no instance (a timer start event's, the cleanup's, a batch's)."""
    owner = work_log.Owner(None, job.definition_id, None)
    row = work_log.job_row(job, state, tx.now, owner, details)
    work_log.insert(tx.conn, [row])


# Outcomes of `_execute_in` that leave the instance as it was loaded.
UNTOUCHED = (JobOutcome.GONE, JobOutcome.NOT_OWNER)


def _execute_in(tx: Tx, run: InstanceRun, job_id: UUID, owner: str | None) -> JobOutcome:
    """Run the job on its loaded instance: the outcome, and the instance changed in memory
    unless the outcome is UNTOUCHED."""
    job = run.jobs.get(job_id)
    skipped = _owned(job, owner)
    if skipped or job is None:
        return skipped or JobOutcome.GONE
    if run.instance.state is not InstanceState.ACTIVE or job.suspended:
        # Acquired just before a suspension, or asked for by an operator: it waits.
        job.lock_owner, job.lock_expires_at, job.dirty = None, None, True
        return JobOutcome.INSTANCE_NOT_ACTIVE
    flow = advance(tx, run)
    run.emit("job.executed", run.tokens.get(job.token_id) if job.token_id else None)
    run.log_attempt(WorkLogState.SUCCESSFUL, job)
    if job.kind in (JobKind.ASYNC, JobKind.ASYNC_AFTER):
        assert job.token_id is not None
        token = run.tokens[job.token_id]
        job.deleted = True
        runs.claim_token(tx.conn, token, tx.now)
        flow.execute_ready(token)
    else:
        flow.fire_timer(job)
    return JobOutcome.EXECUTED


@dataclass(frozen=True)
class JobOutcomes(Result):
    # job id -> outcome, as JobResult.outcome
    outcomes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecuteJobs:
    """Several due jobs of different instances in one transaction: one lock-and-load statement
    for all the instances, one write for all their changes, one commit. Each job runs exactly as
    `ExecuteJob` would run it. All or nothing: when one raises, none ran, and the caller runs
    them one at a time, each with its own failure handling.

    One job per family of called instances: what a job does to the other instances of its
    family (a called instance completing resumes its caller; a call activity interrupted ends
    what it called) is applied after every job of the batch ran, so a second job there would run
    over a state the first one changed. It is left out of the outcomes, and the caller runs it
    on its own, after this batch committed."""

    name: ClassVar[str] = "ExecuteJobs"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = JobOutcomes

    jobs: tuple[tuple[UUID, UUID], ...]  # (job id, instance id), one job per instance
    owner: str | None = None

    def execute(self, tx: Tx) -> JobOutcomes:
        instance_ids = [instance_id for _, instance_id in self.jobs]
        if len(set(instance_ids)) != len(instance_ids):
            raise BadRequest("a batch of jobs may hold one job per instance")
        loaded = runs.load_runs(tx.conn, instance_ids, tx.now)
        outcomes: dict[str, str] = {}
        changed: list[InstanceRun] = []
        families: set[UUID | None] = set()
        for job_id, instance_id in self.jobs:
            run = loaded.get(instance_id)
            if run is not None:
                if run.instance.root_instance_id in families:
                    continue
                families.add(run.instance.root_instance_id)
            outcome = JobOutcome.GONE if run is None else _execute_in(tx, run, job_id, self.owner)
            if run is not None and outcome not in UNTOUCHED:
                changed.append(run)
            outcomes[str(job_id)] = outcome
        if changed:
            persist(tx, *changed)
        return JobOutcomes(outcomes)


@dataclass(frozen=True)
class FailJob:
    """A job's command raised: its transaction is gone; this one counts the failure down. The
    same token waits for the next try; with no retries left its path stops with an incident."""

    name: ClassVar[str] = "FailJob"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = JobResult

    job_id: UUID
    owner: str | None
    message: str
    details: str | None = None

    def execute(self, tx: Tx) -> JobResult:
        exists, instance_id = job_store.instance_of(tx.conn, self.job_id)
        if not exists:
            return JobResult(str(self.job_id), JobOutcome.GONE)
        if instance_id is None:
            info = job_store.get(tx.conn, self.job_id, lock=True)
            if info is None or _owned(info, self.owner):
                return JobResult(str(self.job_id), JobOutcome.GONE)
            retries = info.retries - 1
            delay = waits.retry_delay(None, info.retries)
            tx.announcements.add(JOB_CHANNEL)
            failed = dataclasses.replace(info, retries=retries, error_message=self.message)
            _log_unowned(tx, failed, WorkLogState.FAILED, self.details)
            job_store.update_start_job(
                tx.conn,
                info,
                due_at=tx.now + delay,
                retries=retries,
                repetitions_left=info.repetitions_left,
                error_message=self.message,
                error_details=self.details,
                due_shift_ms=info.due_shift_ms,
            )
            return JobResult(str(self.job_id), JobOutcome.FAILED)
        run = load(tx, instance_id)
        job = run.jobs.get(self.job_id)
        skipped = _owned(job, self.owner)
        if skipped or job is None:
            return JobResult(str(self.job_id), skipped or JobOutcome.GONE, str(instance_id))
        node = model_of(tx, run).node(job.node_id)
        job.retries -= 1
        job.error_message = self.message
        job.error_details = self.details
        job.lock_owner, job.lock_expires_at, job.dirty = None, None, True
        run.log_attempt(WorkLogState.FAILED, job)
        if job.retries > 0:
            # Failures so far: the retries a fresh job of this node starts with, minus what is left.
            failures = max(
                1, waits.retries_of(node.retry_cycle, tx.settings.default_retries) - job.retries
            )
            job.due_at = tx.now + waits.retry_delay(node.retry_cycle, failures)
            run.emit("job.failed", run.tokens.get(job.token_id) if job.token_id else None)
        else:
            _fail_path(tx, run, job, self.message, self.details)
        persist(tx, run)
        return JobResult(str(self.job_id), JobOutcome.FAILED, str(instance_id))


def _fail_path(tx: Tx, run: InstanceRun, job: JobRow, message: str, details: str | None) -> None:
    if isinstance(model_of(tx, run).node(job.node_id), StartEvent):
        # An event subprocess's timer: no path stopped, its scope carries on; the incident
        # names the job (and the scope's token, none at process level) until it is retried.
        incident = IncidentRow(
            id=new_id(),
            type="failedJob",
            token_id=job.token_id,
            node_id=job.node_id,
            message=message,
            state=IncidentState.OPEN,
            created_at=tx.now,
            job_id=job.id,
            details=details,
            is_new=True,
        )
        run.open_incident(incident)
        return
    token = run.tokens.get(job.token_id) if job.token_id else None
    if token is None or not token.is_live:
        return
    flow = advance(tx, run)
    if token.state is TokenState.FAILED:
        return
    incident = flow.fail(token, "failedJob", message, job_id=job.id)
    incident.details = details


@dataclass(frozen=True)
class AcquiredJobs(Result):
    job_ids: list[str] = field(default_factory=list)
    # Timers of instances, as [job id, instance id]: jobs the executor may run together.
    # Asynchronous continuations are not among them: each is its own transaction by definition.
    timers: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class AcquireJobs:
    """Lock up to `limit` due jobs for `owner` (one statement, SKIP LOCKED)."""

    name: ClassVar[str] = "AcquireJobs"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = AcquiredJobs

    owner: str
    limit: int
    lock_seconds: float

    def execute(self, tx: Tx) -> AcquiredJobs:
        acquired = job_store.acquire(
            tx.conn, self.owner, tx.now, self.limit, timedelta(seconds=self.lock_seconds)
        )
        for job in acquired:
            JOB_LAG_SECONDS.observe(max(0.0, (tx.now - job.due_at).total_seconds()))
        return AcquiredJobs(
            [str(job.id) for job in acquired],
            [
                [str(job.id), str(job.instance_id)]
                for job in acquired
                if job.instance_id and job.kind == JobKind.TIMER
            ],
        )


@dataclass(frozen=True)
class ReleasedJobs(Result):
    released: int = 0


@dataclass(frozen=True)
class ReleaseJobs:
    """Give back jobs an executor acquired but will not run (it is stopping), so that another
    one need not wait for the locks to expire. Only the owner's own locks are cleared."""

    name: ClassVar[str] = "ReleaseJobs"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = ReleasedJobs

    owner: str
    job_ids: tuple[UUID, ...]

    def execute(self, tx: Tx) -> ReleasedJobs:
        released = job_store.release(tx.conn, self.owner, list(self.job_ids))
        if released:
            tx.announcements.add(JOB_CHANNEL)
        return ReleasedJobs(released)
