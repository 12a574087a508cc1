"""A webhook receiver for tests: a real HTTP server on 127.0.0.1 in a thread that records every
POST, fails a share of them with 500s, can go down (its port refuses connections) and come back
on the same port, and notes any delivery id that arrives while the same id is still in flight.

Besides `url` it answers badly on purpose: `drip_url` answers 200 and then its body a byte every
half second (DRIP_BYTES of them: 30 s); `endless_url` answers 200 with a body that never ends;
`redirect_url` answers 302 to `url`. Each such answer is noted in `streams` once the client has
gone away or the body is complete."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DRIP_BYTES = 60
DRIP_EVERY_SECONDS = 0.5


@dataclass(frozen=True)
class Received:
    delivery_id: str
    event: str
    body: dict[str, Any]
    raw: bytes
    signature: str
    status: int


@dataclass(frozen=True)
class Streamed:
    """A body `path` sent: how many bytes, and whether it was complete or the client left."""

    path: str
    sent: int
    complete: bool


@dataclass
class Receiver:
    """Answers 2xx unless told otherwise. `failure_rate`: the share of POSTs answered 500;
    `always_fail`: every POST gets a 500; `hold_seconds`: how long each answer takes at most."""

    failure_rate: float = 0.0
    always_fail: bool = False
    hold_seconds: float = 0.0
    seed: int = 21
    received: list[Received] = field(default_factory=list)
    overlaps: list[str] = field(default_factory=list)
    streams: list[Streamed] = field(default_factory=list)
    _in_flight: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    port: int = 0

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def drip_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/drip"

    @property
    def endless_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/endless"

    @property
    def redirect_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/redirect"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if self.path != "/hook":
                    receiver._misbehave(self, raw)
                    return
                status = receiver._answer(
                    raw,
                    self.headers.get("X-Interlock-Delivery", ""),
                    self.headers.get("X-Interlock-Event", ""),
                    self.headers.get("X-Interlock-Signature", ""),
                )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Go down: the port refuses connections until `start()`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _answer(self, raw: bytes, delivery_id: str, event: str, signature: str) -> int:
        with self._lock:
            if delivery_id in self._in_flight:
                self.overlaps.append(delivery_id)
            self._in_flight.add(delivery_id)
            fail = self.always_fail or self._rng.random() < self.failure_rate
            hold = self._rng.uniform(0, self.hold_seconds)
        try:
            if hold:
                time.sleep(hold)
            status = 500 if fail else 204
            with self._lock:
                self.received.append(
                    Received(delivery_id, event, json.loads(raw), raw, signature, status)
                )
            return status
        finally:
            with self._lock:
                self._in_flight.discard(delivery_id)

    def _misbehave(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        with self._lock:
            self.received.append(
                Received(
                    handler.headers.get("X-Interlock-Delivery", ""),
                    handler.headers.get("X-Interlock-Event", ""),
                    json.loads(raw),
                    raw,
                    handler.headers.get("X-Interlock-Signature", ""),
                    302 if handler.path == "/redirect" else 200,
                )
            )
        if handler.path == "/redirect":
            handler.send_response(302)
            handler.send_header("Location", self.url)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        if handler.path == "/drip":
            handler.send_header("Content-Length", str(DRIP_BYTES))
        handler.end_headers()
        sent, complete = 0, False
        chunk = b"x" * 65536
        try:
            while True:
                if handler.path == "/drip":
                    if sent == DRIP_BYTES:
                        complete = True
                        break
                    handler.wfile.write(b"x")
                    handler.wfile.flush()
                    sent += 1
                    time.sleep(DRIP_EVERY_SECONDS)
                else:
                    handler.wfile.write(chunk)
                    sent += len(chunk)
        except OSError:
            pass  # the client went away
        with self._lock:
            self.streams.append(Streamed(handler.path, sent, complete))

    # -- what arrived -----------------------------------------------------------------------------

    def accepted(self) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.status < 300]

    def first_acceptances(self) -> list[Received]:
        """Each delivery once (its first accepted POST), in the order they were accepted."""
        seen: set[str] = set()
        firsts = []
        for r in self.accepted():
            if r.delivery_id not in seen:
                seen.add(r.delivery_id)
                firsts.append(r)
        return firsts


def verify(secret: str, received: Received) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), received.raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, received.signature)
