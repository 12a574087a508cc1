"""The outbox hub: one ordered outbox tail per process, fanned out to any number of subscribers.

The hub runs one `OutboxTail` (engine/db/outbox.py) in a thread on a connection of its own
(application_name `interlock-stream`), woken by the engine's LISTEN notifier and polling only as a
fallback. Each batch of settled rows is encoded once and handed to the event loop, which appends
it to the bounded queue of every subscriber whose filter matches. A subscriber whose queue is full
is dropped at once and marked `overflowed`. `replay` reads what a subscriber missed through the
engine's read pool; `cursor` is the settled position every subscriber joins at.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.api import Engine
from engine.db.outbox import OutboxRow, OutboxTail, last_seq, read_rows
from engine.identity.grants import Scope
from engine.loops.notifier import Notifier
from engine.observe.metrics import OUTBOX_TAIL_LAG_SECONDS
from engine.schema import OUTBOX_CHANNEL

log = logging.getLogger("interlock.stream")

APPLICATION_NAME = "interlock-stream"


@dataclass(frozen=True)
class Readable:
    """The rows of the instances a principal may read: READ_INSTANCE on their definition's key,
    or READ on the instance; of no tenant or of one of `tenant_ids` (None: of any tenant)."""

    definition_keys: Scope
    instance_ids: Scope
    tenant_ids: frozenset[str] | None = None

    def allows(self, row: OutboxRow) -> bool:
        tenant = row.tenant_id
        if self.tenant_ids is not None and tenant is not None and tenant not in self.tenant_ids:
            return False
        if self.definition_keys.unrestricted or self.instance_ids.unrestricted:
            return True
        key = row.definition_key
        if key is not None and self.definition_keys.allows(key):
            return True
        return self.instance_ids.allows(str(row.instance_id))


@dataclass(frozen=True)
class Filter:
    """Which rows a stream wants: all, one instance, one family of called instances (by its
    root's id), or one definition (by key or id)."""

    instance_id: UUID | None = None
    definition_key: str | None = None
    definition_id: str | None = None
    root_instance_id: UUID | None = None
    # What the stream's principal may read (None: everything): the definition keys whose
    # instances, and the instance ids, their grants cover (engine/identity/grants.py). A push is
    # checked against them one event at a time; a replay reads only those rows (a SQL condition,
    # engine/store/outbox.py).
    readable: Readable | None = None

    def only(self) -> dict[str, Any]:
        """The filter's row conditions, as `read_rows` takes them."""
        return {
            "instance_id": self.instance_id,
            "definition_key": self.definition_key,
            "definition_id": self.definition_id,
            "root_instance_id": self.root_instance_id,
        }

    def matches(self, row: OutboxRow) -> bool:
        if self.readable is not None and not self.readable.allows(row):
            return False
        if self.instance_id is not None and row.instance_id != self.instance_id:
            return False
        if self.root_instance_id is not None and row.root_instance_id != self.root_instance_id:
            return False
        if self.definition_key is not None and row.definition_key != self.definition_key:
            return False
        return self.definition_id is None or row.definition_id == self.definition_id


@dataclass(frozen=True)
class Event:
    row: OutboxRow
    data: bytes


@dataclass(eq=False)
class Subscription:
    """One connected stream's share of the live feed: a bounded queue of encoded events."""

    filter: Filter
    limit: int
    start: int = 0
    queue: deque[Event] = field(default_factory=deque)
    overflowed: bool = False
    # The hub lost or regained the database since the subscriber last looked (`database_up`).
    status_changed: bool = False
    # The hub is closing its streams (server shutdown): take what is queued and end.
    closing: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, event: Event) -> bool:
        """Queue `event`; False when the queue is full (the caller drops the subscription)."""
        if len(self.queue) >= self.limit:
            return False
        self.queue.append(event)
        return True

    def overflow(self) -> None:
        self.overflowed = True
        self.queue.clear()
        self.wake.set()

    def status_change(self) -> None:
        self.status_changed = True
        self.wake.set()

    def close(self) -> None:
        self.closing = True
        self.wake.set()

    async def take(self) -> list[Event]:
        while (
            not self.queue and not self.overflowed and not self.status_changed and not self.closing
        ):
            self.wake.clear()
            await self.wake.wait()
        events = list(self.queue)
        self.queue.clear()
        return events


class OutboxHub:
    """The process's one outbox tail and its subscribers. The tail runs in a thread; everything
    about subscribers runs on the event loop, so `cursor` and the subscriber sets change only
    there and need no lock. Each row is encoded once (`encode`) for every subscriber."""

    def __init__(
        self,
        engine: Engine,
        loop: asyncio.AbstractEventLoop,
        *,
        queue_size: int = 4096,
        poll_seconds: float = 1.0,
        page_size: int = 500,
    ) -> None:
        self.engine = engine
        self.loop = loop
        self.queue_size = queue_size
        self.poll_seconds = poll_seconds
        self.page_size = page_size
        # Every committed row with seq <= cursor has been handed to subscribers (-1: not yet).
        self.cursor = -1
        self.ready = asyncio.Event()
        # Whether the tail reaches the database (event loop only; see `_set_database_up`).
        self.database_up = True
        self.dropped = 0
        self.closing = False
        self._all: set[Subscription] = set()
        self._by_instance: dict[UUID, set[Subscription]] = {}
        self._by_root: dict[UUID, set[Subscription]] = {}
        self._by_key: dict[str, set[Subscription]] = {}
        self._by_id: dict[str, set[Subscription]] = {}
        self._stopped = threading.Event()
        self._in_flight = threading.Semaphore(8)
        self._thread: threading.Thread | None = None

    def encode(self, row: OutboxRow) -> bytes:
        """What subscribers receive of `row`: here its compact JSON; a server's hub frames it
        for its wire."""
        return row.to_json().encode()

    def event(self, row: OutboxRow) -> Event:
        return Event(row, self.encode(row))

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=APPLICATION_NAME, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    @property
    def subscriber_count(self) -> int:
        return (
            len(self._all)
            + sum(len(s) for s in self._by_instance.values())
            + sum(len(s) for s in self._by_root.values())
            + sum(len(s) for s in self._by_key.values())
            + sum(len(s) for s in self._by_id.values())
        )

    # -- subscribers (event loop only) -----------------------------------------------------------

    def subscribe(self, flt: Filter) -> Subscription:
        """Join the live feed: the subscription gets every matching row above `self.cursor`,
        recorded as its `start`."""
        sub = Subscription(flt, self.queue_size, start=self.cursor, closing=self.closing)
        self._bucket(flt).add(sub)
        return sub

    def close_streams(self) -> None:
        """Let every subscription (and any later one) end after what it has queued."""
        self.closing = True
        for bucket in (self._by_instance, self._by_root, self._by_key, self._by_id):
            for subs in bucket.values():
                for sub in subs:
                    sub.close()
        for sub in self._all:
            sub.close()

    def unsubscribe(self, sub: Subscription) -> None:
        flt = sub.filter
        if flt.instance_id is not None:
            _discard(self._by_instance, flt.instance_id, sub)
        elif flt.root_instance_id is not None:
            _discard(self._by_root, flt.root_instance_id, sub)
        elif flt.definition_key is not None:
            _discard(self._by_key, flt.definition_key, sub)
        elif flt.definition_id is not None:
            _discard(self._by_id, flt.definition_id, sub)
        else:
            self._all.discard(sub)

    def _bucket(self, flt: Filter) -> set[Subscription]:
        if flt.instance_id is not None:
            return self._by_instance.setdefault(flt.instance_id, set())
        if flt.root_instance_id is not None:
            return self._by_root.setdefault(flt.root_instance_id, set())
        if flt.definition_key is not None:
            return self._by_key.setdefault(flt.definition_key, set())
        if flt.definition_id is not None:
            return self._by_id.setdefault(flt.definition_id, set())
        return self._all

    def _targets(self, row: OutboxRow) -> Iterable[Subscription]:
        yield from self._all
        yield from self._by_instance.get(row.instance_id, ())
        if row.root_instance_id is not None:
            yield from self._by_root.get(row.root_instance_id, ())
        if row.definition_key is not None:
            yield from self._by_key.get(row.definition_key, ())
        if row.definition_id is not None:
            yield from self._by_id.get(row.definition_id, ())

    def _deliver(self, events: list[Event], cursor: int) -> None:
        try:
            touched: set[Subscription] = set()
            full: set[Subscription] = set()
            for event in events:
                for sub in self._targets(event.row):
                    if sub in full or not sub.filter.matches(event.row):
                        continue
                    if sub.push(event):
                        touched.add(sub)
                    else:
                        full.add(sub)
            for sub in full:
                self.unsubscribe(sub)
                sub.overflow()
                self.dropped += 1
            for sub in touched - full:
                sub.wake.set()
            self.cursor = cursor
            if not self.ready.is_set():
                self.ready.set()
        finally:
            self._in_flight.release()

    def _set_database_up(self, up: bool) -> None:
        if up == self.database_up:
            return
        self.database_up = up
        for sub in self._subscribers():
            sub.status_change()

    def _subscribers(self) -> Iterable[Subscription]:
        yield from self._all
        for index in (self._by_instance, self._by_root, self._by_key, self._by_id):
            for subs in index.values():
                yield from subs

    # -- replay (reads through the engine's pool; blocking, call them off the event loop) ------

    def replay(self, flt: Filter, after: int, upto: int) -> tuple[list[Event], int]:
        """One page of matching rows with `after < seq <= upto` and the position reached."""
        with self.engine.connection() as conn:
            rows = read_rows(conn, after, upto, self.page_size, flt.only())
        reached = rows[-1].seq if len(rows) == self.page_size else upto
        return [self.event(row) for row in rows], reached

    def unknown(self, seq: int) -> bool:
        """True when the outbox never handed out `seq`."""
        with self.engine.connection() as conn:
            return seq > last_seq(conn)

    # -- the tail (its own thread) ---------------------------------------------------------------

    def _run(self) -> None:
        notifier = self.engine.notifier
        tail: OutboxTail | None = None
        conn: psycopg.Connection[Any] | None = None
        backoff = 0.0
        failures = 0
        last_cursor: int | None = None
        while not self._stopped.is_set():
            try:
                if conn is None or tail is None:
                    conn, tail = self._open(tail)
                seen = notifier.generation(OUTBOX_CHANNEL)
                rows = tail.poll()
                if failures:
                    self._tell_database_up(True)
                failures = 0
            except Exception as exc:
                # The database went away (or the connection did): reconnect soon, then less
                # often, 2 s apart at most. The tail keeps its cursor, so the stream goes on
                # after the last row it handed over, nothing skipped and nothing twice.
                if failures == 0:
                    log.warning("outbox tail failed (%s); reconnecting", exc, exc_info=exc)
                    self._tell_database_up(False)
                failures += 1
                if conn is not None:
                    conn.close()
                conn = None
                self._stopped.wait(min(2.0, 0.25 * failures))
                continue
            if rows:
                lag = datetime.now(UTC) - rows[-1].created_at
                OUTBOX_TAIL_LAG_SECONDS.set(lag.total_seconds())
            cursor = tail.cursor
            if cursor is not None and (rows or cursor != last_cursor):
                last_cursor = cursor
                if not self._hand_over([self.event(row) for row in rows], cursor):
                    break
            if tail.behind:
                continue
            if tail.waiting:
                # A writer is still open; its end may come without a notification (rollback).
                backoff = 0.002 if rows or backoff == 0 else min(backoff * 2, 0.1)
                timeout = backoff
            else:
                backoff = 0.0
                timeout = self.poll_seconds
            self._wait(notifier, seen, timeout)
        if conn is not None:
            conn.close()

    def _open(self, tail: OutboxTail | None) -> tuple[psycopg.Connection[Any], OutboxTail]:
        conn = psycopg.connect(
            self.engine.database.url,
            autocommit=True,
            application_name=APPLICATION_NAME,
            **self.engine.connect_kwargs,
        )
        try:
            if tail is None:
                return conn, OutboxTail(conn, page_size=self.page_size)
            tail.reconnect(conn)
            return conn, tail
        except BaseException:
            conn.close()
            raise

    def _tell_database_up(self, up: bool) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self.loop.call_soon_threadsafe(self._set_database_up, up)

    def _hand_over(self, events: list[Event], cursor: int) -> bool:
        while not self._in_flight.acquire(timeout=0.25):
            if self._stopped.is_set():
                return False
        try:
            self.loop.call_soon_threadsafe(self._deliver, events, cursor)
        except RuntimeError:  # the loop is closed
            return False
        return True

    def _wait(self, notifier: Notifier, seen: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._stopped.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if notifier.wait(OUTBOX_CHANNEL, min(remaining, 0.25), since=seen):
                return


def _discard(index: dict[Any, set[Subscription]], key: Any, sub: Subscription) -> None:
    found = index.get(key)
    if found is not None:
        found.discard(sub)
        if not found:
            del index[key]
