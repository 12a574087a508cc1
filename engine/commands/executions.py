"""Commands on Camunda's executions (engine/store/executions.py says what they are): signal a
waiting one, deliver a message to one, change its local variables, or open a custom incident on
it. Each loads the execution's instance, checks its permit, and writes in one transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import advance, persist, persist_audited, require_running
from engine.commands.incidents import ENGINE_INCIDENT_TYPES
from engine.commands.loading import load
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import UPDATE_INSTANCE, UPDATE_INSTANCE_VARIABLES, Permit, check
from engine.core.runtime import IncidentRow, InstanceRun, Subscription, Token
from engine.db.ids import new_id
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.json_input import text_problem
from engine.language.variables import TypedValue
from engine.semantics import conditions
from engine.states import AuditEntity, AuditOperation, IncidentState, SubscriptionKind
from engine.store import executions as store

MAX_INCIDENT_TEXT = 4000


@dataclass(frozen=True)
class ExecutionResult(Result):
    execution_id: str
    instance_id: str
    state: str


def load_execution(tx: Tx, execution_id: UUID, permit: Permit) -> InstanceRun:
    """The locked instance of the execution, once the caller's `permit` on it is checked."""
    instance_id = store.instance_of(tx.conn, execution_id)
    if instance_id is None:
        raise NotFound(f"execution {execution_id} does not exist", execution_id=str(execution_id))
    run = load(tx, instance_id)
    if run.instance.state.is_final:
        raise NotFound(f"execution {execution_id} does not exist", execution_id=str(execution_id))
    check(tx, permit, instance=run.instance.id, definition=run.instance.definition_key)
    return run


def activity_token(run: InstanceRun, execution_id: UUID) -> Token:
    """The token the execution stands at an activity with: the token itself, or for the
    instance's own execution its one innermost live token (Camunda's process instance execution
    is at the activity while the instance runs on one path)."""
    token = run.tokens.get(execution_id)
    if token is not None and token.is_live:
        return token
    if execution_id != run.instance.id:
        raise NotFound(f"execution {execution_id} does not exist", execution_id=str(execution_id))
    live = run.live_tokens()
    scopes = {t.scope_id for t in live}
    leaves = [t for t in live if t.id not in scopes]
    if len(leaves) == 1:
        return leaves[0]
    if not leaves:
        raise Conflict(
            f"execution {execution_id} is not at an activity", execution_id=str(execution_id)
        )
    raise Conflict(
        f"process instance {execution_id} runs {len(leaves)} executions at once ("
        + ", ".join(f"{t.id} at '{t.node_id}'" for t in leaves)
        + "): name one of them",
        execution_id=str(execution_id),
    )


@dataclass(frozen=True)
class SignalExecution:
    """Camunda's RuntimeService.signal: the waiting execution goes on as if its wait were over
    (a receive task with or without a message, an intermediate catch event, a user task, an
    external task), `variables` set first as Camunda's setVariables does from it."""

    name: ClassVar[str] = "SignalExecution"
    result_type: ClassVar[type[Result]] = ExecutionResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    execution_id: UUID
    variables: Mapping[str, TypedValue] = field(default_factory=dict)
    # Only an execution of this instance (the Python API's instance handle): another's is not
    # found.
    instance_id: UUID | None = None

    def execute(self, tx: Tx) -> ExecutionResult:
        run = load_execution(tx, self.execution_id, UPDATE_INSTANCE)
        if self.instance_id is not None and run.instance.id != self.instance_id:
            raise NotFound(
                f"process instance {self.instance_id} has no execution {self.execution_id}"
            )
        require_running(run)
        token = activity_token(run, self.execution_id)
        node_id = token.node_id
        for name, value in self.variables.items():
            run.set_visible(token, name, value)
        advance(tx, run).signal(token)
        persist_audited(
            tx,
            run,
            AuditOperation.SIGNAL,
            AuditEntity.PROCESS_INSTANCE,
            entity_id=str(run.instance.id),
            property="executionId",
            after=str(token.id),
            details={"node": node_id, "variables": sorted(self.variables)},
        )
        return _result(run, self.execution_id)


@dataclass(frozen=True)
class TriggerExecutionMessage:
    """Camunda's RuntimeService.messageEventReceived: the message `message_name` reaches the
    execution's own subscription to it, and no other."""

    name: ClassVar[str] = "TriggerExecutionMessage"
    result_type: ClassVar[type[Result]] = ExecutionResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    execution_id: UUID
    message_name: str
    variables: Mapping[str, TypedValue] = field(default_factory=dict)

    def execute(self, tx: Tx) -> ExecutionResult:
        run = load_execution(tx, self.execution_id, UPDATE_INSTANCE)
        require_running(run)
        subscription = _own_subscription(
            run, self.execution_id, SubscriptionKind.MESSAGE, self.message_name
        )
        token = run.tokens.get(subscription.token_id) if subscription.token_id else None
        for name, value in self.variables.items():
            run.set_visible(token, name, value)
        advance(tx, run).deliver(subscription, None)
        persist_audited(
            tx,
            run,
            AuditOperation.CORRELATE_MESSAGE,
            AuditEntity.PROCESS_INSTANCE,
            entity_id=str(run.instance.id),
            property="messageName",
            after=self.message_name,
            details={"execution": str(self.execution_id), "variables": sorted(self.variables)},
        )
        return _result(run, self.execution_id)


@dataclass(frozen=True)
class TriggerExecutionSignal:
    """Camunda's RuntimeService.signalEventReceived(signalName, executionId): the signal
    `signal_name` reaches the execution's own subscription to it, and no other (a broadcast
    reaches every subscription; engine/commands/messages.py)."""

    name: ClassVar[str] = "TriggerExecutionSignal"
    result_type: ClassVar[type[Result]] = ExecutionResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    execution_id: UUID
    signal_name: str
    variables: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> ExecutionResult:
        run = load_execution(tx, self.execution_id, UPDATE_INSTANCE)
        require_running(run)
        subscription = _own_subscription(
            run, self.execution_id, SubscriptionKind.SIGNAL, self.signal_name
        )
        # As a broadcast delivers it: the variables go with the signal.
        advance(tx, run).deliver(subscription, self.variables)
        persist_audited(
            tx,
            run,
            AuditOperation.CORRELATE_MESSAGE,
            AuditEntity.PROCESS_INSTANCE,
            entity_id=str(run.instance.id),
            property="signalName",
            after=self.signal_name,
            details={"execution": str(self.execution_id), "variables": sorted(self.variables)},
        )
        return _result(run, self.execution_id)


def _own_subscription(
    run: InstanceRun, execution_id: UUID, kind: SubscriptionKind, name: str
) -> Subscription:
    """The execution's own live subscription of `kind` to `name`; NotFound naming both."""
    for s in run.subscriptions.values():
        if (
            s.kind == kind
            and s.name == name
            and not s.deleted
            and (s.token_id or run.instance.id) == execution_id
        ):
            return s
    raise NotFound(
        f"execution {execution_id} has no subscription to the {kind.value} '{name}'",
        execution_id=str(execution_id),
        **{f"{kind.value}_name": name},
    )


@dataclass(frozen=True)
class SetExecutionVariables:
    """Set (`modifications`), then delete (`deletions`), variables local to an execution: the
    instance's root scope for the instance's own execution, a token's locals for a token's.
    The conditional events the changes reach are evaluated in the same transaction."""

    name: ClassVar[str] = "SetExecutionVariables"
    result_type: ClassVar[type[Result]] = ExecutionResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE_VARIABLES,)

    execution_id: UUID
    modifications: Mapping[str, TypedValue] = field(default_factory=dict)
    deletions: tuple[str, ...] = ()

    def execute(self, tx: Tx) -> ExecutionResult:
        run = load_execution(tx, self.execution_id, UPDATE_INSTANCE_VARIABLES)
        root = self.execution_id == run.instance.id
        if not root and self.execution_id not in run.tokens:
            raise NotFound(f"execution {self.execution_id} does not exist")
        owner = None if root else self.execution_id
        scope = run.variables if owner is None else run.locals.get(owner, {})
        names = [*self.modifications, *self.deletions]
        audited = tx.actor is not None
        before = audit.variable_values(dict(scope), names) if audited else {}
        for name, value in self.modifications.items():
            if owner is None:
                run.set_variable(name, value)
            else:
                run.set_local(owner, name, value)
        for name in self.deletions:
            if name in (run.variables if owner is None else run.locals.get(owner, {})):
                run.remove_variable(owner, name)
        if audited:
            after = run.variables if owner is None else run.locals.get(owner, {})
            audit.record_variables(
                tx,
                run,
                before,
                audit.variable_values(dict(after), names),
                entity_id=str(self.execution_id),
                details={"local": True},
            )
        conditions.variables_changed(advance(tx, run))
        persist(tx, run)
        return _result(run, self.execution_id)


@dataclass(frozen=True)
class IncidentCreated(Result):
    incident_id: str
    instance_id: str


@dataclass(frozen=True)
class CreateIncident:
    """Camunda's RuntimeService.createIncident: a custom incident of `incident_type` on the
    execution's activity, with its `configuration` and `message`. It stops nothing: the
    execution waits or runs on as before, and the incident is resolved by hand (or goes when
    the execution leaves its activity). The engine's own types are refused."""

    name: ClassVar[str] = "CreateIncident"
    result_type: ClassVar[type[Result]] = IncidentCreated
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE,)

    execution_id: UUID
    incident_type: str
    configuration: str | None = None
    message: str | None = None

    def execute(self, tx: Tx) -> IncidentCreated:
        self._check_texts()
        run = load_execution(tx, self.execution_id, UPDATE_INSTANCE)
        token = activity_token(run, self.execution_id)
        incident = IncidentRow(
            id=new_id(),
            type=self.incident_type,
            token_id=token.id,
            node_id=token.node_id,
            message=self.message or "",
            state=IncidentState.OPEN,
            created_at=tx.now,
            configuration=self.configuration,
            is_new=True,
        )
        run.open_incident(incident)
        persist_audited(
            tx,
            run,
            AuditOperation.CREATE_INCIDENT,
            AuditEntity.INCIDENT,
            entity_id=str(incident.id),
            property="incidentType",
            after=self.incident_type,
            details={"node": token.node_id, "execution": str(token.id)},
        )
        return IncidentCreated(str(incident.id), str(run.instance.id))

    def _check_texts(self) -> None:
        kind = self.incident_type
        if not kind or not kind.strip():
            raise BadRequest("incidentType is null", field="incidentType")
        if len(kind) > 40 or text_problem(kind):
            raise BadRequest(
                "incidentType must be at most 40 printable characters", field="incidentType"
            )
        if kind in ENGINE_INCIDENT_TYPES:
            raise BadRequest(
                f"incidentType '{kind}' is the engine's own: a custom incident takes another",
                field="incidentType",
            )
        for name, text in (("configuration", self.configuration), ("message", self.message)):
            if text is not None and (len(text) > MAX_INCIDENT_TEXT or text_problem(text)):
                raise BadRequest(
                    f"{name} must be at most {MAX_INCIDENT_TEXT} printable characters",
                    field=name,
                )


def _result(run: InstanceRun, execution_id: UUID) -> ExecutionResult:
    return ExecutionResult(str(execution_id), str(run.instance.id), run.instance.state.value)
