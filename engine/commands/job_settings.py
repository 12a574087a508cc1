"""A job suspended or activated, given a priority or a due date by an operator; a job
definition suspended or activated, given an overriding priority or its jobs' retries. Running
jobs is engine/commands/jobs.py; their retries engine/commands/job_retries.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import check_retries, persist_audited
from engine.commands.job_retries import JobResult, SetJobRetries
from engine.commands.loading import load
from engine.commands.suspension import definitions_to_change
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import (
    RETRY_JOB,
    RETRY_START_JOB,
    UPDATE_DEFINITION,
    UPDATE_INSTANCE,
    Permit,
    check,
)
from engine.core.runtime import JobRow
from engine.errors import BadRequest, NotFound
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation, JobKind, JobOutcome
from engine.store import definitions
from engine.store import job_definitions as job_definition_store
from engine.store import jobs as job_store

# Camunda's for changing a job: UPDATE on its instance (UPDATE_INSTANCE on its definition), or
# UPDATE on the definition of a timer start event's job.
_PERMITS: tuple[Permit, ...] = (UPDATE_INSTANCE, UPDATE_DEFINITION)
_TIMERS = (JobKind.TIMER, JobKind.TIMER_START)
PRIORITY_RANGE = 2**63


@dataclass(frozen=True)
class _Change:
    """What an operator changes on a job: the audit entry's operation and property, the row's
    fields before and after (a start job's row is written from `after`)."""

    operation: AuditOperation
    property: str
    before: Any
    after: Any
    fields: dict[str, Any]


def _apply(tx: Tx, job_id: UUID, change_of: Any) -> JobResult:
    """Load the job (with its instance, locked), check the caller's permit, apply `change_of`
    (job -> _Change, having set the fields on a runtime job) and audit it."""
    exists, instance_id = job_store.instance_of(tx.conn, job_id)
    if not exists:
        raise NotFound(f"job {job_id} does not exist", job_id=str(job_id))
    tx.announcements.add(JOB_CHANNEL)
    if instance_id is None:
        info = job_store.get(tx.conn, job_id, lock=True)
        assert info is not None
        definition = definitions.by_id(tx.conn, info.definition_id or "")
        check(tx, UPDATE_DEFINITION, definition=definition.key if definition else "")
        change: _Change = change_of(info)
        job_store.set_start_job(tx.conn, job_id, **change.fields)
        audit.record(
            tx,
            change.operation,
            AuditEntity.JOB,
            entity_id=str(job_id),
            definition_id=info.definition_id,
            definition_key=definition.key if definition else None,
            property=change.property,
            before=change.before,
            after=change.after,
        )
        return JobResult(str(job_id), JobOutcome.UPDATED)
    run = load(tx, instance_id)
    check(tx, UPDATE_INSTANCE, instance=run.instance.id, definition=run.instance.definition_key)
    job = run.jobs[job_id]
    change = change_of(job)
    for name, value in change.fields.items():
        setattr(job, name, value)
    job.dirty = True
    persist_audited(
        tx,
        run,
        change.operation,
        AuditEntity.JOB,
        entity_id=str(job_id),
        property=change.property,
        before=change.before,
        after=change.after,
    )
    return JobResult(str(job_id), JobOutcome.UPDATED, str(instance_id))


@dataclass(frozen=True)
class SetJobSuspended:
    """Suspend a job (it is not acquired, nor run by hand) or activate it again."""

    name: ClassVar[str] = "SetJobSuspended"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = _PERMITS

    job_id: UUID
    suspended: bool

    def execute(self, tx: Tx) -> JobResult:
        operation = AuditOperation.SUSPEND if self.suspended else AuditOperation.ACTIVATE

        def change(job: JobRow | job_store.JobInfo) -> _Change:
            return _Change(
                operation,
                "suspensionState",
                job.suspended,
                self.suspended,
                {"suspended": self.suspended},
            )

        return _apply(tx, self.job_id, change)


@dataclass(frozen=True)
class SetJobPriority:
    """Give a job a priority: due jobs are acquired highest priority first."""

    name: ClassVar[str] = "SetJobPriority"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = _PERMITS

    job_id: UUID
    priority: int

    def execute(self, tx: Tx) -> JobResult:
        if not -PRIORITY_RANGE <= self.priority < PRIORITY_RANGE:
            raise BadRequest("priority must be a 64-bit integer", field="priority")

        def change(job: JobRow | job_store.JobInfo) -> _Change:
            return _Change(
                AuditOperation.UPDATE,
                "priority",
                job.priority,
                self.priority,
                {"priority": self.priority},
            )

        return _apply(tx, self.job_id, change)


@dataclass(frozen=True)
class SetJobDueDate:
    """Move a job's due date (None: due now). A cycle timer's later repetitions move with it when
    `cascade`; otherwise they keep to the cycle's schedule."""

    name: ClassVar[str] = "SetJobDueDate"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = _PERMITS

    job_id: UUID
    due_at: datetime | None
    cascade: bool = False

    def execute(self, tx: Tx) -> JobResult:
        due_at = self.due_at or tx.now

        def change(job: JobRow | job_store.JobInfo) -> _Change:
            shift = job.due_shift_ms
            if job.kind in _TIMERS and job.timer_text is not None and not self.cascade:
                moved = due_at - job.due_at
                shift += int(moved.total_seconds() * 1000)
            return _Change(
                AuditOperation.UPDATE,
                "duedate",
                job.due_at.isoformat(),
                due_at.isoformat(),
                {"due_at": due_at, "due_shift_ms": shift},
            )

        return _apply(tx, self.job_id, change)


def locked_job_definition(
    tx: Tx, job_definition_id: UUID
) -> job_definition_store.JobDefinitionInfo:
    """The job definition, locked."""
    info = job_definition_store.get(tx.conn, job_definition_id)
    if info is None:
        raise NotFound(
            f"job definition {job_definition_id} does not exist",
            job_definition_id=str(job_definition_id),
        )
    return info


def _audit_definition(
    tx: Tx,
    info: job_definition_store.JobDefinitionInfo,
    operation: AuditOperation,
    property: str,
    before: Any,
    after: Any,
) -> None:
    audit.record(
        tx,
        operation,
        AuditEntity.JOB,
        entity_id=str(info.id),
        definition_id=info.definition_id,
        definition_key=info.definition_key,
        property=property,
        before=before,
        after=after,
    )


@dataclass(frozen=True)
class SetJobDefinitionSuspended:
    """Suspend or activate a job definition; with `include_jobs`, every job it made now too
    (Camunda's UPDATE on the process definition, and on its instances for the jobs)."""

    name: ClassVar[str] = "SetJobDefinitionSuspended"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_DEFINITION,)

    job_definition_id: UUID
    suspended: bool
    include_jobs: bool = False

    def execute(self, tx: Tx) -> JobResult:
        info = locked_job_definition(tx, self.job_definition_id)
        check(tx, UPDATE_DEFINITION, definition=info.definition_key)
        job_definition_store.set_suspended(tx.conn, info.id, self.suspended)
        if self.include_jobs:
            job_definition_store.set_jobs(tx.conn, info, suspended=self.suspended)
            tx.announcements.add(JOB_CHANNEL)
        operation = AuditOperation.SUSPEND if self.suspended else AuditOperation.ACTIVATE
        _audit_definition(tx, info, operation, "suspensionState", info.suspended, self.suspended)
        return JobResult(str(info.id), JobOutcome.UPDATED)


@dataclass(frozen=True)
class JobDefinitionsResult(Result):
    job_definition_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SetJobDefinitionsSuspended:
    """Suspend or activate every job definition of the process definition `definition_id`, or
    of every version of `key` (of `tenant_id`, or of none with `without_tenant`), each as
    `SetJobDefinitionSuspended` does, with `include_jobs` their jobs too."""

    name: ClassVar[str] = "SetJobDefinitionsSuspended"
    result_type: ClassVar[type[Result]] = JobDefinitionsResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_DEFINITION,)

    suspended: bool
    definition_id: str | None = None
    key: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False
    include_jobs: bool = False

    def execute(self, tx: Tx) -> JobDefinitionsResult:
        rows = definitions_to_change(
            tx,
            UPDATE_DEFINITION,
            definition_id=self.definition_id,
            key=self.key,
            tenant_id=self.tenant_id,
            without_tenant=self.without_tenant,
        )
        ids = job_definition_store.of_definitions(tx.conn, [row.id for row in rows])
        for job_definition_id in ids:
            SetJobDefinitionSuspended(job_definition_id, self.suspended, self.include_jobs).execute(
                tx
            )
        return JobDefinitionsResult([str(i) for i in ids])


@dataclass(frozen=True)
class SetJobDefinitionPriority:
    """Set (or with None clear) a job definition's overriding priority; with `include_jobs`,
    give every job it made now that priority too."""

    name: ClassVar[str] = "SetJobDefinitionPriority"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_DEFINITION,)

    job_definition_id: UUID
    priority: int | None
    include_jobs: bool = False

    def execute(self, tx: Tx) -> JobResult:
        if self.priority is not None and not -PRIORITY_RANGE <= self.priority < PRIORITY_RANGE:
            raise BadRequest("priority must be a 64-bit integer", field="priority")
        if self.priority is None and self.include_jobs:
            raise BadRequest(
                "Cannot reset priority for job definition "
                f"{self.job_definition_id} with includeJobs=true",
                field="includeJobs",
            )
        info = locked_job_definition(tx, self.job_definition_id)
        check(tx, UPDATE_DEFINITION, definition=info.definition_key)
        job_definition_store.set_priority(tx.conn, info.id, self.priority)
        if self.include_jobs:
            job_definition_store.set_jobs(tx.conn, info, priority=self.priority)
            tx.announcements.add(JOB_CHANNEL)
        _audit_definition(
            tx, info, AuditOperation.UPDATE, "overridingPriority", info.priority, self.priority
        )
        return JobResult(str(info.id), JobOutcome.UPDATED)


@dataclass(frozen=True)
class SetJobDefinitionRetries:
    """Set the retries of every job the job definition made, each as `SetJobRetries` does (a
    job's incident resolves when it gets retries back)."""

    name: ClassVar[str] = "SetJobDefinitionRetries"
    result_type: ClassVar[type[Result]] = JobResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_DEFINITION, RETRY_JOB, RETRY_START_JOB)

    job_definition_id: UUID
    retries: int

    def execute(self, tx: Tx) -> JobResult:
        check_retries(self.retries)
        # The permit is checked on each job, as SetJobRetries checks it.
        info = locked_job_definition(tx, self.job_definition_id)
        for job_id in job_definition_store.jobs_of(tx.conn, info):
            SetJobRetries(job_id, self.retries).execute(tx)
        return JobResult(str(info.id), JobOutcome.UPDATED)
