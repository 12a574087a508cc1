"""The instances one command changes, and the effects an advance asks of other instances.

A command works on the instance it loaded; its advance may reach beyond it (engine/core/effects.py):
start a called instance, resume the caller of one that completed, end what a cancelled call
activity called, throw an error to a caller, broadcast a signal. `Family.settle` applies them,
first in, first out, in the command's transaction, loading the other instances it needs (each
locked after its family's root, see engine/store/runs.py) and advancing them in turn, until no
effect is left. Then every instance the command touched is written with one statement.

Starting a called instance and resuming its caller add work to the command, not round trips of
their own: a call activity whose called process runs straight through completes in the
transaction that reached it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from uuid import UUID

from engine.commands.loading import load, model_of, new_advance
from engine.core.effects import (
    CalledCompleted,
    CalledInstanceEnds,
    Effect,
    SignalThrown,
    StartCalled,
    ThrownToCaller,
)
from engine.core.executor import Tx
from engine.core.runtime import InstanceRow, InstanceRun
from engine.db.ids import new_id
from engine.errors import BadRequest, NeedsTransaction, NotFound, Suspended
from engine.language.variables import TypedValue, infer
from engine.model import CallActivity, ProcessModel, StartEvent
from engine.semantics.calls import called_outputs
from engine.states import InstanceState, SubscriptionKind, TokenState
from engine.store import definitions, start_triggers, subscriptions
from engine.store.persist import save_runs
from engine.store.runs import called_instance

# How many instances one command may start through call activities and signals: a process that
# calls itself without end fails the command instead of growing without bound.
MAX_STARTED = 1000


class Family:
    def __init__(self, tx: Tx, runs: Iterable[InstanceRun]) -> None:
        self.tx = tx
        self.runs: dict[UUID, InstanceRun] = {run.instance.id: run for run in runs}
        self.started = 0
        # The definitions call activities named, by what picked them: the iterations of a
        # multi-instance call activity look their called process up once per command.
        self.called: dict[tuple[Any, ...], definitions.DefinitionRow] = {}

    def settle(self) -> list[InstanceRun]:
        """Apply every effect, those the applied ones record included; the runs to write."""
        while True:
            pending = next((run for run in self.runs.values() if run.effects), None)
            if pending is None:
                return list(self.runs.values())
            if self.tx.optimistic:
                raise NeedsTransaction("the command reaches another instance")
            self._apply(pending, pending.effects.pop(0))

    def _apply(self, run: InstanceRun, effect: Effect) -> None:
        if isinstance(effect, StartCalled):
            self._start_called(run, effect)
        elif isinstance(effect, CalledCompleted):
            self._resume_caller(run)
        elif isinstance(effect, CalledInstanceEnds):
            self._end_called(run, effect.token_id)
        elif isinstance(effect, ThrownToCaller):
            self._throw_to_caller(run, effect)
        elif isinstance(effect, SignalThrown):
            self.broadcast(effect.name, effect.variables, (run, effect.waiting))

    def run_of(self, instance_id: UUID) -> InstanceRun:
        """The instance `instance_id`: the one this command holds, or loaded and locked now."""
        run = self.runs.get(instance_id)
        if run is None:
            run = load(self.tx, instance_id)
            self.runs[instance_id] = run
        return run

    def new_run(
        self,
        definition: definitions.DefinitionRow,
        model: ProcessModel,
        start: StartEvent,
        variables: Mapping[str, TypedValue],
        business_key: str | None,
        caller: tuple[InstanceRun, UUID] | None = None,
    ) -> InstanceRun:
        """A new instance started through `start` (called by the token of `caller`)."""
        self.started += 1
        if self.started > MAX_STARTED:
            raise BadRequest(
                f"the command would start more than {MAX_STARTED} instances (a process that "
                "calls itself without end?)"
            )
        run = start_run(self.tx, definition, model, start, variables, business_key, caller=caller)
        self.runs[run.instance.id] = run
        return run

    # --- call activities ------------------------------------------------------------------

    def _start_called(self, run: InstanceRun, effect: StartCalled) -> None:
        token = run.tokens[effect.token_id]
        if not token.is_live:
            return  # ended by an effect applied before this one
        definition = self._called_definition(run, effect)
        model = self.tx.definitions.get(self.tx.conn, definition.id, definition.key)
        start = model.initial  # as a start by key: the none start, else the only start event
        if start is None:
            raise BadRequest(
                f"call activity '{effect.activity_id}': process '{definition.key}' has no "
                "default start event (a none start event, or one start event only) to be called "
                "through",
                node_id=effect.activity_id,
            )
        called = self.new_run(
            definition,
            model,
            start,
            effect.variables,
            effect.business_key,
            caller=(run, token.id),
        )
        visit = run.visit(token.visit_id) if token.visit_id is not None else None
        if visit is not None:
            visit.called_instance_id = called.instance.id

    def _called_definition(
        self, run: InstanceRun, effect: StartCalled
    ) -> definitions.DefinitionRow:
        # The deployment binding picks from the calling instance's own deployment.
        own = run.instance.definition_id if effect.binding == "deployment" else None
        tenant = called_tenant(run, effect)
        picked = (effect.key, effect.binding, effect.version, effect.version_tag, own, tenant)
        found = self.called.get(picked)
        if found is None:
            found = self.called[picked] = self._look_up(run, effect)
        return found

    def _look_up(self, run: InstanceRun, effect: StartCalled) -> definitions.DefinitionRow:
        conn, key = self.tx.conn, effect.key
        tenant = called_tenant(run, effect)
        found: definitions.DefinitionRow | None
        if effect.binding == "deployment":
            own = definitions.by_id(conn, run.instance.definition_id)
            assert own is not None
            found = definitions.latest_in_deployment(conn, key, own.deployment_id)
            what = f"process '{key}' is not deployed with '{own.id}'"
        elif effect.binding == "version":
            assert effect.version is not None
            found = definitions.by_version(conn, key, effect.version, tenant)
            what = f"version {effect.version} of process '{key}' is not deployed"
        elif effect.binding == "versionTag":
            assert effect.version_tag is not None
            found = definitions.latest_with_tag(conn, key, effect.version_tag, tenant)
            what = f"process '{key}' has no version tagged '{effect.version_tag}'"
        else:
            # As Camunda's default: the called definition of the caller's own tenant (or of the
            # one the call activity names).
            found = definitions.latest_for_tenant(conn, key, tenant)
            what = f"process '{key}' is not deployed"
            if tenant is not None:
                what += f" for tenant '{tenant}'"
        if found is None:
            raise NotFound(
                f"call activity '{effect.activity_id}': {what}",
                node_id=effect.activity_id,
                called_element=key,
            )
        return found

    def _caller(self, run: InstanceRun) -> tuple[InstanceRun, Any] | None:
        """The caller of `run` and its token, while that token still waits for `run`."""
        instance = run.instance
        if instance.super_instance_id is None or instance.super_token_id is None:
            return None
        caller = self.run_of(instance.super_instance_id)
        token = caller.tokens.get(instance.super_token_id)
        if caller.instance.state.is_final or token is None or token.state != TokenState.WAITING:
            return None
        return caller, token

    def _resume_caller(self, run: InstanceRun) -> None:
        found = self._caller(run)
        if found is None:
            return
        caller, token = found
        advance = new_advance(self.tx, caller, model_of(self.tx, caller))
        node = advance.model.node(token.node_id)
        assert isinstance(node, CallActivity)
        variables, local_variables = called_outputs(node, run)
        advance.resume(token, variables, local_variables)

    def _end_called(self, run: InstanceRun, token_id: UUID) -> None:
        """The token `token_id` of `run` left its call activity early: what it called ends. As
        in Camunda, it ends internally terminated when `run`'s own flow left the call activity
        (an interrupting boundary or event subprocess, a terminate end event, an internal end of
        its own), and as `run` did when a request cancelled `run`."""
        cancelled = run.instance.state is InstanceState.TERMINATED
        internally = not cancelled or run.instance.internally_terminated
        called = [
            other
            for other in self.runs.values()
            if other.instance.super_token_id == token_id and not other.instance.state.is_final
        ]
        if not called:
            called_id = called_instance(self.tx.conn, run.instance.id, token_id)
            if called_id is None:
                return
            called = [self.run_of(called_id)]
        for other in called:
            self._terminate(other, internally=internally)

    def _terminate(self, run: InstanceRun, *, internally: bool) -> None:
        """`run` ends Terminated: `internally`, by its caller's flow, else by a request."""
        if run.instance.state.is_final:
            return
        run.instance.internally_terminated = internally
        advance = new_advance(self.tx, run, model_of(self.tx, run))
        advance.terminate_all(instance_state=InstanceState.TERMINATED)

    def _throw_to_caller(self, run: InstanceRun, effect: ThrownToCaller) -> None:
        found = self._caller(run)
        if found is None:
            return
        caller, token = found
        advance = new_advance(self.tx, caller, model_of(self.tx, caller))
        if effect.kind == "error":
            advance.throw_error(token, effect.code, effect.message)
            # The error left the called instance: it ends, whether its caller caught the error
            # (an interrupting catch ends it anyway) or not.
            self._terminate(run, internally=True)
        else:
            # The called instance goes on unless an interrupting catch ends its call activity.
            advance.throw_escalation(token, effect.code)

    # --- signals ----------------------------------------------------------------------------

    def broadcast(
        self,
        name: str,
        variables: Mapping[str, Any],
        thrower: tuple[InstanceRun, frozenset[UUID]] | None = None,
        *,
        tenant: tuple[str | None, bool] = (None, False),
    ) -> list[dict[str, str]]:
        """Every subscription waiting for the signal `name` and every signal start event receive
        it: those of instances this command holds from memory, the others loaded now. Of the
        `thrower`'s own, only those that waited when it threw the signal. One entry per delivery:
        {"kind": "instance" | "start", "instance_id": ...}. `tenant` (a tenant id, or whether
        only those without a tenant) narrows the subscriptions loaded now, and a request's
        signal (no `thrower`) reaches only the tenants its principal sees. As Camunda's, a
        signal a process throws reaches its own tenant's and those of no tenant (a thrower of no
        tenant: only those)."""
        tenant_id, without_tenant = tenant
        or_none = False
        if thrower is not None:
            tenant_id, or_none = thrower[0].instance.tenant_id, True
            without_tenant = tenant_id is None
        narrowed = thrower is None
        delivered: list[dict[str, str]] = []
        here = [
            (run, subscription.id)
            for run in list(self.runs.values())
            if run.instance.state is InstanceState.ACTIVE
            for subscription in run.subscriptions.values()
            if subscription.kind == SubscriptionKind.SIGNAL
            and subscription.name == name
            and not subscription.deleted
            and (thrower is None or run is not thrower[0] or subscription.id in thrower[1])
            and _of_tenant(run.instance.tenant_id, tenant_id, without_tenant, or_none)
        ]
        elsewhere: dict[UUID, list[UUID]] = {}
        for subscription_id, instance_id in subscriptions.waiting_instances(
            self.tx.conn,
            SubscriptionKind.SIGNAL,
            name,
            tenant_id=tenant_id,
            without_tenant=without_tenant,
            or_none=or_none,
            narrowed=narrowed,
        ):
            if instance_id not in self.runs:
                elsewhere.setdefault(instance_id, []).append(subscription_id)
        for instance_id in elsewhere:  # roots first, in id order (see `waiting_instances`)
            run = self.run_of(instance_id)
            here.extend((run, subscription_id) for subscription_id in elsewhere[instance_id])
        for run, subscription_id in here:
            subscription = run.subscriptions.get(subscription_id)
            if subscription is None or subscription.deleted or run.instance.state.is_final:
                continue  # consumed by a delivery before this one
            new_advance(self.tx, run, model_of(self.tx, run)).deliver(subscription, variables)
            delivered.append({"kind": "instance", "instance_id": str(run.instance.id)})
        typed = {key: infer(value) for key, value in variables.items()}
        for found in start_triggers.find(
            self.tx.conn,
            SubscriptionKind.SIGNAL,
            name,
            tenant_id=tenant_id,
            without_tenant=without_tenant,
            or_none=or_none,
            narrowed=narrowed,
        ):
            definition, model, start = triggered_start(self.tx, found)
            started = self.new_run(definition, model, start, typed, None)
            delivered.append({"kind": "start", "instance_id": str(started.instance.id)})
        return delivered


def _of_tenant(value: str | None, tenant_id: str | None, without: bool, or_none: bool) -> bool:
    """Whether a row of tenant `value` is one `Where.tenant` keeps with these arguments."""
    if tenant_id is not None:
        return value == tenant_id or (or_none and value is None)
    return value is None if without else True


def called_tenant(run: InstanceRun, effect: StartCalled) -> str | None:
    """The tenant whose definitions a call activity calls: the one it names
    (`camunda:calledElementTenantId`; None: of no tenant), else the calling instance's."""
    return effect.tenant_id if effect.tenant_given else run.instance.tenant_id


def triggered_start(
    tx: Tx, found: start_triggers.StartSubscription
) -> tuple[definitions.DefinitionRow, ProcessModel, StartEvent]:
    """The definition, model and start event a message or signal start subscription names."""
    definition = definitions.by_id(tx.conn, found.definition_id)
    assert definition is not None
    model = tx.definitions.get(tx.conn, definition.id, definition.key)
    start = model.node(found.node_id)
    assert isinstance(start, StartEvent)
    return definition, model, start


def settle_and_save(tx: Tx, family: Family) -> None:
    """Apply what `family`'s runs still ask of others, then queue the write of every instance
    the command touched (nothing when it touched none)."""
    runs = family.settle()
    if runs:
        tx.announcements |= save_runs(tx.conn, runs, tx.assumed_latest)


def start_run(
    tx: Tx,
    definition: definitions.DefinitionRow,
    model: ProcessModel,
    start: StartEvent,
    variables: Mapping[str, TypedValue],
    business_key: str | None,
    *,
    started_by: str | None = None,
    caller: tuple[InstanceRun, UUID] | None = None,
) -> InstanceRun:
    """A new instance of `definition` whose first token enters through `start`, started by the
    user `started_by` (None: unknown, as for a timer or a message), or called by the token of
    `caller` (it joins the caller's family). Not yet written: see `persist`. A suspended
    definition starts nothing, however asked."""
    if definition.suspended:
        raise Suspended(
            f"Cannot start process instance. Process definition {definition.name or definition.key}"
            f" (id = {definition.id}) is suspended",
            definition_id=definition.id,
        )
    super_instance_id = super_token_id = root_instance_id = None
    if caller is not None:
        caller_run, super_token_id = caller
        super_instance_id = caller_run.instance.id
        root_instance_id = caller_run.instance.root_instance_id
    instance = InstanceRow(
        id=new_id(),
        definition_id=definition.id,
        definition_key=definition.key,
        business_key=business_key,
        state=InstanceState.CREATED,
        version=0,
        started_at=tx.now,
        super_instance_id=super_instance_id,
        super_token_id=super_token_id,
        root_instance_id=root_instance_id,
        tenant_id=definition.tenant_id,
        is_new=True,
    )
    run = InstanceRun(instance=instance, now=tx.now, authenticated_user_id=started_by)
    for name, value in variables.items():
        run.set_variable(name, value)
    if start.initiator is not None:
        # As Camunda does: the initiator variable is set (null when the starter is unknown).
        run.set_variable(start.initiator, infer(started_by))
    new_advance(tx, run, model).start(start)
    return run
