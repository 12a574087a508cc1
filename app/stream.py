"""Live outbox events over Server-Sent Events: one tail per server process, fanned out to every
connected browser.

The hub runs one `OutboxTail` in a thread on a connection of its own (application_name
`interlock-stream`), woken by the engine's LISTEN notifier and polling only as a fallback. Each
batch of settled rows is encoded once and handed to the event loop, which appends it to the
bounded queue of every subscriber whose filter matches. A subscriber whose queue is full is
dropped at once and its stream ends with a `resync` event.

    GET /stream                      every event
    GET /stream?instance=<uuid>      one instance
    GET /stream?definition=<key>     every version of one process definition
    GET /stream?definition_id=<id>   one deployed definition version
    GET /api/v1/stream?...           the same, for API clients (Bearer token or Basic)

Each event is `id: <seq>`, `event: <outbox event type>`, `data: <compact JSON of the row>`.
A client that sends `Last-Event-ID` (or `?after=<seq>`) first gets every matching row it missed,
read from the database, then the live feed, with nothing lost or repeated at the seam. Once
caught up the stream sends `event: ready` whose id is the cursor it continues from, so a client
that reconnects before any event still resumes where it joined. Comment pings keep proxies open.

`event: resync` (no id; data `{"after": seq, "reason": ...}`) tells the page to reload what it
shows: with reason `overflow` the client fell behind its queue and the stream ends (a reconnect
with Last-Event-ID then catches up from the database at the client's own pace); with reason
`unknown-id` the id it sent was never handed out by this database and the stream goes on live.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg
from sse_starlette.sse import EventSourceResponse, SendTimeoutError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.auth import require
from app.params import Query
from engine.accounts import Role
from engine.api import Engine
from engine.errors import BadRequest
from engine.json_input import INT64_MAX
from engine.notifier import Notifier
from engine.outbox import OutboxRow, OutboxTail, last_seq, read_rows
from engine.schema import OUTBOX_CHANNEL

log = logging.getLogger("interlock.stream")

APPLICATION_NAME = "interlock-stream"
SEP = "\n"


@dataclass(frozen=True)
class Filter:
    """Which rows a stream wants: all, one instance, or one definition (by key or id)."""

    instance_id: UUID | None = None
    definition_key: str | None = None
    definition_id: str | None = None

    def matches(self, row: OutboxRow) -> bool:
        if self.instance_id is not None and row.instance_id != self.instance_id:
            return False
        if self.definition_key is not None and row.definition_key != self.definition_key:
            return False
        return self.definition_id is None or row.definition_id == self.definition_id


@dataclass(frozen=True)
class Event:
    row: OutboxRow
    data: bytes


def encode(row: OutboxRow) -> Event:
    text = f"id: {row.seq}{SEP}event: {row.event}{SEP}data: {row.to_json()}{SEP}{SEP}"
    return Event(row, text.encode())


def _control(event: str, data: dict[str, Any], seq: int | None = None) -> bytes:
    head = f"id: {seq}{SEP}" if seq is not None else ""
    body = json.dumps(data, separators=(",", ":"))
    return f"{head}event: {event}{SEP}data: {body}{SEP}{SEP}".encode()


@dataclass(eq=False)
class Subscription:
    """One connected stream's share of the live feed: a bounded queue of encoded events."""

    filter: Filter
    limit: int
    start: int = 0
    queue: deque[Event] = field(default_factory=deque)
    overflowed: bool = False
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

    async def take(self) -> list[Event]:
        while not self.queue and not self.overflowed:
            self.wake.clear()
            await self.wake.wait()
        events = list(self.queue)
        self.queue.clear()
        return events


class Hub:
    """The process's one outbox tail and its subscribers. The tail runs in a thread; everything
    about subscribers runs on the event loop, so `cursor` and the subscriber sets change only
    there and need no lock."""

    def __init__(
        self,
        engine: Engine,
        loop: asyncio.AbstractEventLoop,
        *,
        queue_size: int = 4096,
        ping_seconds: float = 15.0,
        poll_seconds: float = 1.0,
        page_size: int = 500,
        send_timeout: float | None = 30.0,
    ) -> None:
        self.engine = engine
        self.loop = loop
        self.queue_size = queue_size
        self.ping_seconds = ping_seconds
        self.poll_seconds = poll_seconds
        self.page_size = page_size
        self.send_timeout = send_timeout
        # Every committed row with seq <= cursor has been handed to subscribers (-1: not yet).
        self.cursor = -1
        self.ready = asyncio.Event()
        self.dropped = 0
        self._all: set[Subscription] = set()
        self._by_instance: dict[UUID, set[Subscription]] = {}
        self._by_key: dict[str, set[Subscription]] = {}
        self._by_id: dict[str, set[Subscription]] = {}
        self._stopped = threading.Event()
        self._in_flight = threading.Semaphore(8)
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="interlock-stream", daemon=True)
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
            + sum(len(s) for s in self._by_key.values())
            + sum(len(s) for s in self._by_id.values())
        )

    # -- subscribers (event loop only) -----------------------------------------------------------

    def subscribe(self, flt: Filter) -> Subscription:
        """Join the live feed: the subscription gets every matching row above `self.cursor`,
        recorded as its `start`."""
        sub = Subscription(flt, self.queue_size, start=self.cursor)
        self._bucket(flt).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        flt = sub.filter
        if flt.instance_id is not None:
            _discard(self._by_instance, flt.instance_id, sub)
        elif flt.definition_key is not None:
            _discard(self._by_key, flt.definition_key, sub)
        elif flt.definition_id is not None:
            _discard(self._by_id, flt.definition_id, sub)
        else:
            self._all.discard(sub)

    def _bucket(self, flt: Filter) -> set[Subscription]:
        if flt.instance_id is not None:
            return self._by_instance.setdefault(flt.instance_id, set())
        if flt.definition_key is not None:
            return self._by_key.setdefault(flt.definition_key, set())
        if flt.definition_id is not None:
            return self._by_id.setdefault(flt.definition_id, set())
        return self._all

    def _targets(self, row: OutboxRow) -> Iterable[Subscription]:
        yield from self._all
        yield from self._by_instance.get(row.instance_id, ())
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

    # -- replay (reads through the engine's pool) ------------------------------------------------

    async def replay(self, flt: Filter, after: int, upto: int) -> tuple[list[Event], int]:
        """One page of matching rows with `after < seq <= upto` and the position reached."""

        def read() -> list[OutboxRow]:
            with self.engine.connection() as conn:
                return read_rows(
                    conn,
                    after,
                    upto,
                    self.page_size,
                    instance_id=flt.instance_id,
                    definition_key=flt.definition_key,
                    definition_id=flt.definition_id,
                )

        rows = await run_in_threadpool(read)
        reached = rows[-1].seq if len(rows) == self.page_size else upto
        return [encode(row) for row in rows], reached

    async def unknown(self, seq: int) -> bool:
        """True when the outbox never handed out `seq`."""

        def read() -> int:
            with self.engine.connection() as conn:
                return last_seq(conn)

        return seq > await run_in_threadpool(read)

    # -- the tail (its own thread) ---------------------------------------------------------------

    def _run(self) -> None:
        notifier = self.engine.notifier
        tail: OutboxTail | None = None
        conn: psycopg.Connection[Any] | None = None
        backoff = 0.0
        last_cursor: int | None = None
        while not self._stopped.is_set():
            try:
                if conn is None or tail is None:
                    conn, tail = self._open(tail)
                seen = notifier.generation(OUTBOX_CHANNEL)
                rows = tail.poll()
            except Exception:
                log.exception("outbox tail failed; reconnecting")
                if conn is not None:
                    conn.close()
                conn = None
                self._stopped.wait(0.5)
                continue
            cursor = tail.cursor
            if cursor is not None and (rows or cursor != last_cursor):
                last_cursor = cursor
                if not self._hand_over([encode(row) for row in rows], cursor):
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
            self.engine.database.url, autocommit=True, application_name=APPLICATION_NAME
        )
        try:
            if tail is None:
                return conn, OutboxTail(conn, page_size=self.page_size)
            tail.reconnect(conn)
            return conn, tail
        except BaseException:
            conn.close()
            raise

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


# -- the stream of one client ----------------------------------------------------------------------


async def events(hub: Hub, flt: Filter, after: int | None) -> AsyncIterator[bytes]:
    """What one client receives: the rows it missed after `after` (if given), then live rows."""
    await hub.ready.wait()
    position = after
    if position is not None:
        # Far behind: catch up from the database first, so the live queue is not flooded.
        while hub.cursor - position > hub.queue_size // 2:
            page, position = await hub.replay(flt, position, hub.cursor)
            if page:
                yield b"".join(event.data for event in page)
    sub = hub.subscribe(flt)
    try:
        if position is not None and position > sub.start and await hub.unknown(position):
            # An id this database never handed out (another database, a reset): start afresh.
            yield _control("resync", {"after": sub.start, "reason": "unknown-id"})
            position = sub.start
        if position is not None:
            while position < sub.start:
                page, position = await hub.replay(flt, position, sub.start)
                if page:
                    yield b"".join(event.data for event in page)
        position = sub.start if position is None else max(position, sub.start)
        yield _control("ready", {"cursor": position}, position)
        while True:
            batch = await sub.take()
            if sub.overflowed:
                yield _control("resync", {"after": position, "reason": "overflow"})
                return
            fresh = [event for event in batch if event.row.seq > position]
            if fresh:
                position = fresh[-1].row.seq
                yield b"".join(event.data for event in fresh)
    finally:
        hub.unsubscribe(sub)


class EventStream(EventSourceResponse):
    """An SSE response that ends quietly when its client stops reading for `send_timeout`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            log.info("closed an event stream whose client stopped reading")


def _filter(query: Query) -> Filter:
    instance = query.uuid("instance")
    key = query.text("definition")
    definition_id = query.text("definition_id")
    if sum(x is not None for x in (instance, key, definition_id)) > 1:
        raise BadRequest("give at most one of instance, definition, definition_id")
    if instance is not None:
        return Filter(instance_id=instance)
    return Filter(definition_key=key, definition_id=definition_id)


def _after(request: Request, query: Query) -> int | None:
    """Where a reconnecting client resumes: its Last-Event-ID header, else `?after=`."""
    header = request.headers.get("last-event-id", "").strip()
    if not header:
        return query.integer("after", minimum=0, maximum=INT64_MAX, strip=True)
    try:
        after = int(header)
    except ValueError as exc:
        problem = f"Last-Event-ID must be an outbox sequence number, got '{header}'"
        raise BadRequest(problem, header="Last-Event-ID") from exc
    if not 0 <= after <= INT64_MAX:
        raise BadRequest(f"Last-Event-ID must be from 0 to {INT64_MAX}", header="Last-Event-ID")
    return after


async def stream(request: Request) -> Response:
    require(request, Role.VIEWER)
    hub: Hub | None = getattr(request.app.state, "stream_hub", None)
    if hub is None:
        return JSONResponse(
            {"type": "Unavailable", "message": "the event stream is not running", "detail": {}},
            status_code=503,
        )
    query = Query(request.query_params)
    flt, after = _filter(query), _after(request, query)
    return EventStream(
        events(hub, flt, after),
        ping=hub.ping_seconds,
        sep=SEP,
        send_timeout=hub.send_timeout,
    )


routes = [
    Route("/stream", stream, methods=["GET"]),
    Route("/api/v1/stream", stream, methods=["GET"]),
]


async def start_hub(app: Starlette, **options: Any) -> Hub:
    """Start the process's hub over `app.state.engine` (once; a second call returns it)."""
    existing: Hub | None = getattr(app.state, "stream_hub", None)
    if existing is not None:
        return existing
    hub = Hub(app.state.engine, asyncio.get_running_loop(), **options)
    hub.start()
    app.state.stream_hub = hub
    return hub


async def stop_hub(app: Starlette) -> None:
    hub: Hub | None = getattr(app.state, "stream_hub", None)
    if hub is None:
        return
    app.state.stream_hub = None
    await run_in_threadpool(hub.stop)
