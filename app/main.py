"""The Starlette application: a lifespan that owns one engine, and thin routes over it.

Surfaces: the console (server-rendered pages), the native JSON API under /api/v1, and the
Camunda-7-compatible subset under /engine-rest. All of them run the engine's commands.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from app import api, camunda, console, login, metrics, sso, stream
from app.access import AccessLog, BindUser
from app.auth import SESSION_COOKIE, Authenticator, AuthMiddleware, Sessions, client_address
from app.errors import http_error_handler, interlock_error_handler
from app.guard import Guard
from app.oidc import OidcClient
from app.outage import HEADERS as OUTAGE_HEADERS
from app.settings import CORS_PREFIXES, Settings
from app.shutdown import Shutdown
from app.templating import ROOT
from engine.api import Engine
from engine.commands.accounts import FIRST_ADMIN, CreateFirstAdmin
from engine.db.summaries import Folder
from engine.errors import DatabaseUnavailable, InterlockError
from engine.identity import accounts
from engine.identity.accounts import Principal
from engine.loops.alerts import AlertWatch
from engine.queries import accounts as account_reads

log = logging.getLogger("interlock")


class StartupRefused(RuntimeError):
    """The server will not start as configured (for example: open to the network, no users)."""


def ensure_credentials(engine: Engine, settings: Settings) -> dict[str, str] | None:
    """First start: on loopback, create an admin and return its secrets (shown once); bound to
    another address without any credential, refuse to start."""
    if not settings.auth:
        if not settings.loopback:
            raise StartupRefused("--no-auth is only allowed on a loopback address")
        return None
    if account_reads.count(engine) > 0:
        return None
    if not settings.loopback:
        raise StartupRefused(
            f"refusing to serve on {settings.host} without credentials: create a user first "
            "(interlock user add NAME --role admin) or bind to 127.0.0.1"
        )
    password, token = secrets.token_urlsafe(12), accounts.new_token()
    if not engine.run(CreateFirstAdmin(password, token)).created:
        return None  # another server process created the first credentials meanwhile
    return {"user": FIRST_ADMIN, "password": password, "token": token}


def print_first_credentials(first: dict[str, str] | None) -> None:
    if first:
        print(
            "\nFirst start: an admin was created. Shown once, keep it safe:\n"
            f"  console login  user {first['user']}  password {first['password']}\n"
            f"  API token      {first['token']}\n",
            flush=True,
        )


def create_app(settings: Settings, engine: Engine | None = None) -> Starlette:
    """The application. Pass `engine` to share one the caller owns (tests); otherwise the
    lifespan opens one from `settings` and closes it at shutdown."""
    sessions = Sessions(settings.secret.encode() if settings.secret else None)
    oidc = OidcClient.from_settings(settings)
    shutdown = Shutdown(settings.shutdown_grace_seconds)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        own = engine is None
        running: Engine = (
            engine
            if engine is not None
            else await run_in_threadpool(Engine, settings.database_url, home=settings.home)
        )
        app.state.engine = running
        app.state.settings = settings
        shutdown.attach(asyncio.get_running_loop())
        app.state.sessions = sessions
        app.state.authenticator = Authenticator(
            running, enabled=settings.auth, sessions=sessions, settings=settings, oidc=oidc
        )
        print_first_credentials(await run_in_threadpool(ensure_credentials, running, settings))
        executor = None
        dispatcher = None
        folder = None
        alert_watch = None
        if settings.run_jobs:
            from engine.loops.jobs import JobExecutor
            from engine.webhooks.dispatcher import Dispatcher

            executor = JobExecutor(running, history_cleanup=True)
            executor.start()
            shutdown.on_begin(executor.request_stop)
            # Webhooks are delivered wherever jobs run.
            dispatcher = Dispatcher.from_env(running)
            dispatcher.start()
            shutdown.on_begin(dispatcher.request_stop)
            # So do the summary rows' folds (engine/db/summaries.py).
            folder = Folder(running)
            folder.start()
            shutdown.on_begin(folder.request_stop)
            # And the stuck-instance alerts' raising (engine/loops/alerts.py).
            alert_watch = AlertWatch(running)
            alert_watch.start()
            shutdown.on_begin(alert_watch.request_stop)
        app.state.dispatcher = dispatcher
        hub = await stream.start_hub(app)
        shutdown.on_begin(hub.close_streams)
        demo = None
        if settings.demo:
            from app.demo import install_demo

            demo = await run_in_threadpool(install_demo, running)
        try:
            yield
        finally:
            shutdown.begin()
            if demo is not None:
                await run_in_threadpool(demo.stop)
            await stream.stop_hub(app)
            if folder is not None:
                await run_in_threadpool(folder.stop)
            if alert_watch is not None:
                await run_in_threadpool(alert_watch.stop)
            if dispatcher is not None:
                await run_in_threadpool(dispatcher.stop)
            if executor is not None:
                # The jobs in hand finish within what is left of the grace period.
                await run_in_threadpool(executor.stop, max(shutdown.remaining(), 1.0))
            if own:
                await run_in_threadpool(running.close)

    app = Starlette(
        routes=[
            Route("/health", health),
            *metrics.routes,
            *login.routes,
            *sso.routes,
            # Before the /api/v1 mount, which would otherwise swallow /api/v1/stream.
            *stream.routes,
            Mount("/api/v1", routes=api.routes),
            Mount("/engine-rest", routes=camunda.routes),
            Mount("/static", StaticFiles(directory=ROOT / "static"), name="static"),
            *console.routes,
        ],
        # The access log outermost, so it sees every answer, the guard's own included; then the
        # guard: it sees every request before authentication and every response last.
        middleware=[
            Middleware(AccessLog),
            Middleware(Guard, settings=settings),
            # Before authentication: a preflight carries no credentials.
            Middleware(ApiCors, origins=settings.cors_origins),
            Middleware(AuthMiddleware),
            Middleware(BindUser),
        ],
        exception_handlers={
            InterlockError: interlock_error_handler,
            HTTPException: http_error_handler,
        },
        lifespan=lifespan,
    )
    app.state.shutdown = shutdown
    return app


class ApiCors:
    """CORS for /engine-rest and /api/v1 (`INTERLOCK_CORS_ORIGINS`): a browser page of a listed
    origin may call them, with credentials (HTTP Basic or a Bearer token); preflights are
    answered. No other origin is allowed, and no other path: the console keeps its same-origin
    policy, its CSP and its CSRF checks. Without origins it does nothing."""

    def __init__(self, app: ASGIApp, origins: tuple[str, ...]) -> None:
        self.app = app
        self.cors: ASGIApp | None = None
        if origins:
            self.cors = CORSMiddleware(
                app,
                allow_origins=list(origins),
                allow_methods=["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"],
                allow_headers=["Authorization", "Content-Type", "Accept", "X-Request-Id"],
                allow_credentials=True,
                expose_headers=["Content-Disposition", "X-Request-Id"],
                max_age=600,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if self.cors is not None and scope["type"] == "http" and path.startswith(CORS_PREFIXES):
            await self.cors(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def health(request: Request) -> Response:
    """Liveness for anyone; the instance counts only for a caller with valid credentials (a
    Bearer token, HTTP Basic or a console session). While the database cannot be reached:
    503 `{"status": "degraded", "reason": "database unavailable"}`, at once."""
    engine: Engine = request.app.state.engine
    try:
        await run_in_threadpool(engine.ping)
        if not await _known_caller(request):
            return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})
        counts = await run_in_threadpool(engine.instance_counts)
    except DatabaseUnavailable:
        return JSONResponse(
            {"status": "degraded", "reason": "database unavailable"},
            status_code=503,
            headers=OUTAGE_HEADERS,
        )
    return JSONResponse(
        {"status": "ok", "instances": counts}, headers={"Cache-Control": "no-store"}
    )


async def _known_caller(request: Request) -> bool:
    """/health is a public path, so authentication has not run for it: try the request's
    credentials here. A principal someone else's middleware has set counts as well."""
    if isinstance(request.scope.get("principal"), Principal):
        return True
    authenticator: Authenticator = request.app.state.authenticator
    if not authenticator.enabled:
        return True
    header = request.headers.get("authorization")
    if header:
        address = client_address(request.scope)
        return await run_in_threadpool(authenticator.from_header, header, address) is not None
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return False
    return await run_in_threadpool(authenticator.sessions.read, cookie) is not None
