"""The webhook dispatcher: fan committed outbox rows out into deliveries, lease due ones, POST
them, record each attempt. Runs in background threads of any number of processes at once.

One round of a thread:
1. Observe the outbox's settled bound (`engine.db.outbox.OutboxTail`): every row at or below it
   that will ever commit has committed and is visible. Reading "everything after the cursor"
   without it would skip a row whose transaction took a smaller seq but committed later.
2. `FanOut(bound)`: every enabled subscription behind the bound gets a delivery per wanted row
   in `(cursor, bound]`, and its cursor moves to the bound in the same transaction.
3. `LeaseDeliveries`: a batch of due deliveries (SKIP LOCKED; expired leases are taken over),
   each the first undelivered one of its instance for its subscription, so an instance's events
   go out in order, one at a time.
4. POST each with its signature (engine/webhooks/sender.py: only to addresses the destination
   policy allows, within one deadline, the answer read up to a cap, no redirects);
   `RecordAttempt` marks it delivered, or schedules the next
   attempt with exponential backoff and jitter, or parks it as a dead letter after the last.
   A dead letter holds back the later events of its instance for its subscription (order stays
   true) until an operator replays it; other instances go on.

At least once: a delivery is marked delivered only after the receiver answered 2xx, so a
dispatcher that dies between the two sends it again (same `X-Interlock-Delivery` id) once its
lease expires. A delivery is attempted only while its lease has more than the timeout left.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import random
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from uuid import UUID

import psycopg

from engine.commands.webhooks import (
    FanOut,
    Leased,
    LeaseDeliveries,
    PruneDelivered,
    RecordAttempt,
    ReleaseDeliveries,
)
from engine.core.executor import Command, Result
from engine.db.outbox import OutboxTail
from engine.loops.jobs import default_owner
from engine.loops.notifier import Notifier
from engine.loops.threads import Looping, Loops
from engine.observe import metrics
from engine.schema import OUTBOX_CHANNEL
from engine.states import DeliveryOutcome
from engine.webhooks.sender import Sender
from engine.webhooks.settings import WebhookSettings

log = logging.getLogger(__name__)
T = TypeVar("T", bound=Result)

SIGNATURE_HEADER = "X-Interlock-Signature"
DELIVERY_HEADER = "X-Interlock-Delivery"
EVENT_HEADER = "X-Interlock-Event"
TIMESTAMP_HEADER = "X-Interlock-Timestamp"

# At most this long between tries while the database is away: back within seconds of it.
_MAX_ERROR_BACKOFF_SECONDS = 5.0
_STOP_CHECK_SECONDS = 0.2
# While a transaction that may still commit outbox rows is open, look again this soon.
_SETTLE_SECONDS = 0.05
# Fan-out pages one round runs before it leases (the rest follow in the next rounds).
_MAX_FAN_OUT_PAGES = 10
# How often a dispatcher deletes old delivered deliveries (a batch at a time).
_PRUNE_EVERY_SECONDS = 60.0


class DispatchEngine(Protocol):
    """What the dispatcher needs of an engine (engine.api.Engine is one)."""

    notifier: Notifier

    def run(self, command: Command[T]) -> T: ...

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


def body_of(delivery: Leased) -> bytes:
    """The JSON a delivery POSTs: the outbox event (identifiers only) with the delivery's and
    the subscription's ids. The same bytes on every attempt."""
    document = {
        **delivery.payload,
        "delivery_id": delivery.id,
        "subscription_id": delivery.subscription_id,
    }
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def signature(secret: str, body: bytes) -> str:
    """The value of X-Interlock-Signature: `sha256=` and the hex HMAC-SHA256 of the body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def backoff_seconds(attempts: int, settings: WebhookSettings, rng: random.Random) -> float:
    """The wait after failed attempt number `attempts`: exponential, capped, with jitter (the
    upper half of the exponential delay is drawn at random)."""
    exponential: float = settings.backoff_base_seconds * 2.0 ** min(attempts - 1, 32)
    delay = min(settings.backoff_cap_seconds, exponential)
    return delay / 2 + rng.uniform(0, delay / 2)


def post(sender: Sender, delivery: Leased) -> tuple[bool, str]:
    """POST one delivery: (delivered, the status to record). The status is an HTTP status or a
    short reason; never an exception's text, which may quote the URL's query or a trace."""
    body = body_of(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Interlock-Webhooks",
        DELIVERY_HEADER: delivery.id,
        EVENT_HEADER: delivery.event,
        TIMESTAMP_HEADER: str(int(time.time())),
        SIGNATURE_HEADER: signature(delivery.secret, body),
    }
    return sender.post(delivery.url, body, headers)


@dataclass
class _ThreadState:
    """What one dispatcher thread keeps: its view of the outbox tail."""

    tail: OutboxTail | None = None
    rng: random.Random = field(default_factory=random.Random)


class Dispatcher(Looping):
    """Delivers webhooks from background threads (or the caller's, with `run_once`). Any number
    of dispatchers, in any number of processes, may share a database."""

    _log = log
    error_backoff_seconds: float = 0.5

    def __init__(
        self,
        engine: DispatchEngine,
        settings: WebhookSettings | None = None,
        *,
        owner: str | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings or WebhookSettings()
        self.owner = owner or default_owner()
        self._loops = Loops("interlock-webhooks", "webhook dispatcher")
        self._stopping = self._loops.stopping
        self._sender = Sender(self.settings)
        self._local = threading.local()
        self._next_prune = 0.0

    @classmethod
    def from_env(cls, engine: DispatchEngine) -> Dispatcher:
        """A dispatcher with the settings of the environment (INTERLOCK_WEBHOOK_...)."""
        return cls(engine, WebhookSettings.from_env())

    def __repr__(self) -> str:
        return f"Dispatcher(owner={self.owner!r})"

    # -- one round --------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Fan out what has settled, lease one batch and attempt it; the number attempted."""
        state = self._state()
        bound = self._settled(state)
        if bound >= 0:
            for _ in range(_MAX_FAN_OUT_PAGES):
                if not self.engine.run(FanOut(bound)).more:
                    break
        if time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + _PRUNE_EVERY_SECONDS
            self.engine.run(PruneDelivered(self.settings.keep_delivered_hours * 3600))
        # Measured from before the lease is taken: the local deadline is never later than the
        # database's.
        deadline = time.monotonic() + self.settings.lease_seconds
        leased = self.engine.run(
            LeaseDeliveries(self.owner, self.settings.batch_size, self.settings.lease_seconds)
        ).deliveries
        for index, delivery in enumerate(leased):
            left = deadline - time.monotonic()
            if self._stopping.is_set() or left < self.settings.timeout_seconds + 1.0:
                self._release([UUID(d.id) for d in leased[index:]])
                return index
            self._attempt(state, delivery)
        return len(leased)

    def _attempt(self, state: _ThreadState, delivery: Leased) -> None:
        delivered, status = post(self._sender, delivery)
        outcome = self.engine.run(
            RecordAttempt(
                UUID(delivery.id),
                self.owner,
                delivered,
                status,
                self.settings.max_attempts,
                backoff_seconds(delivery.attempts, self.settings, state.rng),
            )
        ).outcome
        if outcome == DeliveryOutcome.NOT_OWNER:
            outcome = DeliveryOutcome.DELIVERED if delivered else DeliveryOutcome.FAILED
        metrics.WEBHOOK_DELIVERIES.labels(outcome).inc()
        log.debug("webhook delivery %s (%s): %s, %s", delivery.id, delivery.event, status, outcome)

    def _settled(self, state: _ThreadState) -> int:
        with self.engine.connection() as conn:
            if state.tail is None:
                state.tail = OutboxTail(conn)
            else:
                state.tail.reconnect(conn)
            return state.tail.observe()

    def _release(self, delivery_ids: list[UUID]) -> None:
        try:
            self.engine.run(ReleaseDeliveries(self.owner, tuple(delivery_ids)))
        except psycopg.Error:
            log.warning(
                "could not release %d webhook deliveries; their leases expire", len(delivery_ids)
            )

    def _state(self) -> _ThreadState:
        state: _ThreadState | None = getattr(self._local, "state", None)
        if state is None:
            state = _ThreadState()
            self._local.state = state
        return state

    # -- the loop ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Run the loop in `settings.threads` daemon threads until `stop()`."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        self._loops.start(self._loop, self.settings.threads)
        log.info("webhook dispatcher %s started (%d threads)", self.owner, self.settings.threads)

    def _loop(self) -> None:
        failures = 0
        notifier = self.engine.notifier
        while not self._stopping.is_set():
            try:
                seen = notifier.generation(OUTBOX_CHANNEL)
                attempted = self.run_once()
                failures = 0
                if attempted >= self.settings.batch_size:
                    continue
                tail = self._state().tail
                wait = _SETTLE_SECONDS if tail is not None and tail.waiting else None
                self._idle(seen, wait or self.settings.poll_seconds)
            except Exception as exc:
                failures += 1
                backoff = min(
                    _MAX_ERROR_BACKOFF_SECONDS,
                    self.error_backoff_seconds * 2 ** min(failures - 1, 10),
                )
                log.warning(
                    "webhook dispatcher %s: round failed (%s); again in %.1fs",
                    self.owner,
                    type(exc).__name__,
                    backoff,
                )
                self._stopping.wait(backoff)

    def _idle(self, seen: int, timeout: float) -> None:
        """Sleep until the outbox changes, `timeout` passes or a stop is requested."""
        deadline = time.monotonic() + timeout
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if self.engine.notifier.wait(
                OUTBOX_CHANNEL, min(remaining, _STOP_CHECK_SECONDS), since=seen
            ):
                return
