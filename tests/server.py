"""A real Interlock server on 127.0.0.1 for tests: uvicorn in a thread, on a free port."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn

from app.main import create_app
from app.settings import Settings
from bench import serving
from bench.serving import free_port as free_port
from bench.serving import login_token as login_token
from engine.api import Engine
from engine.commands.accounts import CreateToken, CreateUser
from engine.identity import accounts
from engine.identity.accounts import Role

PASSWORD = "correct-horse-battery"


@dataclass
class LiveServer:
    url: str
    engine: Engine
    # role name -> API token; every role also has a user named after it with PASSWORD.
    tokens: dict[str, str] = field(default_factory=dict)

    def bearer(self, role: str = "admin") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}


def console_login(url: str, name: str, password: str = PASSWORD) -> httpx.Response:
    """POST /login as a browser does: GET the form first (its cookie and token), then submit."""
    with httpx.Client(base_url=url) as client:
        return serving.console_login(client, name, password)


def role_credentials(engine: Engine) -> dict[str, str]:
    """Users `viewer`, `operator` and `admin` (password PASSWORD) and one API token per role,
    `<role>-token`; the tokens by role."""
    tokens: dict[str, str] = {}
    for role in Role:
        engine.run(CreateUser(role.value, role, PASSWORD))
        tokens[role.value] = accounts.new_token()
        engine.run(CreateToken(f"{role.value}-token", role, tokens[role.value]))
    return tokens


@contextmanager
def live_server(
    database_url: str,
    *,
    auth: bool = True,
    run_jobs: bool = True,
    settings_options: dict[str, Any] | None = None,
    port: int | None = None,
    **engine_options: Any,
) -> Iterator[LiveServer]:
    """Serve the app over `database_url` until the block ends. Users `viewer`, `operator` and
    `admin` (password PASSWORD) and one API token per role exist. `settings_options` are more
    fields of the server's `Settings`; `port` one picked beforehand (`free_port`), else the
    server listens on one the system gives it (no other process can take it in between)."""
    engine = Engine(database_url, migrate=False, **engine_options)
    tokens = role_credentials(engine)
    settings = Settings(
        database_url=database_url,
        auth=auth,
        run_jobs=run_jobs,
        secret="test",
        **(settings_options or {}),
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, engine), host="127.0.0.1", port=port or 0, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = port or server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", engine, tokens)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        engine.close()
