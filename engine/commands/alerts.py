"""Stuck-instance alerts: thresholds per node of a process definition key, and the raising of
each crossing exactly once.

A threshold says how long a token may wait at a node (its visit stays open: a user task, a
receive task, an external task, a timer or message catch, a join waiting, a call or subprocess
running) or an incident stay open there, before the instance is stuck. It belongs to a
definition KEY and applies to every version of it; one per key, node and kind. An operator sets
and removes them (UPDATE or UPDATE_INSTANCE on the definition, audited); a model declares them
as camunda:properties (`interlock.alert.waiting`, `interlock.alert.incident`;
engine/language/alerts.py), written when
the version is deployed: the latest deployed version's declarations replace the previous
model-declared ones of the key, and leave a threshold an operator set alone.

Which instances are past a threshold is read when asked (engine/queries/alerts.py), so an alert
shows as soon as time passes. Raising is what happens once per crossing: `RaiseAlerts`, run by
the alert watch (engine/loops/alerts.py) every few seconds and at the next known crossing,
records each open visit or incident that crossed a threshold in `alert_crossing` with its
`alert.raised` outbox row, in one transaction: the row's unique key (threshold, visit or
incident) makes a second tick, another replica or a restart raise nothing again, and the outbox
row is what webhooks deliver and what wakes the console's live pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import ClassVar
from uuid import UUID

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import ENGINE_WORK, SET_ALERT, Permit
from engine.core.permits import check as check_permit
from engine.errors import BadRequest, ModelError, NotFound
from engine.language.alerts import declared_thresholds, threshold_seconds
from engine.model import ProcessModel
from engine.schema import OUTBOX_CHANNEL
from engine.states import AlertKind, AlertSource, AuditEntity, AuditOperation
from engine.store import alerts as store
from engine.store import definitions as definition_store

# Crossings one tick records per threshold at most; the rest the next tick.
RAISE_BATCH = 500


@dataclass(frozen=True)
class ThresholdResult(Result):
    threshold_id: str


def _kind(text: str) -> AlertKind:
    try:
        return AlertKind(text)
    except ValueError:
        raise BadRequest(
            f"field 'kind' must be one of {', '.join(AlertKind)}, not '{text}'", field="kind"
        ) from None


@dataclass(frozen=True)
class SetAlertThreshold:
    """Alert when a token waits at (kind waiting), or an incident stays open at (kind
    incident), the node `node_id` of any version of `definition_key` longer than `duration`
    (ISO 8601: PT2H, PT15M, P1D). Replaces the threshold of that node and kind."""

    name: ClassVar[str] = "SetAlertThreshold"
    permits: ClassVar[tuple[Permit, ...]] = (SET_ALERT,)
    result_type: ClassVar[type[Result]] = ThresholdResult

    definition_key: str
    node_id: str
    kind: str
    duration: str

    def execute(self, tx: Tx) -> ThresholdResult:
        check_permit(tx, SET_ALERT, definition=self.definition_key)
        kind = _kind(self.kind)
        text = self.duration.strip()
        try:
            seconds = threshold_seconds(text)
        except ValueError as exc:
            raise BadRequest(f"field 'duration': {exc}", field="duration") from None
        row = definition_store.latest(tx.conn, self.definition_key)
        if row is None:
            raise NotFound(f"process definition '{self.definition_key}' does not exist")
        model = tx.definitions.get(tx.conn, row.id, row.key)
        if not model.has_node(self.node_id):
            raise BadRequest(
                f"field 'node_id': version {row.version} of '{row.key}' has no node "
                f"'{self.node_id}'",
                field="node_id",
            )
        before = store.find_by_node(tx.conn, row.key, self.node_id, kind)
        threshold_id = store.put(
            tx.conn, row.key, self.node_id, kind, text, seconds, AlertSource.CONSOLE, tx.now
        )
        assert threshold_id is not None
        audit.record(
            tx,
            AuditOperation.UPDATE if before else AuditOperation.CREATE,
            AuditEntity.PROCESS_DEFINITION,
            entity_id=row.key,
            definition_key=row.key,
            property=f"alert.{kind.value}:{self.node_id}",
            before=before.duration if before else None,
            after=text,
        )
        return ThresholdResult(str(threshold_id))


@dataclass(frozen=True)
class RemoveAlertThreshold:
    """Remove the threshold `threshold_id` (a model-declared one comes back when a version
    declaring it is deployed again)."""

    name: ClassVar[str] = "RemoveAlertThreshold"
    permits: ClassVar[tuple[Permit, ...]] = (SET_ALERT,)
    result_type: ClassVar[type[Result]] = ThresholdResult

    threshold_id: UUID

    def execute(self, tx: Tx) -> ThresholdResult:
        found = store.find(tx.conn, self.threshold_id)
        if found is None:
            raise NotFound(f"alert threshold {self.threshold_id} does not exist")
        check_permit(tx, SET_ALERT, definition=found.definition_key)
        store.delete(tx.conn, found.id)
        audit.record(
            tx,
            AuditOperation.DELETE,
            AuditEntity.PROCESS_DEFINITION,
            entity_id=found.definition_key,
            definition_key=found.definition_key,
            property=f"alert.{found.kind.value}:{found.node_id}",
            before=found.duration,
        )
        return ThresholdResult(str(found.id))


def declare_from_model(tx: Tx, key: str, model: ProcessModel) -> None:
    """The thresholds the newly deployed latest version of `key` declares, in the deployment's
    transaction: they replace the key's model-declared ones (an operator's stay)."""
    declared: list[tuple[str, AlertKind]] = []
    for node in model.nodes:
        try:
            found = declared_thresholds(node.properties)
        except ValueError as exc:
            # The parser checks flow nodes' properties where it reads them (engine/bpmn/alerts.py);
            # this refuses any other element's the same way.
            raise ModelError(str(exc), line=node.line, element_id=node.id) from None
        for kind, text, seconds in found:
            store.put(
                tx.conn,
                key,
                node.id,
                kind,
                text,
                seconds,
                AlertSource.MODEL,
                tx.now,
                keep_console=True,
            )
            declared.append((node.id, kind))
    store.remove_model_declared(tx.conn, key, declared)
    store.mark_shared(tx.conn, key, [node.id for node in model.nodes])


@dataclass(frozen=True)
class RaisedResult(Result):
    raised: int
    # When the next known crossing falls (ISO 8601), or "" when no open visit or incident is
    # under a threshold now.
    next_crossing: str = ""


@dataclass(frozen=True)
class RaiseAlerts:
    """Record every crossing not recorded yet (at most RAISE_BATCH per threshold), each with
    its `alert.raised` outbox row; say when the next one falls. The engine's own work."""

    name: ClassVar[str] = "RaiseAlerts"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = RaisedResult

    def execute(self, tx: Tx) -> RaisedResult:
        raised = 0
        upcoming = []
        for threshold in store.lock_all(tx.conn):
            cut = tx.now - timedelta(seconds=threshold.seconds)
            found = store.crossed(tx.conn, threshold, cut, RAISE_BATCH)
            raised += store.record(tx.conn, threshold, found, tx.now)
            if len(found) == RAISE_BATCH:
                store.advance(tx.conn, threshold.id, found[-1].since)
                upcoming.append(tx.now)
                continue
            store.advance(tx.conn, threshold.id, cut)
            start = store.next_start(tx.conn, threshold, cut)
            if start is not None:
                upcoming.append(start + timedelta(seconds=threshold.seconds))
        if raised:
            tx.announcements.add(OUTBOX_CHANNEL)
        return RaisedResult(raised, min(upcoming).isoformat() if upcoming else "")
