"""Operator commands on incidents: retry the stopped path, or resolve the incident by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from uuid import UUID

from engine.commands.common import persist_audited
from engine.commands.external_tasks import restore_external_task
from engine.commands.job_retries import restore_after_incident
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.permits import RETRY_JOB, UPDATE_INSTANCE, Permit, check
from engine.core.runtime import IncidentRow, InstanceRun
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.json_input import text_problem
from engine.states import AuditEntity, AuditOperation, IncidentState
from engine.store import incidents as store

# Camunda's incident types the engine opens itself (a failed job's, a failed external task's):
# retried, never resolved by hand over Camunda's API; a custom incident has any other type.
ENGINE_INCIDENT_TYPES = ("failedJob", "failedExternalTask")


@dataclass(frozen=True)
class IncidentResult(Result):
    incident_id: str
    instance_id: str
    state: str


def _open_incident(tx: Tx, incident_id: UUID, permit: Permit) -> tuple[InstanceRun, IncidentRow]:
    info = store.get(tx.conn, incident_id)
    if info is None:
        raise NotFound(f"incident {incident_id} does not exist")
    run = load(tx, info.instance_id)
    check(tx, permit, instance=run.instance.id, definition=run.instance.definition_key)
    incident = run.incidents.get(incident_id)
    if incident is None:
        raise Conflict(f"incident {incident_id} is already resolved")
    return run, incident


@dataclass(frozen=True)
class RetryIncident:
    """Restart the stopped path: its job or external task gets one more try."""

    name: ClassVar[str] = "RetryIncident"
    result_type: ClassVar[type[Result]] = IncidentResult
    permits: ClassVar[tuple[Permit, ...]] = (RETRY_JOB,)

    incident_id: UUID

    def execute(self, tx: Tx) -> IncidentResult:
        run, incident = _open_incident(tx, self.incident_id, RETRY_JOB)
        if incident.job_id is not None and incident.job_id in run.jobs:
            job = run.jobs[incident.job_id]
            job.retries, job.due_at, job.dirty = 1, tx.now, True
            job.lock_owner = job.lock_expires_at = None
            restore_after_incident(run, job)
        elif (
            incident.external_task_id is not None
            and incident.external_task_id in run.external_tasks
        ):
            task = run.external_tasks[incident.external_task_id]
            task.retries = 1
            restore_external_task(run, task)
        else:
            raise Conflict(
                f"incident {self.incident_id} ({incident.type}) has no job or external task to "
                "retry; resolve it or cancel the instance",
                incident_type=incident.type,
            )
        persist_audited(
            tx,
            run,
            AuditOperation.RETRY_INCIDENT,
            AuditEntity.INCIDENT,
            entity_id=str(incident.id),
            details={"type": incident.type, "node": incident.node_id},
        )
        return IncidentResult(str(incident.id), str(run.instance.id), incident.state)


@dataclass(frozen=True)
class ResolveIncident:
    """Mark the incident resolved. The token stays where it stopped: the operator has dealt with
    the cause another way (and may set retries, change variables or cancel)."""

    name: ClassVar[str] = "ResolveIncident"
    result_type: ClassVar[type[Result]] = IncidentResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    incident_id: UUID
    # Camunda's resolveIncident: only a custom incident; the engine's own are retried.
    custom_only: bool = False

    def execute(self, tx: Tx) -> IncidentResult:
        run, incident = _open_incident(tx, self.incident_id, UPDATE_INSTANCE)
        if self.custom_only and incident.type in ENGINE_INCIDENT_TYPES:
            raise BadRequest(f"Cannot resolve an incident of type {incident.type}", field="id")
        incident.state, incident.resolved_at = IncidentState.RESOLVED, tx.now
        incident.dirty = True
        run.emit_incident("incident.resolved", incident)
        persist_audited(
            tx,
            run,
            AuditOperation.RESOLVE_INCIDENT,
            AuditEntity.INCIDENT,
            entity_id=str(incident.id),
            property="state",
            before=IncidentState.OPEN.value,
            after=IncidentState.RESOLVED.value,
            details={"type": incident.type, "node": incident.node_id},
        )
        return IncidentResult(str(incident.id), str(run.instance.id), incident.state)


MAX_ANNOTATION = 4000


@dataclass(frozen=True)
class AnnotateIncident:
    """Set (None: clear) the operator's annotation of an open incident (Camunda's
    setAnnotationForIncidentById and clearAnnotationForIncidentById), audited as Camunda logs
    them: SetAnnotation or ClearAnnotation on the incident."""

    name: ClassVar[str] = "AnnotateIncident"
    result_type: ClassVar[type[Result]] = IncidentResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    incident_id: UUID
    annotation: str | None

    def execute(self, tx: Tx) -> IncidentResult:
        text = self.annotation
        if text is not None and (len(text) > MAX_ANNOTATION or text_problem(text)):
            raise BadRequest(
                f"an annotation is at most {MAX_ANNOTATION} printable characters",
                field="annotation",
            )
        run, incident = _open_incident(tx, self.incident_id, UPDATE_INSTANCE)
        before, incident.annotation, incident.dirty = incident.annotation, text, True
        persist_audited(
            tx,
            run,
            AuditOperation.SET_ANNOTATION if text is not None else AuditOperation.CLEAR_ANNOTATION,
            AuditEntity.INCIDENT,
            entity_id=str(incident.id),
            property="annotation",
            before=before,
            after=text,
            details={"type": incident.type, "node": incident.node_id},
        )
        return IncidentResult(str(incident.id), str(run.instance.id), incident.state)
