"""The outermost layer of every HTTP request: what is refused before any route runs, and what
every response carries.

Before the application:
- every request gets an id (`scope["request_id"]`, answered as `X-Request-Id` and bound to the
  logging context): the caller's own `X-Request-Id` when it is a UUID (32 hex digits, or the
  hyphenated form, as proxies make them), else a new one; and a fresh CSP nonce
  (`scope["csp_nonce"]`, which templates read as `csp_nonce`);
- a header value that is not UTF-8 is a 400; so is a NUL character in the path or in a query
  parameter (the database refuses NUL in text, and it never means anything here);
- with authentication off (`--no-auth`, loopback only), a `Host` that is not a loopback name or
  address or the host of the public URL is a 421 on every route: a page of another site whose
  name was rebound to 127.0.0.1 (DNS rebinding) reaches nothing;
- a mutation (any method but GET, HEAD and OPTIONS) on any surface, the console's, /api/v1 and
  /engine-rest, whose `Origin` is not this server's own, or whose `Sec-Fetch-Site` says another
  origin, is a 403: a page of another site cannot make a browser change anything here, whether
  authentication is off or the browser holds credentials. Scripts, workers and CLI clients send
  no `Origin` and pass;
- a body larger than the route's limit is a 413: a too large `Content-Length` is refused before
  anything is read, and the bytes of a chunked body are counted as they arrive, so that reading
  stops at the limit instead of after the whole body.

On the way out every response gets `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`,
`Referrer-Policy` and a Content-Security-Policy: the strict page policy (scripts only from this
origin or with the response's nonce) for HTML, and `default-src 'none'; frame-ancestors 'none'`
for everything else, unless the route set a policy of its own (raw deployed files do).

An exception no route handled is answered here with a generic 500 naming the request id; the
traceback goes to the log with the same id, never to the caller.

This is a small ASGI middleware of our own: the security-header libraries only add headers, and
the body-size limiters either buffer the body or look at `Content-Length` alone; none counts a
streamed body's bytes before the application reads them and also checks the encoding of headers.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import secrets
import uuid
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.outage import unavailable_response
from app.settings import CORS_PREFIXES, Settings
from engine.db.outage import UNAVAILABLE_MESSAGE, is_database_outage
from engine.observe import logs

log = logging.getLogger("interlock.guard")

# The id of the request being served, for code that has no request at hand (error translation);
# the routes' threads see it too, as Starlette runs them in a copy of the request's context.
REQUEST_ID: ContextVar[str] = ContextVar("interlock_request_id", default="-")


def current_request_id() -> str:
    return REQUEST_ID.get()


# A request id a caller (a proxy) may choose: a UUID, bare or hyphenated. Anything else (free
# text could forge or break log lines) is replaced by one of ours.
_REQUEST_ID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")


def _incoming_request_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"x-request-id":
            text = value.decode("latin-1").strip().lower()
            return text if _REQUEST_ID.fullmatch(text) else None
    return None


# The routes that take whole BPMN files: multipart uploads get the larger deployment limit.
DEPLOYMENT_ROUTES = frozenset(
    {
        ("POST", "/api/v1/deployments"),
        ("POST", "/engine-rest/deployment/create"),
        ("POST", "/engine-rest/engine/default/deployment/create"),
    }
)

# 'unsafe-inline' is allowed for styles only: templates set custom properties in style="--x: .."
# attributes and bpmn-js positions its overlays with inline styles. Scripts never run inline
# unless they carry the response's nonce (no page has one today).
PAGE_POLICY = (
    "default-src 'self'; "
    "script-src 'self' 'nonce-{nonce}'; "
    "style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "connect-src 'self'; "
    "object-src 'none'; "
    "base-uri 'none'; "
    "form-action 'self'; "
    "frame-ancestors 'none'"
)
# JSON, redirects, static files and anything else that is not a page: nothing may run or load.
OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'"
# Raw deployed files (BPMN XML as uploaded): rendered, if ever, in an opaque origin, inert.
RAW_FILE_POLICY = "sandbox; default-src 'none'"


def raw_file_headers(download: str | None = None) -> dict[str, str]:
    """The headers for a response that carries a deployed file's bytes as they were uploaded:
    never sniffed, never run, and with `download` a file name to save it as."""
    headers = {"Content-Security-Policy": RAW_FILE_POLICY, "X-Content-Type-Options": "nosniff"}
    if download is not None:
        safe = "".join(c for c in download if c.isalnum() or c in "._-") or "resource"
        headers["Content-Disposition"] = f'attachment; filename="{safe}"'
    return headers


class Refused(Exception):
    """A request the guard answers itself, before the application sees it."""

    def __init__(self, status: int, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


class Guard:
    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.max_body = settings.max_body_bytes
        self.max_deployment = settings.max_deployment_bytes
        public = (settings.public_url or "").lower()
        self.hsts = public.startswith("https://")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _incoming_request_id(scope) or uuid.uuid4().hex
        nonce = secrets.token_urlsafe(18)
        scope["request_id"] = request_id
        scope["csp_nonce"] = nonce
        REQUEST_ID.set(request_id)
        logs.bind(request_id=request_id)
        camunda = str(scope.get("path", "")).startswith("/engine-rest")
        state: dict[str, Any] = {"started": False, "aborted": False, "received": 0}

        async def guarded_send(message: Message) -> None:
            if state["aborted"]:
                return  # the guard has answered already; the application's answer is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
                message = {
                    **message,
                    "headers": self._headers(message.get("headers", []), nonce, request_id),
                }
            await send(message)

        async def refuse(problem: Refused) -> None:
            await _answer(guarded_send, problem, request_id, camunda=camunda)

        limit = self._limit(scope)
        try:
            _check_request(scope, limit)
            _check_browser(scope, self.settings)
        except Refused as problem:
            await refuse(problem)
            return

        async def limited_receive() -> Message:
            if state["aborted"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    if not state["started"]:
                        await refuse(_too_large(limit))
                    state["aborted"] = True
                    return {"type": "http.disconnect"}
            return message

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception as exc:
            if state["aborted"]:
                log.debug("request %s stopped at the body limit: %r", request_id, exc)
                return
            if is_database_outage(exc) and not state["started"]:
                # Raised before any route could answer (authentication reads the database).
                log.warning("request %s: %s", request_id, UNAVAILABLE_MESSAGE)
                await unavailable_response(scope)(scope, limited_receive, guarded_send)
                return
            log.error(
                "request %s: %s %s failed",
                request_id,
                scope.get("method"),
                scope.get("path"),
                exc_info=exc,
            )
            if state["started"]:
                raise
            await _answer(
                guarded_send,
                Refused(500, f"internal error; request id {request_id}"),
                request_id,
                camunda=False,
                type_="InternalError",
            )

    def _limit(self, scope: Scope) -> int:
        if (scope.get("method"), scope.get("path")) in DEPLOYMENT_ROUTES:
            return self.max_deployment
        return self.max_body

    def _headers(
        self, headers: Iterable[tuple[bytes, bytes]], nonce: str, request_id: str
    ) -> list[tuple[bytes, bytes]]:
        kept = [(k, v) for k, v in headers if k.lower() != b"x-request-id"]
        present = {k.lower() for k, _ in kept}
        content_type = next((v for k, v in kept if k.lower() == b"content-type"), b"")
        page = content_type.lower().startswith(b"text/html")
        wanted: list[tuple[bytes, str]] = [
            (b"content-security-policy", PAGE_POLICY.format(nonce=nonce) if page else OTHER_POLICY),
            (b"x-content-type-options", "nosniff"),
            (b"x-frame-options", "DENY"),
            (b"referrer-policy", "same-origin"),
            (b"cross-origin-opener-policy", "same-origin"),
        ]
        if self.hsts:
            wanted.append((b"strict-transport-security", "max-age=31536000"))
        for name, value in wanted:
            if name not in present:
                kept.append((name, value.encode()))
        kept.append((b"x-request-id", request_id.encode()))
        return kept


def _too_large(limit: int) -> Refused:
    return Refused(413, f"the request body is larger than {limit} bytes", limit=limit)


def _check_request(scope: Scope, limit: int) -> None:
    """Raise `Refused` for what no route should see."""
    for name, value in scope.get("headers", []):
        try:
            value.decode("utf-8")
        except UnicodeDecodeError:
            header = name.decode("latin-1")
            raise Refused(
                400, f"the value of header '{header}' is not valid UTF-8", header=header
            ) from None
        if name.lower() == b"content-length":
            text = value.decode("ascii", "replace").strip()
            if not text.isdigit():
                raise Refused(400, "Content-Length must be a whole number of bytes")
            if int(text) > limit:
                raise _too_large(limit)
    path = str(scope.get("path", ""))
    if "\x00" in path:
        raise Refused(400, "the path contains a NUL character (%00)", path=_shown(path))
    query = scope.get("query_string", b"").decode("latin-1")
    for name, value in parse_qsl(query, keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            shown = _shown(name)
            raise Refused(
                400, f"query parameter '{shown}' contains a NUL character (%00)", parameter=shown
            )


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# What a browser says of a request from this server's own pages (or one the user typed).
_OWN_FETCH_SITES = ("same-origin", "none")


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def own_origin(scope: Scope, settings: Settings) -> str:
    """This server's origin: from the configured public URL, else the Host the request came to
    (with authentication off, `_check_browser` has made sure that Host is ours)."""
    if settings.public_url:
        parts = urlsplit(settings.public_url)
        return _origin(parts.scheme, parts.netloc)
    return _origin(str(scope.get("scheme", "http")), _header(scope, b"host") or "")


def _origin(scheme: str, netloc: str) -> str:
    scheme, netloc = scheme.lower(), netloc.lower().rstrip("/")
    default = {"http": ":80", "https": ":443"}.get(scheme)
    if default and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    return f"{scheme}://{netloc}"


def origin_allowed(scope: Scope, settings: Settings) -> bool:
    """A request without `Origin` (not a browser's cross-origin request) or from our origin."""
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    if not parts.scheme or not parts.netloc:
        return False  # "null" (sandboxed or privacy-sensitive contexts) included
    return _origin(parts.scheme, parts.netloc) == own_origin(scope, settings)


def listed_origin(scope: Scope, settings: Settings) -> bool:
    """A browser's request to /engine-rest or /api/v1 from an origin `INTERLOCK_CORS_ORIGINS`
    lists: a front-end the operator trusts to call them (app/main.py `ApiCors`)."""
    origin = _header(scope, b"origin")
    path = str(scope.get("path", ""))
    return origin is not None and origin in settings.cors_origins and path.startswith(CORS_PREFIXES)


def _host_name(host: str) -> str:
    """The name or address of a Host header's value, without port, brackets or final dot."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def loopback_host(host: str, settings: Settings) -> bool:
    """Whether a Host header names this server in the loopback mode: `localhost`, a loopback
    address (127.0.0.0/8, ::1), or the host of the public URL; any port."""
    name = _host_name(host)
    if not name:
        return False
    if name == "localhost":
        return True
    if settings.public_url and name == (urlsplit(settings.public_url).hostname or "").rstrip("."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _check_browser(scope: Scope, settings: Settings) -> None:
    """Raise `Refused` for what a page of another site could make a browser send."""
    if not settings.auth:
        host = _header(scope, b"host")
        if host is None or not loopback_host(host, settings):
            shown = _shown(host or "")
            raise Refused(
                421,
                f"this server does not answer for host '{shown}': with authentication off it "
                "answers only for localhost, loopback addresses and the host of the public URL",
                host=shown,
            )
    if scope.get("method") in SAFE_METHODS or listed_origin(scope, settings):
        return
    if not origin_allowed(scope, settings):
        origin = _shown(_header(scope, b"origin") or "")
        raise Refused(
            403,
            f"cross-origin request refused: a {scope.get('method')} from origin '{origin}' is "
            "accepted only from this server's own origin",
            origin=origin,
        )
    site = (_header(scope, b"sec-fetch-site") or "").strip().lower()
    if site and site not in _OWN_FETCH_SITES:
        raise Refused(
            403,
            "cross-origin request refused: the browser sent it from another page "
            f"(Sec-Fetch-Site: {_shown(site)})",
            sec_fetch_site=_shown(site),
        )


def _shown(text: str) -> str:
    return text.replace("\x00", "%00")[:200]


async def _answer(
    send: Send, problem: Refused, request_id: str, *, camunda: bool, type_: str | None = None
) -> None:
    """A JSON error in the shape of the surface asked: Camunda's `{type, message}` under
    /engine-rest, `{type, message, detail}` everywhere else."""
    if type_ is None:
        if camunda:
            type_ = _CAMUNDA_TYPES.get(problem.status, "InvalidRequestException")
        else:
            type_ = _TYPES.get(problem.status, "BadRequest")
    body: dict[str, Any] = {"type": type_, "message": problem.message}
    body["detail"] = {**problem.detail, "request_id": request_id}
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
    ]
    if problem.status == 413:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


_TYPES = {
    400: "BadRequest",
    403: "Forbidden",
    413: "PayloadTooLarge",
    421: "MisdirectedRequest",
    500: "InternalError",
}
_CAMUNDA_TYPES = {403: "AuthorizationException"}
