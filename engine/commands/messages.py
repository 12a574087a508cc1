"""Messages are correlated to one waiting instance, else to one message start event (or, with
`all`, to every waiting instance and every message start event); signals reach every
waiting subscription and signal start event. One transaction either way; instances are locked
family by family, the families' roots in id order, so that concurrent deliveries (and batches of
jobs) cannot deadlock each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.commands.common import advance, persist
from engine.commands.deployments import checked_tenant
from engine.commands.family import Family, settle_and_save, triggered_start
from engine.commands.instances import start_instance
from engine.commands.loading import load
from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import START_INSTANCE, UPDATE_INSTANCE, Permit, check
from engine.errors import BadRequest, Conflict, NotFound
from engine.states import AuditEntity, AuditOperation, SubscriptionKind
from engine.store import start_triggers, subscriptions


@dataclass(frozen=True)
class DeliveryResult(Result):
    # One entry per delivery: {"kind": "instance" | "start", "instance_id": ...}
    deliveries: list[dict[str, str]] = field(default_factory=list)


def _deliver(
    tx: Tx,
    matches: list[tuple[UUID, UUID]],
    variables: Mapping[str, Any],
    local_variables: Mapping[str, Any] | None = None,
) -> list[dict[str, str]]:
    delivered: list[dict[str, str]] = []
    by_instance: dict[UUID, list[UUID]] = {}
    for subscription_id, instance_id in matches:
        by_instance.setdefault(instance_id, []).append(subscription_id)
    for instance_id in by_instance:  # in the order `waiting_instances` gives: roots first
        run = load(tx, instance_id)
        check(tx, UPDATE_INSTANCE, instance=instance_id, definition=run.instance.definition_key)
        flow = advance(tx, run)
        for subscription_id in by_instance[instance_id]:
            subscription = run.subscriptions.get(subscription_id)
            if subscription is None or subscription.deleted:
                continue  # consumed by an earlier delivery in this command
            flow.deliver(subscription, variables, local_variables)
            delivered.append({"kind": "instance", "instance_id": str(instance_id)})
        persist(tx, run)
    return delivered


def _start(
    tx: Tx,
    found: start_triggers.StartSubscription,
    variables: Mapping[str, Any],
    business_key: str | None,
) -> dict[str, str]:
    definition, model, start = triggered_start(tx, found)
    check(tx, START_INSTANCE, definition=definition.key)
    result = start_instance(tx, definition, model, start, variables, business_key)
    return {"kind": "start", "instance_id": result.instance_id}


@dataclass(frozen=True)
class CorrelateMessage:
    name: ClassVar[str] = "CorrelateMessage"
    result_type: ClassVar[type[Result]] = DeliveryResult
    # Each instance it reaches: UPDATE; each it starts: CREATE (Camunda's, per correlation).
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE, START_INSTANCE)

    message_name: str
    business_key: str | None = None
    instance_id: UUID | None = None
    correlation_keys: Mapping[str, Any] = field(default_factory=dict)
    variables: Mapping[str, Any] = field(default_factory=dict)
    all: bool = False
    # Locals of the token that receives the message (Camunda's `processVariablesLocal`); a
    # message start event has no such token, so they go to the new instance's root scope.
    local_variables: Mapping[str, Any] = field(default_factory=dict)
    # Only instances and start events of this tenant, or with `without_tenant` of none.
    tenant_id: str | None = None
    without_tenant: bool = False
    # Variables the waiting execution must hold (Camunda's localCorrelationKeys): the
    # subscription's token's own locals, else the variables of its token's scope.
    local_correlation_keys: Mapping[str, Any] = field(default_factory=dict)

    def execute(self, tx: Tx) -> DeliveryResult:
        if self.tenant_id is not None and self.without_tenant:
            raise BadRequest("say a tenant id or without a tenant, not both", field="tenantId")
        checked_tenant(self.tenant_id, "tenantId")
        waiting = subscriptions.waiting_instances(
            tx.conn,
            SubscriptionKind.MESSAGE,
            self.message_name,
            business_key=self.business_key,
            instance_id=self.instance_id,
            correlation_keys=self.correlation_keys,
            tenant_id=self.tenant_id,
            without_tenant=self.without_tenant,
            local_keys=self.local_correlation_keys,
        )
        starts: list[start_triggers.StartSubscription] = []
        # As Camunda's correlation: the waiting instances first; the message start events (which
        # have no instance and no variables to match yet) when none waits, or with `all` too.
        if (
            (self.all or not waiting)
            and self.instance_id is None
            and not self.correlation_keys
            and not self.local_correlation_keys
        ):
            starts = start_triggers.find(
                tx.conn,
                SubscriptionKind.MESSAGE,
                self.message_name,
                tenant_id=self.tenant_id,
                without_tenant=self.without_tenant,
            )
        if not waiting and not starts:
            raise self._no_match()
        found = len(waiting) or len(starts)
        if found > 1 and not self.all:
            what = "waiting instances' subscriptions" if waiting else "message start events"
            raise Conflict(
                f"message '{self.message_name}' matches {found} {what}{self._filters()}; "
                "correlate with more keys, or to all of them",
                message_name=self.message_name,
                matches=found,
            )
        delivered = _deliver(tx, waiting, self.variables, self.local_variables)
        if not delivered and not starts:
            # Each subscription found was gone once its instance was locked: another trigger
            # came first (an event-based gateway's other event, a completed task).
            raise self._no_match()
        for start in starts:
            values = {**self.variables, **self.local_variables}
            delivered.append(_start(tx, start, values, self.business_key))
        _audit(tx, "messageName", self.message_name, delivered, self.variables)
        return DeliveryResult(delivered)

    def _no_match(self) -> NotFound:
        return NotFound(
            f"message '{self.message_name}' matches no waiting instance and no message start "
            "event" + self._filters(),
            message_name=self.message_name,
        )

    def _filters(self) -> str:
        parts = []
        if self.business_key is not None:
            parts.append(f"business key '{self.business_key}'")
        if self.instance_id is not None:
            parts.append(f"instance {self.instance_id}")
        if self.correlation_keys:
            parts.append(
                "correlation keys "
                + ", ".join(f"{k}={v!r}" for k, v in self.correlation_keys.items())
            )
        if self.local_correlation_keys:
            parts.append(
                "local correlation keys "
                + ", ".join(f"{k}={v!r}" for k, v in self.local_correlation_keys.items())
            )
        return f" (with {', '.join(parts)})" if parts else ""


@dataclass(frozen=True)
class BroadcastSignal:
    name: ClassVar[str] = "BroadcastSignal"
    result_type: ClassVar[type[Result]] = DeliveryResult
    permits: ClassVar[tuple[Permit, ...]] = (UPDATE_INSTANCE, START_INSTANCE)

    signal_name: str
    variables: Mapping[str, Any] = field(default_factory=dict)
    # Only subscriptions and start events of this tenant, or with `without_tenant` of none.
    tenant_id: str | None = None
    without_tenant: bool = False

    def execute(self, tx: Tx) -> DeliveryResult:
        if self.tenant_id is not None and self.without_tenant:
            raise BadRequest("say a tenant id or without a tenant, not both", field="tenantId")
        checked_tenant(self.tenant_id, "tenantId")
        # The same broadcast as a signal throw event's (engine/commands/family.py), from none.
        family = Family(tx, ())
        delivered = family.broadcast(
            self.signal_name, self.variables, tenant=(self.tenant_id, self.without_tenant)
        )
        for delivery in delivered:
            # Before anything is written: a refusal rolls the whole broadcast back.
            instance = family.runs[UUID(delivery["instance_id"])].instance
            starts = delivery["kind"] == "start"
            needed = START_INSTANCE if starts else UPDATE_INSTANCE
            check(tx, needed, instance=instance.id, definition=instance.definition_key)
        settle_and_save(tx, family)
        _audit(tx, "signalName", self.signal_name, delivered, self.variables)
        return DeliveryResult(delivered)


def _audit(
    tx: Tx,
    property: str,
    name: str,
    delivered: list[dict[str, str]],
    variables: Mapping[str, Any],
) -> None:
    """A message or signal sent through the console or an API: one entry, on the instance when
    exactly one received it or was started by it (a throw event's send, inside the engine, acts
    for nobody). A signal has no operation of its own in Camunda's log; it is recorded as the
    nearest, CorrelateMessage, with the property `signalName`."""
    instances = {d["instance_id"] for d in delivered}
    audit.record(
        tx,
        AuditOperation.CORRELATE_MESSAGE,
        AuditEntity.PROCESS_INSTANCE,
        instance_id=UUID(next(iter(instances))) if len(instances) == 1 else None,
        property=property,
        after=name,
        details={"deliveries": delivered, "variables": sorted(variables)},
    )
