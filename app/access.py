"""The access log and the logging context of a request.

`AccessLog` is the outermost layer: it starts each request with an empty logging context and
writes one line per request when the response is done (method, path without the query string,
status, duration, request id, user). `BindUser`, right after authentication, binds the caller's
name to the logging context, so every line the request causes (its commands' included) carries
it; the guard binds the request id.
"""

from __future__ import annotations

import logging
import time

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.auth import ANONYMOUS_ADMIN
from engine.core import audit
from engine.identity.accounts import Principal
from engine.identity.grants import Grants
from engine.observe import logs
from engine.queries import grants as grant_reads
from engine.states import AuditChannel, Role

log = logging.getLogger("interlock.access")


def _path(scope: Scope) -> str:
    """The path as sent (percent-encoded, so a line stays one line), never the query string."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        return raw.decode("latin-1").partition("?")[0]
    return str(scope.get("path", ""))


def _user(scope: Scope) -> str | None:
    principal = scope.get("principal")
    return principal.name if isinstance(principal, Principal) else None


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        logs.clear()
        started = time.perf_counter()
        status = 500

        async def noting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            millis = (time.perf_counter() - started) * 1000
            method, path = str(scope.get("method", "")), _path(scope)
            extra: dict[str, object] = {
                "method": method,
                "path": path,
                "status": status,
                "duration_ms": round(millis, 3),
            }
            request_id, user = scope.get("request_id"), _user(scope)
            if request_id:
                extra["request_id"] = request_id
            if user is not None:
                extra["user"] = user
            log.info(
                "%s %s %d %.1f ms id=%s%s",
                method,
                path,
                status,
                millis,
                request_id or "-",
                "" if user is None else f" user={user}",
                extra=extra,
            )


def _channel(scope: Scope) -> AuditChannel:
    """The channel a request's mutations are audited under, told by its mount."""
    path = str(scope.get("path", ""))
    if path.startswith("/engine-rest/") or path == "/engine-rest":
        return AuditChannel.ENGINE_REST
    if path.startswith("/api/"):
        return AuditChannel.API
    return AuditChannel.CONSOLE


async def _access(
    scope: Scope, principal: Principal
) -> tuple[Grants | None, frozenset[str] | None]:
    """What the principal may do, and the tenants whose rows they see besides those of no
    tenant (a user's own and their groups', an API token's own group's), read once for the
    request in one statement. Grants None: the anonymous admin of a server without
    authentication, who sees everything; tenants None (every tenant): admins."""
    if principal is ANONYMOUS_ADMIN:
        return None, None
    engine = scope["app"].state.engine
    found = await run_in_threadpool(
        grant_reads.access, engine, principal.user_id, principal.group_id
    )
    every_tenant = principal.role is Role.ADMIN
    return found.grants, None if every_tenant else found.tenant_ids


class BindUser:
    """Binds the authenticated caller's name (`user`) to the logging context, and makes the
    caller the actor of the commands the request runs (engine/core/audit.py), carrying the
    caller's grants: every read of the request shows only the rows they cover."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("principal") if scope["type"] == "http" else None
        if not isinstance(principal, Principal):
            await self.app(scope, receive, send)
            return
        logs.bind(user=principal.name)
        grants, tenants = await _access(scope, principal)
        actor = audit.Actor(principal.name, _channel(scope), grants=grants, tenant_ids=tenants)
        with audit.acting(actor):
            await self.app(scope, receive, send)
