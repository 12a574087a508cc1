"""Webhook commands: manage subscriptions, fan committed outbox rows out into deliveries, lease
due deliveries, record the outcome of an attempt, replay dead letters.

A subscription's secret is written here and read only by the lease (to sign a body); no result
and no read of the engine carries it. See engine/webhooks/ for the dispatcher these serve.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar
from urllib.parse import urlsplit
from uuid import UUID

from engine.core import audit
from engine.core.executor import Result, Tx
from engine.core.permits import ADMINISTER, ENGINE_WORK, OPERATE, Permit
from engine.db import outbox
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.json_input import checked_name, text_problem
from engine.states import (
    AuditEntity,
    AuditOperation,
    DeliveryOutcome,
    DeliveryState,
    OutboxEvent,
)
from engine.webhooks import store, urls
from engine.webhooks.settings import WebhookSettings

MAX_NAME = 200
MAX_URL = 2000
MIN_SECRET = 16
MAX_SECRET = 1000


# -- validation (one place for the API and the console) ---------------------------------------


def check_url(url: str) -> str:
    url = url.strip()
    problem = text_problem(url)
    if problem or len(url) > MAX_URL or any(c.isspace() for c in url):
        raise BadRequest(
            f"field 'url' must be an http or https URL of at most {MAX_URL} characters",
            field="url",
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise BadRequest(f"field 'url' is not a valid URL: '{url}'", field="url") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise BadRequest(
            f"field 'url' must start with http:// or https://, not '{parts.scheme or url}'",
            field="url",
        )
    if not parts.hostname:
        raise BadRequest("field 'url' has no host", field="url")
    if port == 0:
        raise BadRequest("field 'url' has port 0", field="url")
    # Literal addresses and metadata names now; a name's addresses when a delivery resolves it.
    refused = urls.check_registered(parts.hostname, WebhookSettings.from_env().allowed_networks)
    if refused is not None:
        raise BadRequest(f"field 'url' is refused: {refused}", field="url")
    return url


def check_event_types(event_types: tuple[str, ...] | list[str]) -> list[str]:
    known = {event.value for event in OutboxEvent}
    for event in event_types:
        if event not in known:
            raise BadRequest(
                f"field 'event_types' names an unknown event '{event}'; known: "
                + ", ".join(e.value for e in OutboxEvent),
                field="event_types",
            )
    return sorted(set(event_types))


def check_definition_key(key: str | None) -> str | None:
    if key is None:
        return None
    key = key.strip()
    if not key:
        return None
    if len(key) > MAX_NAME or text_problem(key):
        raise BadRequest(
            f"field 'definition_key' must be at most {MAX_NAME} printable characters",
            field="definition_key",
        )
    return key


def check_secret(secret: str) -> str:
    if not MIN_SECRET <= len(secret) <= MAX_SECRET or text_problem(secret):
        raise BadRequest(
            f"field 'secret' must be {MIN_SECRET} to {MAX_SECRET} characters", field="secret"
        )
    return secret


# -- subscriptions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SubscriptionResult(Result):
    subscription_id: str


@dataclass(frozen=True)
class CreateSubscription:
    """A new subscription. It receives the events committed from now on (its cursor starts at the
    outbox's high-water mark)."""

    name: ClassVar[str] = "CreateSubscription"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = SubscriptionResult

    title: str
    url: str
    secret: str = dataclasses.field(repr=False)
    event_types: tuple[str, ...] = ()
    definition_key: str | None = None
    enabled: bool = True

    def execute(self, tx: Tx) -> SubscriptionResult:
        fields: dict[str, Any] = {
            "name": checked_name(self.title, MAX_NAME),
            "url": check_url(self.url),
            "event_types": check_event_types(self.event_types),
            "definition_key": check_definition_key(self.definition_key),
            "enabled": self.enabled,
        }
        subscription_id = store.insert_subscription(
            tx.conn,
            **fields,
            secret=check_secret(self.secret),
            fanned_out_seq=outbox.last_seq(tx.conn),
            now=tx.now,
        )
        _audit(tx, AuditOperation.CREATE, subscription_id, after=_shown(fields))
        return SubscriptionResult(str(subscription_id))


@dataclass(frozen=True)
class UpdateSubscription:
    """Change the fields given (None: keep). Enabling a disabled subscription starts it at the
    outbox's high-water mark: what committed while it was disabled is not delivered."""

    name: ClassVar[str] = "UpdateSubscription"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = SubscriptionResult

    subscription_id: UUID
    title: str | None = None
    url: str | None = None
    secret: str | None = dataclasses.field(default=None, repr=False)
    event_types: tuple[str, ...] | None = None
    # "" clears the filter.
    definition_key: str | None = None
    enabled: bool | None = None

    def execute(self, tx: Tx) -> SubscriptionResult:
        current = _locked(tx, self.subscription_id)
        changes: dict[str, object] = {"updated_at": tx.now}
        if self.title is not None:
            changes["name"] = checked_name(self.title, MAX_NAME)
        if self.url is not None:
            changes["url"] = check_url(self.url)
        if self.secret is not None:
            changes["secret"] = check_secret(self.secret)
        if self.event_types is not None:
            changes["event_types"] = check_event_types(self.event_types)
        if self.definition_key is not None:
            changes["definition_key"] = check_definition_key(self.definition_key)
        if self.enabled is not None:
            changes["enabled"] = self.enabled
            if self.enabled and not current.enabled:
                changes["fanned_out_seq"] = max(current.fanned_out_seq, outbox.last_seq(tx.conn))
        store.update_subscription(tx.conn, self.subscription_id, changes)
        changed = {k: v for k, v in changes.items() if k in AUDITED and v != getattr(current, k)}
        if self.secret is not None:
            changed["secret"] = "(changed)"
        _audit(
            tx,
            AuditOperation.UPDATE,
            self.subscription_id,
            before=_shown({k: getattr(current, k) for k in changed if k != "secret"}),
            after=_shown(changed),
        )
        return SubscriptionResult(str(self.subscription_id))


@dataclass(frozen=True)
class DeleteSubscription:
    """Delete a subscription with its deliveries."""

    name: ClassVar[str] = "DeleteSubscription"
    permits: ClassVar[tuple[Permit, ...]] = (ADMINISTER,)
    result_type: ClassVar[type[Result]] = SubscriptionResult

    subscription_id: UUID

    def execute(self, tx: Tx) -> SubscriptionResult:
        current = _locked(tx, self.subscription_id)
        if not store.delete_subscription(tx.conn, self.subscription_id):
            raise _missing(self.subscription_id)
        shown = {k: getattr(current, k) for k in AUDITED}
        _audit(tx, AuditOperation.DELETE, self.subscription_id, before=_shown(shown))
        return SubscriptionResult(str(self.subscription_id))


@dataclass(frozen=True)
class ReplayResult(Result):
    subscription_id: str
    replayed: int


@dataclass(frozen=True)
class ReplayDeadLetters:
    """Dead letters of a subscription (one of them, or all) are attempted again from now, in
    their instances' order, with a fresh count of attempts."""

    name: ClassVar[str] = "ReplayDeadLetters"
    permits: ClassVar[tuple[Permit, ...]] = (OPERATE,)
    result_type: ClassVar[type[Result]] = ReplayResult

    subscription_id: UUID
    delivery_id: UUID | None = None

    def execute(self, tx: Tx) -> ReplayResult:
        _locked(tx, self.subscription_id)
        replayed = store.replay(tx.conn, self.subscription_id, self.delivery_id, tx.now)
        if self.delivery_id is not None and replayed == 0:
            raise Conflict(
                f"delivery {self.delivery_id} is not a dead letter of subscription "
                f"{self.subscription_id}",
                delivery_id=str(self.delivery_id),
            )
        _audit(
            tx,
            AuditOperation.UPDATE,
            self.subscription_id,
            property="deadLetters",
            details={
                "replayed": replayed,
                "delivery": None if self.delivery_id is None else str(self.delivery_id),
            },
        )
        return ReplayResult(str(self.subscription_id), replayed)


# What an audit entry shows of a subscription (never its secret; its URL masked, as viewers
# see it: the credentials and query values it may carry are not kept).
AUDITED = ("name", "url", "event_types", "definition_key", "enabled")


def _shown(fields: dict[str, Any]) -> dict[str, Any]:
    shown = dict(fields)
    if isinstance(shown.get("url"), str):
        shown["url"] = urls.masked(shown["url"])
    return shown


def _locked(tx: Tx, subscription_id: UUID) -> store.SubscriptionRow:
    """The subscription's row, locked until the transaction ends."""
    current = store.lock_subscription(tx.conn, subscription_id)
    if current is None:
        raise _missing(subscription_id)
    return current


def _missing(subscription_id: UUID) -> NotFound:
    return NotFound(f"webhook subscription {subscription_id} does not exist")


def _audit(tx: Tx, operation: AuditOperation, subscription_id: UUID, **fields: Any) -> None:
    """A change of a webhook subscription: the engine's configuration."""
    audit.record(
        tx, operation, AuditEntity.CONFIGURATION, entity_id=f"webhook:{subscription_id}", **fields
    )


# -- the dispatcher's commands ----------------------------------------------------------------


@dataclass(frozen=True)
class FanOutResult(Result):
    deliveries: int
    # A subscription had more rows than one page: run again.
    more: bool


@dataclass(frozen=True)
class FanOut:
    """Insert a delivery per wanted outbox row with `seq <= bound` for every enabled subscription
    behind it, and advance each cursor in the same transaction. `bound` must be settled (see
    engine/db/outbox.py): every row at or below it that will ever commit has committed."""

    name: ClassVar[str] = "FanOutWebhooks"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = FanOutResult

    bound: int
    page_size: int = 500

    def execute(self, tx: Tx) -> FanOutResult:
        inserted, more = 0, False
        for behind in store.lock_behind(tx.conn, self.bound):
            rows = store.matching_rows(tx.conn, behind, self.bound, self.page_size)
            full = len(rows) == self.page_size
            store.insert_deliveries(tx.conn, behind.id, rows, tx.now)
            store.advance_cursor(tx.conn, behind.id, rows[-1].seq if full else self.bound)
            inserted += len(rows)
            more = more or full
        return FanOutResult(inserted, more)


@dataclass(frozen=True)
class Leased:
    id: str
    subscription_id: str
    seq: int
    instance_id: str
    event: str
    payload: dict[str, object]
    attempts: int
    url: str
    secret: str = dataclasses.field(repr=False)


@dataclass(frozen=True)
class LeaseResult(Result):
    deliveries: list[Leased]


@dataclass(frozen=True)
class LeaseDeliveries:
    """Lease up to `limit` due deliveries for `owner` for `seconds`, each the first undelivered
    one of its instance for its subscription, skipping rows other dispatchers are leasing; an
    expired lease is taken over. Each lease counts an attempt."""

    name: ClassVar[str] = "LeaseDeliveries"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = LeaseResult
    one_statement: ClassVar[bool] = True

    owner: str
    limit: int
    seconds: float

    def execute(self, tx: Tx) -> LeaseResult:
        found = store.lease(tx.conn, self.owner, self.limit, tx.now, self.seconds)
        return LeaseResult(
            [
                Leased(
                    str(d.id),
                    str(d.subscription_id),
                    d.seq,
                    str(d.instance_id),
                    d.event,
                    d.payload,
                    d.attempts,
                    d.url,
                    d.secret,
                )
                for d in found
            ]
        )


@dataclass(frozen=True)
class AttemptResult(Result):
    outcome: str


@dataclass(frozen=True)
class RecordAttempt:
    """The outcome of an attempt of a delivery `owner` leased: delivered; or failed, to be tried
    again `retry_in_seconds` later, or parked as a dead letter once `max_attempts` are spent."""

    name: ClassVar[str] = "RecordWebhookAttempt"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = AttemptResult

    delivery_id: UUID
    owner: str
    delivered: bool
    status: str
    max_attempts: int
    retry_in_seconds: float

    def execute(self, tx: Tx) -> AttemptResult:
        attempts = store.attempts_of(tx.conn, self.delivery_id, self.owner)
        if attempts is None:
            return AttemptResult(DeliveryOutcome.NOT_OWNER.value)
        if self.delivered:
            state, outcome = DeliveryState.DELIVERED, DeliveryOutcome.DELIVERED
        elif attempts >= self.max_attempts:
            state, outcome = DeliveryState.DEAD, DeliveryOutcome.DEAD_LETTER
        else:
            state, outcome = DeliveryState.PENDING, DeliveryOutcome.FAILED
        store.finish(
            tx.conn,
            self.delivery_id,
            self.owner,
            state=state,
            status=self.status,
            now=tx.now,
            next_attempt_at=tx.now + timedelta(seconds=self.retry_in_seconds),
        )
        return AttemptResult(outcome.value)


@dataclass(frozen=True)
class ReleaseResult(Result):
    released: int


@dataclass(frozen=True)
class ReleaseDeliveries:
    """Give back leases `owner` will not use (stopping, or out of lease time)."""

    name: ClassVar[str] = "ReleaseWebhookDeliveries"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = ReleaseResult
    one_statement: ClassVar[bool] = True

    owner: str
    delivery_ids: tuple[UUID, ...]

    def execute(self, tx: Tx) -> ReleaseResult:
        return ReleaseResult(store.release(tx.conn, self.owner, list(self.delivery_ids)))


@dataclass(frozen=True)
class PruneResult(Result):
    deleted: int


@dataclass(frozen=True)
class PruneDelivered:
    """Delete up to `limit` deliveries delivered more than `keep_seconds` ago."""

    name: ClassVar[str] = "PruneWebhookDeliveries"
    permits: ClassVar[tuple[Permit, ...]] = ENGINE_WORK
    result_type: ClassVar[type[Result]] = PruneResult
    one_statement: ClassVar[bool] = True

    keep_seconds: float
    limit: int = 1000

    def execute(self, tx: Tx) -> PruneResult:
        before = tx.now - timedelta(seconds=self.keep_seconds)
        return PruneResult(store.prune(tx.conn, before, self.limit))
