"""Suspending and activating process definitions and, several at once, process instances, as
Camunda's `updateSuspensionState` does, each in one transaction.

A suspended definition starts nothing (engine/commands/family.py `start_run`; its message,
signal and conditional start events are not found, its timer start events' jobs are not
acquired); with `include_instances`, its instances are suspended (or activated) in the same
transaction. A suspended instance keeps its tokens where they are (engine/commands/instances.py
`suspend_run`). Asking for the state a definition or instance is already in changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar
from uuid import UUID

from engine.commands.common import persist
from engine.commands.deployments import checked_tenant
from engine.commands.instances import activate_run, suspend_run
from engine.commands.loading import load
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import SUSPEND_DEFINITION, SUSPEND_INSTANCE, Permit, check
from engine.errors import BadRequest, NotFound
from engine.schema import JOB_CHANNEL
from engine.states import AuditEntity, AuditOperation, DefinitionState, InstanceState
from engine.store import definitions
from engine.store import instances as instance_store

# The instances one transaction suspends or activates with their definitions; more go through a
# batch (POST /process-instance/suspended-async).
MAX_INSTANCES = 1000


@dataclass(frozen=True)
class SuspensionResult(Result):
    # The definitions whose state changed, and the instances whose state changed.
    definition_ids: list[str] = field(default_factory=list)
    instance_ids: list[str] = field(default_factory=list)


def _instance_state(suspended: bool) -> InstanceState:
    return InstanceState.SUSPENDED if suspended else InstanceState.ACTIVE


def _switch(tx: Tx, instance_ids: list[UUID], suspended: bool, *, missing_ok: bool) -> list[str]:
    """Suspend (or activate) each of `instance_ids` that is active (suspended); those already in
    that state, and (with `missing_ok`) those ended or unknown, are left alone. The ids of the
    instances changed."""
    changed: list[str] = []
    for instance_id in instance_ids:
        try:
            run = load(tx, instance_id)
        except NotFound:
            if missing_ok:
                continue
            raise
        check(
            tx, SUSPEND_INSTANCE, instance=run.instance.id, definition=run.instance.definition_key
        )
        state = run.instance.state
        if suspended and state is InstanceState.ACTIVE:
            suspend_run(tx, run)
        elif not suspended and state is InstanceState.SUSPENDED:
            activate_run(tx, run)
        else:
            continue
        persist(tx, run)
        changed.append(str(instance_id))
    if changed and not suspended:
        tx.announcements.add(JOB_CHANNEL)
    return changed


@dataclass(frozen=True)
class SetInstancesSuspension:
    """Suspend (`suspended`) or activate the instances `instance_ids` in one transaction. An
    unknown id is NotFound unless `missing_ok` (a query's answer, some of which may have ended
    meanwhile)."""

    name: ClassVar[str] = "SetInstancesSuspension"
    result_type: ClassVar[type[Result]] = SuspensionResult
    permits: ClassVar[tuple[Permit, ...]] = (SUSPEND_INSTANCE,)

    instance_ids: tuple[UUID, ...]
    suspended: bool
    missing_ok: bool = False

    def execute(self, tx: Tx) -> SuspensionResult:
        if len(self.instance_ids) > MAX_INSTANCES:
            raise BadRequest(
                f"at most {MAX_INSTANCES} process instances change their suspension state in one "
                "request: use a batch (suspended-async) for more",
                field="processInstanceIds",
            )
        ids = sorted(set(self.instance_ids))
        return SuspensionResult(
            instance_ids=_switch(tx, ids, self.suspended, missing_ok=self.missing_ok)
        )


def definitions_to_change(
    tx: Tx,
    permit: Permit,
    *,
    definition_id: str | None,
    key: str | None,
    tenant_id: str | None,
    without_tenant: bool,
) -> list[definitions.DefinitionRow]:
    """The process definition `definition_id`, or every version of `key` (of `tenant_id`, or of
    no tenant with `without_tenant`; neither: of every tenant the actor sees), locked, each
    checked against `permit`; NotFound when there is none."""
    if (definition_id is None) == (key is None):
        raise BadRequest(
            "name either a process definition id or a process definition key",
            field="processDefinitionId",
        )
    if definition_id is not None and (tenant_id or without_tenant):
        raise BadRequest(
            "a tenant narrows a key only, not a process definition id",
            field="processDefinitionTenantId",
        )
    rows = definitions.to_suspend(
        tx.conn,
        definition_id=definition_id,
        key=key,
        tenant_id=checked_tenant(tenant_id, "processDefinitionTenantId"),
        without_tenant=without_tenant,
    )
    if not rows:
        what = (
            f"process definition '{definition_id}'"
            if definition_id is not None
            else f"process definition with key '{key}'"
        )
        raise NotFound(f"no {what} is deployed")
    for row in rows:
        check(tx, permit, definition=row.key)
    return rows


@dataclass(frozen=True)
class _DefinitionSuspension:
    """Suspend or activate the definition `definition_id`, or every version of `key` (of
    `tenant_id`, or of no tenant with `without_tenant`; neither: of every tenant the actor
    sees); with `include_instances` also their instances, in the same transaction."""

    result_type: ClassVar[type[Result]] = SuspensionResult
    permits: ClassVar[tuple[Permit, ...]] = (SUSPEND_DEFINITION, SUSPEND_INSTANCE)
    suspended: ClassVar[bool]

    definition_id: str | None = None
    key: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False
    include_instances: bool = False

    def targets(self, tx: Tx) -> list[definitions.DefinitionRow]:
        """The definitions this changes, locked, each checked against the actor's permit."""
        return definitions_to_change(
            tx,
            SUSPEND_DEFINITION,
            definition_id=self.definition_id,
            key=self.key,
            tenant_id=self.tenant_id,
            without_tenant=self.without_tenant,
        )

    def execute(self, tx: Tx) -> SuspensionResult:
        rows = self.targets(tx)
        target = DefinitionState.SUSPENDED if self.suspended else DefinitionState.ACTIVE
        changing = [row for row in rows if row.state != target]
        if changing:
            definitions.set_state(tx.conn, [row.id for row in changing], target)
        operation = AuditOperation.SUSPEND if self.suspended else AuditOperation.ACTIVATE
        for row in changing:
            audit.record(
                tx,
                operation,
                AuditEntity.PROCESS_DEFINITION,
                entity_id=row.id,
                definition_id=row.id,
                definition_key=row.key,
                property="suspensionState",
                before="active" if self.suspended else "suspended",
                after="suspended" if self.suspended else "active",
            )
        if changing and not self.suspended:
            # Timer start events waited while the definition was suspended.
            tx.announcements.add(JOB_CHANNEL)
        changed_instances: list[str] = []
        if self.include_instances:
            from_state = _instance_state(not self.suspended)
            ids = instance_store.of_definitions_in_state(
                tx.conn, [row.id for row in rows], from_state, MAX_INSTANCES + 1
            )
            if len(ids) > MAX_INSTANCES:
                raise BadRequest(
                    f"more than {MAX_INSTANCES} process instances would change their suspension "
                    "state in one request: change the definition alone and the instances with a "
                    "batch (suspended-async)",
                    field="includeProcessInstances",
                )
            changed_instances = _switch(tx, ids, self.suspended, missing_ok=True)
        return SuspensionResult([row.id for row in changing], changed_instances)


@dataclass(frozen=True)
class SuspendDefinition(_DefinitionSuspension):
    name: ClassVar[str] = "SuspendDefinition"
    suspended: ClassVar[bool] = True


@dataclass(frozen=True)
class ActivateDefinition(_DefinitionSuspension):
    name: ClassVar[str] = "ActivateDefinition"
    suspended: ClassVar[bool] = False
