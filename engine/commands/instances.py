"""Start, cancel, suspend, resume instances; set their variables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import advance, persist, require_running
from engine.commands.deployments import checked_tenant
from engine.commands.family import start_run
from engine.commands.loading import load
from engine.core import actors, audit
from engine.core.executor import Result, Tx
from engine.core.permits import (
    DELETE_INSTANCE,
    START_INSTANCE,
    SUSPEND_INSTANCE,
    UPDATE_INSTANCE_VARIABLES,
    Permit,
    check,
)
from engine.core.runtime import InstanceRun
from engine.errors import BadRequest, Conflict, InstanceEnded, NotFound
from engine.language.forms import submit
from engine.language.variables import TypedValue, infer
from engine.model import ProcessModel, StartEvent
from engine.semantics import conditions
from engine.states import AuditEntity, AuditOperation, InstanceState
from engine.store import definitions


@dataclass(frozen=True)
class InstanceResult(Result):
    instance_id: str
    definition_id: str
    state: str


@dataclass(frozen=True)
class StartInstance:
    """Start the latest version of `key`, `version` of `key`, or the exact `definition_id`,
    through the process's initial start event (`ProcessModel.initial`: its none start event, or
    its only start event, a message start event say); a process with no initial start event is
    refused with Camunda's message.

    A key is resolved within `tenant_id`, or among the definitions without a tenant with
    `without_tenant`; with neither, the key must be deployed for one tenant (or none) only."""

    name: ClassVar[str] = "StartInstance"
    result_type: ClassVar[type[Result]] = InstanceResult
    permits: ClassVar[tuple[Permit, ...]] = (START_INSTANCE,)

    key: str | None = None
    version: int | None = None
    definition_id: str | None = None
    variables: Mapping[str, Any] = field(default_factory=dict)
    business_key: str | None = None
    # Submitted values of the none start event's generated form (camunda:formData), checked
    # and typed by engine/language/forms.py; a form that does not pass raises FormInvalid.
    form: Mapping[str, Any] | None = None
    # The authenticated user who starts it, when the caller knows: `camunda:initiator` names the
    # variable it goes to, and expressions read it as `authenticatedUserId`.
    started_by: str | None = None
    tenant_id: str | None = None
    without_tenant: bool = False

    def execute(self, tx: Tx) -> InstanceResult:
        definition = self._definition(tx)
        check(tx, START_INSTANCE, definition=definition.key)
        model = tx.definitions.get(tx.conn, definition.id, definition.key)
        start = model.initial
        if start is None:
            raise BadRequest(_no_default_start(model))
        variables = dict(self.variables)
        if self.form is not None:
            given = {name: infer(value) for name, value in variables.items()}
            variables.update(submit(start.form_fields, self.form, given))
        return start_instance(
            tx,
            definition,
            model,
            start,
            variables,
            self.business_key,
            started_by=self.started_by,
        )

    def _definition(self, tx: Tx) -> definitions.DefinitionRow:
        if self.definition_id is not None:
            found = definitions.by_id(tx.conn, self.definition_id)
            what = f"process definition '{self.definition_id}'"
        elif self.key is not None and self.version is not None:
            tenant = self._tenant(tx, self.key)
            found = definitions.by_version(tx.conn, self.key, self.version, tenant)
            what = f"version {self.version} of process '{self.key}'"
        elif self.key is not None and (self.tenant_id is not None or self.without_tenant):
            tenant = checked_tenant(self.tenant_id, "tenant_id")
            found = definitions.latest_for_tenant(tx.conn, self.key, tenant)
            what = f"process '{self.key}'"
            if self.tenant_id is not None:
                what += f" of tenant '{self.tenant_id}'"
        elif self.key is not None:
            found = _latest_by_key(tx, self.key)
            what = f"process '{self.key}'"
        else:
            raise BadRequest(
                "say which process to start: a key, a key and version, or a definition id"
            )
        if found is None:
            raise NotFound(f"{what} is not deployed")
        return found

    def _tenant(self, tx: Tx, key: str) -> str | None:
        """The tenant whose definitions of `key` are meant."""
        if self.tenant_id is not None or self.without_tenant:
            return checked_tenant(self.tenant_id, "tenant_id")
        tenants = definitions.tenants_of(tx.conn, key)
        if len(tenants) > 1:
            raise _ambiguous(key)
        return tenants[0] if tenants else None


def _latest_by_key(tx: Tx, key: str) -> definitions.DefinitionRow | None:
    """The definition a start by `key` alone takes: the latest of the one tenant the key is
    deployed for (among those the caller sees), or refused when there are several. For a caller
    who sees every tenant, the one remembered from an earlier look-up, on trust that the write
    statement checks (engine/core/definitions.py)."""
    every_tenant = actors.tenant_ids() is None
    if every_tenant:
        remembered = tx.definitions.latest(key)
        if remembered is not None:
            tx.assumed_latest.append(remembered)
            return remembered
    # One statement: the latest of each tenant the key is deployed for; one, or refused.
    latest = definitions.latest_of_each_tenant(tx.conn, key)
    if len(latest) > 1:
        raise _ambiguous(key)
    found = latest[0] if latest else None
    if found is not None and every_tenant and not found.suspended:
        tx.definitions.remember_latest(found)
    return found


def _no_default_start(model: ProcessModel) -> str:
    """Camunda 7's refusal to start, by key or id, a process with several start events and no
    none start event among them."""
    return (
        f"Process '{model.name or model.key}' has no default start activity (e.g. none start "
        "event), hence you cannot use 'startProcessInstanceBy...' but have to start it using "
        "one of the modeled start events (e.g. message start events): initial is null"
    )


def _ambiguous(key: str) -> BadRequest:
    return BadRequest(
        f"Cannot resolve a unique process definition for key '{key}' because it exists "
        "for multiple tenants."
    )


@dataclass(frozen=True)
class _InstanceCommand:
    """A command on one instance: load it, change it (`apply`), write it back; the result is
    the instance's state."""

    result_type: ClassVar[type[Result]] = InstanceResult
    # The one permit `execute` checks once the instance is loaded.
    permits: ClassVar[tuple[Permit, ...]]

    instance_id: UUID

    def execute(self, tx: Tx) -> InstanceResult:
        run = load(tx, self.instance_id)
        (needed,) = self.permits
        check(tx, needed, instance=run.instance.id, definition=run.instance.definition_key)
        self.apply(tx, run)
        persist(tx, run)
        return _result(run)

    def apply(self, tx: Tx, run: InstanceRun) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class CancelInstance(_InstanceCommand):
    name: ClassVar[str] = "CancelInstance"
    permits: ClassVar[tuple[Permit, ...]] = (DELETE_INSTANCE,)

    def apply(self, tx: Tx, run: InstanceRun) -> None:
        if run.instance.state.is_final:
            raise Conflict(
                f"process instance {self.instance_id} is already {run.instance.state.value}",
                instance_id=str(self.instance_id),
            )
        caller = run.instance.super_instance_id
        if caller is not None:
            raise Conflict(
                f"process instance {self.instance_id} was called by process instance {caller}: "
                f"cancel its root instance {run.instance.root_instance_id}, or end the call "
                "activity",
                instance_id=str(self.instance_id),
                super_instance_id=str(caller),
            )
        before = run.instance.state.value
        advance(tx, run).terminate_all(instance_state=InstanceState.TERMINATED)
        _record_state(tx, run, AuditOperation.DELETE, before)


@dataclass(frozen=True)
class SuspendInstance(_InstanceCommand):
    name: ClassVar[str] = "SuspendInstance"
    permits: ClassVar[tuple[Permit, ...]] = (SUSPEND_INSTANCE,)

    def apply(self, tx: Tx, run: InstanceRun) -> None:
        require_running(run)
        suspend_run(tx, run)


@dataclass(frozen=True)
class ResumeInstance(_InstanceCommand):
    name: ClassVar[str] = "ResumeInstance"
    permits: ClassVar[tuple[Permit, ...]] = (SUSPEND_INSTANCE,)

    def apply(self, tx: Tx, run: InstanceRun) -> None:
        if run.instance.state is not InstanceState.SUSPENDED:
            raise Conflict(
                f"process instance {self.instance_id} is {run.instance.state.value}, not Suspended",
                instance_id=str(self.instance_id),
            )
        activate_run(tx, run)


def suspend_run(tx: Tx, run: InstanceRun) -> None:
    """Suspend the loaded active instance: its tokens stay where they are, its jobs are not
    acquired, its external tasks not fetched, its tasks not completed, nothing correlates to
    it, until it is activated."""
    run.instance.move_to(InstanceState.SUSPENDED, tx.now)
    run.emit("instance.suspended")
    _record_state(tx, run, AuditOperation.SUSPEND, InstanceState.ACTIVE.value)


def activate_run(tx: Tx, run: InstanceRun) -> None:
    """Activate the loaded suspended instance: everything it waits for resumes."""
    run.instance.move_to(InstanceState.ACTIVE, tx.now)
    run.emit("instance.resumed")
    for job in run.jobs.values():
        # Rewriting the instance's jobs wakes the job executors: they skipped them while the
        # instance was suspended, and due ones should not wait for the next poll.
        job.dirty = True
    _record_state(tx, run, AuditOperation.ACTIVATE, InstanceState.SUSPENDED.value)


def _record_state(tx: Tx, run: InstanceRun, operation: AuditOperation, before: str) -> None:
    audit.record_on(
        tx,
        run,
        operation,
        AuditEntity.PROCESS_INSTANCE,
        entity_id=str(run.instance.id),
        property="state",
        before=before,
        after=run.instance.state.value,
    )


@dataclass(frozen=True)
class SetVariables(_InstanceCommand):
    """Set `variables` in the instance's root scope, then delete `deletions` from it (a name it
    does not have is no change), in one transaction, as Camunda's updateVariables does; the
    conditional events the changes reach are evaluated in the same transaction."""

    name: ClassVar[str] = "SetVariables"
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE_VARIABLES,)

    variables: Mapping[str, TypedValue]
    deletions: tuple[str, ...] = ()

    def apply(self, tx: Tx, run: InstanceRun) -> None:
        if run.instance.state.is_final:
            raise InstanceEnded(f"process instance {self.instance_id} has ended")
        names = [*self.variables, *self.deletions]
        # The values before and after, read only when someone acts (an entry is written).
        audited = tx.actor is not None
        before = audit.variable_values(run.variables, names) if audited else {}
        for name, value in self.variables.items():
            run.set_variable(name, value)
        for name in self.deletions:
            if name in run.variables:
                run.remove_variable(None, name)
        if audited:
            audit.record_variables(tx, run, before, audit.variable_values(run.variables, names))
        conditions.variables_changed(advance(tx, run))


def start_instance(
    tx: Tx,
    definition: definitions.DefinitionRow,
    model: ProcessModel,
    start: StartEvent,
    variables: Mapping[str, Any],
    business_key: str | None,
    *,
    started_by: str | None = None,
) -> InstanceResult:
    """A new instance of `definition` whose first token enters through `start`, started by the
    user `started_by` (None: unknown, as for a timer or a message)."""
    typed = {name: infer(value) for name, value in variables.items()}
    run = start_run(tx, definition, model, start, typed, business_key, started_by=started_by)
    persist(tx, run)
    return _result(run)


def _result(run: InstanceRun) -> InstanceResult:
    return InstanceResult(
        str(run.instance.id), run.instance.definition_id, run.instance.state.value
    )
