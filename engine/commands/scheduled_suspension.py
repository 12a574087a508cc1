"""Suspensions and activations scheduled for later (Camunda's `executionDate`): a job of kind
`suspension`, due then, whose configuration names the change. The job executor runs it as any
other job (engine/commands/jobs.py `ExecuteJob`), and running it executes the same command an
immediate request runs, inside the job's transaction: `includeProcessInstances` and
`includeJobs` are honoured when it runs, and the permits are checked for whoever runs it (the job
executor acts for nobody; an operator who executes the job by hand must hold them).

Scheduling checks what the change will check (the definition or job definition exists, the
caller holds the permit) so that a request that could never succeed is refused at once. The job
names the definition it changes (the latest version for every version of a key), so that it is
read under the definition's covers, and its node id is Camunda's job handler type
(`suspend-processdefinition`, `activate-job-definition`...)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.job_settings import (
    SetJobDefinitionsSuspended,
    SetJobDefinitionSuspended,
    locked_job_definition,
)
from engine.commands.suspension import (
    ActivateDefinition,
    SuspendDefinition,
    definitions_to_change,
)
from engine.core import audit
from engine.core.executor import Command, Result, Tx
from engine.core.permits import SUSPEND_DEFINITION, SUSPEND_INSTANCE, UPDATE_DEFINITION, Permit
from engine.core.permits import check as check_permit
from engine.db.ids import new_id
from engine.errors import BadRequest
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation
from engine.store import jobs as job_store

# What a scheduled change acts on: process definitions (and their instances) or job definitions
# (and their jobs).
PROCESS_DEFINITIONS = "process-definition"
JOB_DEFINITIONS = "job-definition"


def handler_type(target: str, suspended: bool) -> str:
    """Camunda's job handler type of the change: the job's node id."""
    verb = "suspend" if suspended else "activate"
    return f"{verb}-processdefinition" if target == PROCESS_DEFINITIONS else f"{verb}-{target}"


@dataclass(frozen=True)
class ScheduledResult(Result):
    job_id: str = ""


def _schedule(
    tx: Tx,
    due_at: datetime,
    node_id: str,
    definition_id: str,
    definition_key: str,
    tenant_id: str | None,
    configuration: dict[str, Any],
    entity: AuditEntity,
    entity_id: str,
) -> ScheduledResult:
    if due_at.tzinfo is None:
        raise BadRequest("executionDate must name its offset", field="executionDate")
    job_id = new_id()
    job_store.schedule_suspension(
        tx.conn,
        job_id,
        node_id,
        definition_id=definition_id,
        tenant_id=tenant_id,
        due_at=due_at,
        retries=tx.settings.default_retries,
        now=tx.now,
        configuration=configuration,
    )
    tx.announcements.add(JOB_CHANNEL)
    suspended = bool(configuration["suspended"])
    audit.record(
        tx,
        AuditOperation.SUSPEND if suspended else AuditOperation.ACTIVATE,
        entity,
        entity_id=entity_id,
        definition_id=definition_id,
        definition_key=definition_key,
        property="suspensionState",
        after="suspended" if suspended else "active",
        details={"executionDate": due_at.isoformat(), "jobId": str(job_id)},
    )
    return ScheduledResult(str(job_id))


@dataclass(frozen=True)
class ScheduleDefinitionSuspension:
    """Suspend (or activate) the process definition `definition_id`, or every version of `key`
    (of `tenant_id`, or of none with `without_tenant`), at `due_at`; with `include_instances`
    their instances then too."""

    name: ClassVar[str] = "ScheduleDefinitionSuspension"
    result_type: ClassVar[type[Result]] = ScheduledResult
    permits: ClassVar[tuple[Permit, ...]] = (SUSPEND_DEFINITION, SUSPEND_INSTANCE)

    suspended: bool
    due_at: datetime
    definition_id: str | None = None
    key: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False
    include_instances: bool = False

    def execute(self, tx: Tx) -> ScheduledResult:
        rows = definitions_to_change(
            tx,
            SUSPEND_DEFINITION,
            definition_id=self.definition_id,
            key=self.key,
            tenant_id=self.tenant_id,
            without_tenant=self.without_tenant,
        )
        shown = max(rows, key=lambda row: row.version)
        configuration = {
            "target": PROCESS_DEFINITIONS,
            "suspended": self.suspended,
            "definitionId": self.definition_id,
            "key": self.key,
            "tenantId": self.tenant_id,
            "withoutTenant": self.without_tenant,
            "include": self.include_instances,
        }
        return _schedule(
            tx,
            self.due_at,
            handler_type(PROCESS_DEFINITIONS, self.suspended),
            shown.id,
            shown.key,
            shown.tenant_id,
            configuration,
            AuditEntity.PROCESS_DEFINITION,
            self.definition_id or shown.key,
        )


@dataclass(frozen=True)
class ScheduleJobDefinitionSuspension:
    """Suspend (or activate) the job definition `job_definition_id`, or every job definition of
    the process definition `definition_id` or of every version of `key` (of `tenant_id`, or of
    none with `without_tenant`), at `due_at`; with `include_jobs` their jobs then too."""

    name: ClassVar[str] = "ScheduleJobDefinitionSuspension"
    result_type: ClassVar[type[Result]] = ScheduledResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_DEFINITION,)

    suspended: bool
    due_at: datetime
    job_definition_id: UUID | None = None
    definition_id: str | None = None
    key: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False
    include_jobs: bool = False

    def execute(self, tx: Tx) -> ScheduledResult:
        configuration: dict[str, Any] = {
            "target": JOB_DEFINITIONS,
            "suspended": self.suspended,
            "include": self.include_jobs,
        }
        node_id = handler_type(JOB_DEFINITIONS, self.suspended)
        if self.job_definition_id is not None:
            info = locked_job_definition(tx, self.job_definition_id)
            check_permit(tx, UPDATE_DEFINITION, definition=info.definition_key)
            configuration["jobDefinitionId"] = str(info.id)
            return _schedule(
                tx,
                self.due_at,
                node_id,
                info.definition_id,
                info.definition_key,
                info.tenant_id,
                configuration,
                AuditEntity.JOB,
                str(info.id),
            )
        rows = definitions_to_change(
            tx,
            UPDATE_DEFINITION,
            definition_id=self.definition_id,
            key=self.key,
            tenant_id=self.tenant_id,
            without_tenant=self.without_tenant,
        )
        shown = max(rows, key=lambda row: row.version)
        configuration |= {
            "definitionId": self.definition_id,
            "key": self.key,
            "tenantId": self.tenant_id,
            "withoutTenant": self.without_tenant,
        }
        return _schedule(
            tx,
            self.due_at,
            node_id,
            shown.id,
            shown.key,
            shown.tenant_id,
            configuration,
            AuditEntity.JOB,
            self.definition_id or shown.key,
        )


def scheduled_change(configuration: dict[str, Any]) -> Command[Any]:
    """The command a scheduled suspension's job runs, from its configuration."""
    suspended = bool(configuration.get("suspended"))
    include = bool(configuration.get("include"))
    by_definition: dict[str, Any] = {
        "definition_id": configuration.get("definitionId"),
        "key": configuration.get("key"),
        "tenant_id": configuration.get("tenantId"),
        "without_tenant": bool(configuration.get("withoutTenant")),
    }
    if configuration.get("target") == PROCESS_DEFINITIONS:
        kind = SuspendDefinition if suspended else ActivateDefinition
        return kind(include_instances=include, **by_definition)
    if configuration.get("jobDefinitionId"):
        return SetJobDefinitionSuspended(UUID(configuration["jobDefinitionId"]), suspended, include)
    return SetJobDefinitionsSuspended(suspended, include_jobs=include, **by_definition)


def run_suspension_job(tx: Tx, job_id: UUID) -> None:
    """Run a scheduled suspension's job: the change it names, in this transaction, and the job
    is gone. A change that fails (its definition was deleted, the caller lacks the permit)
    raises: the job's failure is counted down as any job's."""
    change = scheduled_change(job_store.configuration_of(tx.conn, job_id))
    change.execute(tx)
    job_store.delete(tx.conn, job_id)
