"""Who is calling, and may they do this?

API clients authenticate on every request with a Bearer token or HTTP Basic (Camunda clients use
Basic). Console users log in once and carry a signed session cookie; every console mutation must
also carry the session's CSRF token in the `X-CSRF-Token` header. With authentication switched
off (loopback only), everyone is an admin.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from app.errors import Forbidden, Unauthorized, error_response
from engine import accounts
from engine.accounts import Principal, Role
from engine.api import Engine

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_COOKIE = "interlock_session"
CSRF_HEADER = "x-csrf-token"
SESSION_SECONDS = 12 * 3600
API_PREFIXES = ("/api/", "/engine-rest")
PUBLIC_PATHS = ("/login", "/health", "/static/")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
ANONYMOUS_ADMIN = Principal("anonymous", Role.ADMIN)


class Sessions:
    """Signed session cookies and the CSRF token bound to each session."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def _sign(self, payload: bytes) -> str:
        return hmac.new(self._secret, payload, hashlib.sha256).hexdigest()

    def issue(self, principal: Principal) -> str:
        body = json.dumps(
            {
                "name": principal.name,
                "role": principal.role.value,
                "exp": int(time.time()) + SESSION_SECONDS,
                "sid": secrets.token_hex(8),
            }
        ).encode()
        # No padding: '=' would make the cookie value need quoting.
        return base64.urlsafe_b64encode(body).decode().rstrip("=") + "." + self._sign(body)

    def read(self, cookie: str | None) -> tuple[Principal, str] | None:
        """(principal, session id) of a valid, unexpired cookie."""
        if not cookie or "." not in cookie:
            return None
        encoded, signature = cookie.rsplit(".", 1)
        try:
            body = base64.urlsafe_b64decode(encoded.encode() + b"=" * (-len(encoded) % 4))
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(self._sign(body), signature):
            return None
        data = json.loads(body)
        if data["exp"] < time.time():
            return None
        return Principal(data["name"], Role(data["role"])), data["sid"]

    def csrf_token(self, session_id: str) -> str:
        return self._sign(b"csrf:" + session_id.encode())


class BasicCache:
    """Password hashing is slow on purpose; clients send Basic on every request. Remember
    successful checks briefly, keyed by a hash of the credentials."""

    def __init__(self, ttl: float = 60.0, size: int = 1024) -> None:
        self._ttl, self._size = ttl, size
        self._entries: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Principal | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] < time.monotonic():
                return None
            return entry[1]

    def put(self, key: str, principal: Principal) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic() + self._ttl, principal)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class Authenticator:
    def __init__(self, engine: Engine, *, enabled: bool, sessions: Sessions) -> None:
        self.engine = engine
        self.enabled = enabled
        self.sessions = sessions
        self._basic = BasicCache()

    def from_header(self, header: str) -> Principal | None:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value:
            with self.engine.connection() as conn:
                return accounts.verify_token(conn, value.strip())
        if scheme.lower() == "basic" and value:
            try:
                name, _, password = base64.b64decode(value.strip()).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return None
            key = hashlib.sha256(f"{name}\0{password}".encode()).hexdigest()
            cached = self._basic.get(key)
            if cached is not None:
                return cached
            with self.engine.connection() as conn:
                found = accounts.verify_password(conn, name, password)
            if found is not None:
                self._basic.put(key, found)
            return found
        return None

    def login(self, name: str, password: str) -> Principal | None:
        with self.engine.connection() as conn:
            return accounts.verify_password(conn, name, password)


class AuthMiddleware:
    """Pure ASGI: sets `scope["principal"]` (and `scope["session_id"]` for console sessions),
    answers 401 for API calls without valid credentials, sends console visitors to /login, and
    refuses console mutations without the session's CSRF token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The lifespan builds the authenticator once the engine is open.
        self.auth: Authenticator = scope["app"].state.authenticator
        path: str = scope["path"]
        method: str = scope["method"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if not self.auth.enabled:
            scope["principal"] = ANONYMOUS_ADMIN
            scope["session_id"] = "anonymous"
            await self.app(scope, receive, send)
            return
        if path.startswith(API_PREFIXES):
            principal = None
            if "authorization" in headers:
                principal = await run_in_threadpool(self.auth.from_header, headers["authorization"])
            if principal is None:
                await error_response(
                    Unauthorized("valid credentials are required (Bearer token or HTTP Basic)")
                )(scope, receive, send)
                return
            scope["principal"] = principal
            await self.app(scope, receive, send)
            return
        if path.startswith(PUBLIC_PATHS) or path == "/favicon.ico":
            await self.app(scope, receive, send)
            return
        session = self.auth.sessions.read(_cookie(headers.get("cookie", ""), SESSION_COOKIE))
        if session is None:
            if method in SAFE_METHODS and "hx-request" not in headers:
                await _redirect("/login?next=" + path)(scope, receive, send)
            else:
                await error_response(Unauthorized("log in first"))(scope, receive, send)
            return
        principal, session_id = session
        if method not in SAFE_METHODS:
            sent = headers.get(CSRF_HEADER, "")
            if not hmac.compare_digest(sent, self.auth.sessions.csrf_token(session_id)):
                await error_response(Forbidden("missing or wrong CSRF token"))(scope, receive, send)
                return
        scope["principal"] = principal
        scope["session_id"] = session_id
        await self.app(scope, receive, send)


def principal_of(request: Request) -> Principal:
    principal = request.scope.get("principal")
    if not isinstance(principal, Principal):
        raise Unauthorized("not authenticated")
    return principal


def require(request: Request, role: Role) -> Principal:
    """The caller, if their role allows `role`'s actions; else Forbidden."""
    principal = principal_of(request)
    if not principal.role.allows(role):
        raise Forbidden(
            f"'{principal.name}' is {principal.role.value}; this needs {role.value}",
            role=principal.role.value,
            needed=role.value,
        )
    return principal


def csrf_token(request: Request, sessions: Sessions) -> str:
    return sessions.csrf_token(str(request.scope.get("session_id", "")))


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _redirect(location: str) -> Any:
    from starlette.responses import RedirectResponse

    return RedirectResponse(location, status_code=303)
