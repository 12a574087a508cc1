"""A real server with the event stream, and an SSE client that runs in a thread of its own."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette

from app.main import create_app
from app.settings import Settings
from app.stream import Hub
from engine.api import Engine
from tests.server import console_login, free_port, role_credentials


def create_stream_app(settings: Settings, engine: Engine, **hub_options: Any) -> Starlette:
    """The application as `app.main` builds it, with the hub's settings overridden once its
    lifespan has started the hub."""
    app = create_app(settings, engine)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with inner(app):
            hub: Hub = app.state.stream_hub
            for name, value in hub_options.items():
                setattr(hub, name, value)
            yield

    app.router.lifespan_context = lifespan
    return app


@dataclass
class StreamServer:
    url: str
    engine: Engine
    database_url: str
    app: Starlette
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def hub(self) -> Hub:
        hub: Hub = self.app.state.stream_hub
        return hub

    def login(self, role: str = "viewer") -> dict[str, str]:
        response = console_login(self.url, role)
        assert response.status_code == 303, response.text
        return {"interlock_session": response.cookies["interlock_session"]}

    def subscriber_count(self) -> int:
        """Read on the server's event loop, where the hub's subscriber sets live."""
        result: list[int] = []
        done = threading.Event()

        def read() -> None:
            result.append(self.hub.subscriber_count)
            done.set()

        self.hub.loop.call_soon_threadsafe(read)
        assert done.wait(5)
        return result[0]

    def wait_subscribers(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.subscriber_count() != count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.subscriber_count()} subscribers, expected {count}")
            time.sleep(0.02)


@contextmanager
def stream_server(database_url: str, **hub_options: Any) -> Iterator[StreamServer]:
    engine = Engine(database_url, migrate=False, pool_size=12)
    tokens = role_credentials(engine)
    port = free_port()
    settings = Settings(database_url=database_url, auth=True, run_jobs=False, secret="test")
    app = create_stream_app(settings, engine, **hub_options)
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=3
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield StreamServer(f"http://127.0.0.1:{port}", engine, database_url, app, tokens)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        engine.close()


@dataclass(frozen=True)
class SSE:
    id: int | None
    event: str
    data: dict[str, Any]


class SSEClient:
    """Reads one stream in a background thread, collecting events and counting comments."""

    def __init__(
        self,
        url: str,
        *,
        cookies: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.url = url
        self.cookies = cookies or {}
        self.headers = headers or {}
        self.events: list[SSE] = []
        self.max_id = -1
        self.comments = 0
        self.status: int | None = None
        self.ended = False
        self.error: BaseException | None = None
        self._condition = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._started.wait(10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._started.set()
        try:
            await self._read()
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # reported to the test through `error`
            self.error = exc
        finally:
            with self._condition:
                self.ended = True
                self._condition.notify_all()

    async def _read(self) -> None:
        timeout = httpx.Timeout(10.0, read=None)
        async with (
            httpx.AsyncClient(cookies=self.cookies, timeout=timeout) as client,
            client.stream("GET", self.url, headers=self.headers) as response,
        ):
            with self._condition:
                self.status = response.status_code
                self._condition.notify_all()
            if response.status_code != 200:
                return
            fields: dict[str, str] = {}
            async for line in response.aiter_lines():
                if line.startswith(":"):
                    with self._condition:
                        self.comments += 1
                        self._condition.notify_all()
                    continue
                if line == "":
                    if fields:
                        self._dispatch(fields)
                        fields = {}
                    continue
                name, _, value = line.partition(":")
                fields[name] = value[1:] if value.startswith(" ") else value

    def _dispatch(self, fields: dict[str, str]) -> None:
        seq = int(fields["id"]) if "id" in fields else None
        event = SSE(seq, fields.get("event", "message"), json.loads(fields.get("data", "{}")))
        with self._condition:
            self.events.append(event)
            if seq is not None:
                self.max_id = max(self.max_id, seq)
            self._condition.notify_all()

    def wait_for(self, predicate: Callable[[SSEClient], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        with self._condition:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.ended:
                    raise AssertionError(
                        f"not seen: {len(self.events)} events, status {self.status}, "
                        f"ended {self.ended}, error {self.error!r}"
                    )
                self._condition.wait(remaining)

    def ready_cursor(self, timeout: float = 20.0) -> int:
        self.wait_for(lambda c: any(e.event == "ready" for e in c.events), timeout)
        ready = next(e for e in self.events if e.event == "ready")
        assert ready.id is not None
        return ready.id

    def seqs(self) -> list[int]:
        """Ids of outbox events received (control events excluded)."""
        with self._condition:
            return [e.id for e in self.events if e.id is not None and e.event != "ready"]

    def last_id(self) -> int | None:
        with self._condition:
            ids = [e.id for e in self.events if e.id is not None]
            return ids[-1] if ids else None

    def wait_seq(self, seq: int, timeout: float = 30.0) -> None:
        self.wait_for(lambda c: c.max_id >= seq, timeout)

    def close(self) -> None:
        if self._loop is not None and self._task is not None and not self.ended:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout=10)
        assert not self._thread.is_alive()


class SilentClient:
    """Opens a stream over a raw socket and reads nothing until asked to."""

    def __init__(self, url: str, path: str, cookies: dict[str, str]) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)))
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
            f"Cookie: {cookie}\r\n\r\n"
        )
        self.sock.sendall(request.encode())

    def read_all(self, timeout: float = 30.0) -> bytes:
        """Everything the server sends until it ends the response (or `timeout`)."""
        self.sock.settimeout(timeout)
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n0\r\n\r\n" in b"".join(chunks[-2:]):
                break
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()
