"""A job's retries set by an operator (`SetJobRetries`), and what a failed job's instance gets
back when it may run again (`restore_after_incident`, which retrying an incident does too). The
result of every command on one job (`JobResult`). Running jobs is engine/commands/jobs.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import check_retries, persist_audited
from engine.commands.loading import load
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import RETRY_JOB, RETRY_START_JOB, Permit, check
from engine.core.runtime import InstanceRun, JobRow
from engine.errors import Conflict, NotFound
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation, JobKind, JobOutcome, TokenState
from engine.store import definitions
from engine.store import jobs as job_store


@dataclass(frozen=True)
class JobResult(Result):
    job_id: str
    # A JobOutcome (engine/states.py), kept a plain string so that a replayed result reads the same.
    outcome: str
    instance_id: str | None = None


@dataclass(frozen=True)
class SetJobRetries:
    name: ClassVar[str] = "SetJobRetries"
    result_type: ClassVar[type[Result]] = JobResult
    # A job of an instance, or a start job of a definition (a timer start event's).
    permits: ClassVar[tuple[Permit, ...]] = (RETRY_JOB, RETRY_START_JOB)

    job_id: UUID
    retries: int

    def execute(self, tx: Tx) -> JobResult:
        check_retries(self.retries, Conflict)
        exists, instance_id = job_store.instance_of(tx.conn, self.job_id)
        if not exists:
            raise NotFound(f"job {self.job_id} does not exist", job_id=str(self.job_id))
        fields: dict[str, Any] = {
            "entity_id": str(self.job_id),
            "property": "retries",
            "after": self.retries,
        }
        if instance_id is None:
            info = job_store.get(tx.conn, self.job_id, lock=True)
            assert info is not None
            definition = definitions.by_id(tx.conn, info.definition_id or "")
            check(tx, RETRY_START_JOB, definition=definition.key if definition else "")
            tx.announcements.add(JOB_CHANNEL)
            job_store.update_start_job(
                tx.conn,
                info,
                due_at=info.due_at,
                retries=self.retries,
                repetitions_left=info.repetitions_left,
                error_message=info.error_message,
                error_details=job_store.stacktrace_of(tx.conn, info.id),
                due_shift_ms=info.due_shift_ms,
            )
            audit.record(
                tx,
                AuditOperation.SET_JOB_RETRIES,
                AuditEntity.JOB,
                definition_id=info.definition_id,
                before=info.retries,
                **fields,
            )
            return JobResult(str(self.job_id), JobOutcome.UPDATED)
        run = load(tx, instance_id)
        check(tx, RETRY_JOB, instance=run.instance.id, definition=run.instance.definition_key)
        job = run.jobs[self.job_id]
        before = job.retries
        job.retries, job.dirty = self.retries, True
        if self.retries > 0:
            restore_after_incident(run, job)
        persist_audited(
            tx, run, AuditOperation.SET_JOB_RETRIES, AuditEntity.JOB, before=before, **fields
        )
        return JobResult(str(self.job_id), JobOutcome.UPDATED, str(instance_id))


def restore_after_incident(run: InstanceRun, job: JobRow) -> None:
    """A failed job may run again: its token waits where it was and its incidents resolve."""
    ready = job.kind in (JobKind.ASYNC, JobKind.ASYNC_AFTER)
    state = TokenState.READY if ready else TokenState.WAITING
    run.restore_failed(job.token_id, job_id=job.id, state=state)
