"""Live outbox events over Server-Sent Events: the routes over the process's one outbox hub
(engine/loops/outbox_hub.py), which tails the outbox and fans rows out to every connected browser. A
subscriber whose queue is full is dropped at once and its stream ends with a `resync` event.

    GET /stream                      every event
    GET /stream?instance=<uuid>      one instance
    GET /stream?family=<uuid>        one family of called instances, by its root instance's id
    GET /stream?definition=<key>     every version of one process definition
    GET /stream?definition_id=<id>   one deployed definition version
    GET /api/v1/stream?...           the same, for API clients (Bearer token or Basic)

Each event is `id: <seq>` (the event's number: its outbox row's seq times 1000 plus its place in
the row; numbers only grow), `event: <outbox event type>`, `data: <compact JSON of the event>`.
When the server loses its database, and when it has it back, the stream says so with
`event: database` (no id; data `{"up": false}` or `{"up": true}`); while it is down a new
stream is refused with 503, and one that was catching up ends (reconnect with Last-Event-ID).
A client that sends `Last-Event-ID` (or `?after=<seq>`) first gets every matching row it missed,
read from the database, then the live feed, with nothing lost or repeated at the seam. Once
caught up the stream sends `event: ready` whose id is the cursor it continues from, so a client
that reconnects before any event still resumes where it joined. Comment pings keep proxies open.

`event: reconnect` (id: the cursor; data `{"after": seq, "reason": "shutdown"}`, with `retry`)
ends the stream when the server shuts down: the client reconnects, to another replica if there
is one, and its Last-Event-ID resumes it with nothing lost.

`event: resync` (no id; data `{"after": seq, "reason": ...}`) tells the page to reload what it
shows: with reason `overflow` the client fell behind its queue and the stream ends (a reconnect
with Last-Event-ID then catches up from the database at the client's own pace); with reason
`unknown-id` the id it sent was never handed out by this database and the stream goes on live.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette.sse import EventSourceResponse, SendTimeoutError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.auth import require
from app.params import Query
from engine.api import Engine
from engine.core import actors
from engine.db.outage import UNAVAILABLE_MESSAGE
from engine.db.outbox import OutboxRow
from engine.errors import BadRequest, DatabaseUnavailable
from engine.identity.permissions import ResourceType, permission_bits
from engine.language.json_input import INT64_MAX
from engine.loops.outbox_hub import Event, Filter, OutboxHub, Readable
from engine.observe.metrics import SSE_CLIENTS

log = logging.getLogger("interlock.stream")

SEP = "\n"
PD, PI = ResourceType.PROCESS_DEFINITION, ResourceType.PROCESS_INSTANCE


def encode(row: OutboxRow) -> bytes:
    return f"id: {row.seq}{SEP}event: {row.event}{SEP}data: {row.to_json()}{SEP}{SEP}".encode()


# A browser told to reconnect waits this long first (the SSE `retry` field).
RECONNECT_MS = 1000


def _control(
    event: str, data: dict[str, Any], seq: int | None = None, retry: int | None = None
) -> bytes:
    head = f"id: {seq}{SEP}" if seq is not None else ""
    if retry is not None:
        head += f"retry: {retry}{SEP}"
    body = json.dumps(data, separators=(",", ":"))
    return f"{head}event: {event}{SEP}data: {body}{SEP}{SEP}".encode()


class Hub(OutboxHub):
    """The server's outbox hub (engine/loops/outbox_hub.py) with its event-stream settings: rows go
    out as SSE events, comment pings every `ping_seconds`, and a client that stops reading for
    `send_timeout` seconds is let go."""

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
        super().__init__(
            engine, loop, queue_size=queue_size, poll_seconds=poll_seconds, page_size=page_size
        )
        self.ping_seconds = ping_seconds
        self.send_timeout = send_timeout

    def encode(self, row: OutboxRow) -> bytes:
        return encode(row)


# -- the stream of one client ----------------------------------------------------------------------


async def _replay(hub: Hub, flt: Filter, after: int, upto: int) -> tuple[list[Event], int]:
    page: tuple[list[Event], int] = await run_in_threadpool(hub.replay, flt, after, upto)
    return page


async def _unknown(hub: Hub, seq: int) -> bool:
    unknown: bool = await run_in_threadpool(hub.unknown, seq)
    return unknown


async def events(hub: Hub, flt: Filter, after: int | None) -> AsyncIterator[bytes]:
    """What one client receives: the rows it missed after `after` (if given), then live rows."""
    await hub.ready.wait()
    position = after
    if position is not None:
        # Far behind: catch up from the database first, so the live queue is not flooded.
        while hub.cursor - position > hub.queue_size // 2:
            page, position = await _replay(hub, flt, position, hub.cursor)
            if page:
                yield b"".join(event.data for event in page)
    sub = hub.subscribe(flt)
    SSE_CLIENTS.inc()
    try:
        if position is not None and position > sub.start and await _unknown(hub, position):
            # An id this database never handed out (another database, a reset): start afresh.
            yield _control("resync", {"after": sub.start, "reason": "unknown-id"})
            position = sub.start
        if position is not None:
            while position < sub.start:
                page, position = await _replay(hub, flt, position, sub.start)
                if page:
                    yield b"".join(event.data for event in page)
        position = sub.start if position is None else max(position, sub.start)
        yield _control("ready", {"cursor": position}, position)
        while True:
            batch = await sub.take()
            if sub.status_changed:
                sub.status_changed = False
                yield _control("database", {"up": hub.database_up})
            if sub.overflowed:
                yield _control("resync", {"after": position, "reason": "overflow"})
                return
            fresh = [event for event in batch if event.row.seq > position]
            if fresh:
                position = fresh[-1].row.seq
                yield b"".join(event.data for event in fresh)
            if sub.closing:
                # The server is shutting down: the client reconnects (to another replica) and
                # resumes after `position` with its Last-Event-ID.
                data = {"after": position, "reason": "shutdown"}
                yield _control("reconnect", data, position, retry=RECONNECT_MS)
                return
    finally:
        hub.unsubscribe(sub)
        SSE_CLIENTS.dec()


async def _until_unavailable(source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`source`, ended quietly when a catch-up read finds the database gone: the client
    reconnects with its Last-Event-ID and resumes after the last event it received."""
    try:
        async for chunk in source:
            yield chunk
    except DatabaseUnavailable:
        log.info("ended an event stream: %s", UNAVAILABLE_MESSAGE)


class EventStream(EventSourceResponse):
    """An SSE response that ends quietly when its client stops reading for `send_timeout`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            log.info("closed an event stream whose client stopped reading")


def _readable() -> Readable | None:
    """What the request's principal may read of the events (None: every event): the instances
    of the definition keys they hold READ_INSTANCE on, and the instances they hold READ on, of
    no tenant or of their tenants. The live feed is a push, not a read: each event is checked
    against these in Python, from the grants and tenants read once for the request; a catch-up
    replay reads only such rows (SQL)."""
    keys = actors.scope(permission_bits(PD, ["READ_INSTANCE"]), PD)
    instances = actors.scope(permission_bits(PI, ["READ"]), PI)
    tenants = actors.tenant_ids()
    if (keys.unrestricted or instances.unrestricted) and tenants is None:
        return None
    return Readable(keys, instances, tenants)


def _filter(query: Query) -> Filter:
    readable = _readable()
    instance = query.uuid("instance")
    family = query.uuid("family")
    key = query.text("definition")
    definition_id = query.text("definition_id")
    if sum(x is not None for x in (instance, family, key, definition_id)) > 1:
        raise BadRequest("give at most one of instance, family, definition, definition_id")
    if instance is not None:
        return Filter(instance_id=instance, readable=readable)
    if family is not None:
        return Filter(root_instance_id=family, readable=readable)
    return Filter(definition_key=key, definition_id=definition_id, readable=readable)


def _after(request: Request, query: Query) -> int | None:
    """Where a reconnecting client resumes: its Last-Event-ID header, else `?after=`."""
    header = request.headers.get("last-event-id", "").strip()
    if not header:
        return query.integer("after", minimum=0, maximum=INT64_MAX, strip=True)
    try:
        after = int(header)
    except ValueError as exc:
        problem = f"Last-Event-ID must be an outbox event number, got '{header}'"
        raise BadRequest(problem, header="Last-Event-ID") from exc
    if not 0 <= after <= INT64_MAX:
        raise BadRequest(f"Last-Event-ID must be from 0 to {INT64_MAX}", header="Last-Event-ID")
    return after


async def stream(request: Request) -> Response:
    require(request)
    hub: Hub | None = getattr(request.app.state, "stream_hub", None)
    if hub is None:
        return JSONResponse(
            {"type": "Unavailable", "message": "the event stream is not running", "detail": {}},
            status_code=503,
        )
    query = Query(request.query_params)
    flt, after = _filter(query), _after(request, query)
    # While the database is down a stream could not catch up: 503 now, not a broken stream.
    await run_in_threadpool(hub.engine.ping)
    return EventStream(
        _until_unavailable(events(hub, flt, after)),
        ping=hub.ping_seconds,
        sep=SEP,
        send_timeout=hub.send_timeout,
        # On shutdown the stream ends itself with `reconnect`; give it the moment to.
        shutdown_grace_period=2.0,
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
