"""A console server for browser tests that can be stopped and started again on the same port,
over one engine the test also drives (the job executor and the event stream run in the server)."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette

from app.main import create_app
from app.settings import Settings
from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.core.executor import Clock, system_clock
from engine.identity.accounts import Role
from tests.server import PASSWORD, free_port

__all__ = ["PASSWORD", "ConsoleServer"]


def with_stream(app: Starlette) -> Starlette:
    """Serve the event stream even where app.main does not wire it in yet."""
    from app import stream

    paths = {getattr(route, "path", None) for route in app.router.routes}
    if "/stream" not in paths:
        app.router.routes.extend(stream.routes)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(the_app: Starlette) -> AsyncIterator[Any]:
        async with inner(the_app) as state:
            own = getattr(the_app.state, "stream_hub", None) is None
            if own:
                await stream.start_hub(the_app)
            try:
                yield state
            finally:
                if own:
                    await stream.stop_hub(the_app)

    app.router.lifespan_context = lifespan
    return app


class ConsoleServer:
    """uvicorn in a thread. Users viewer, operator and admin log in with PASSWORD."""

    def __init__(
        self, database_url: str, *, clock: Clock = system_clock, **settings_options: Any
    ) -> None:
        self.database_url = database_url
        self.settings_options = settings_options
        self.engine = Engine(database_url, migrate=False, clock=clock)
        for role in Role:
            self.engine.run(CreateUser(role.value, role, PASSWORD))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ConsoleServer:
        settings = Settings(
            database_url=self.database_url,
            auth=True,
            secret="browser-tests",
            **self.settings_options,
        )
        app = with_stream(create_app(settings, self.engine))
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=self.port,
                log_level="warning",
                timeout_graceful_shutdown=1,
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the console server did not start")
            time.sleep(0.02)
        self._server, self._thread = server, thread
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=20)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def close(self) -> None:
        self.stop()
        self.engine.close()
