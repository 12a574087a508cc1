"""Console log-in and log-out.

The log-in form is protected against login CSRF by a pre-session token: GET /login sets a
short-lived cookie with a random value and puts the same value in the form; a POST whose field
does not match the cookie is refused (403) without checking the password. (The guard,
app/guard.py, also refuses a POST whose `Origin` is another site's.) A successful log-in starts a
new session (the command `StartSession`) and sets its cookie; log-out ends it (`EndSessions`, as
an admin ending it would). Both are audited as the user's own console actions; a failed log-in
changes nothing and is not audited (it is throttled, app/auth.py).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.auth import SESSION_COOKIE, Authenticator, TooManyAttempts, same_bytes, session_of
from app.params import Query
from app.templating import templates

LOGIN_COOKIE = "interlock_login"
LOGIN_TOKEN_FIELD = "login_token"
# How long a log-in form stays usable after it was shown.
LOGIN_TOKEN_SECONDS = 15 * 60
_LOGIN_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")


def _authenticator(request: Request) -> Authenticator:
    authenticator: Authenticator = request.app.state.authenticator
    return authenticator


def _next(request: Request, value: str | None) -> str:
    # Only local paths: never redirect a user to another site after log-in.
    return value if value and value.startswith("/") and not value.startswith("//") else "/"


def _page(
    request: Request,
    context: dict[str, Any],
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """The log-in page with a login token: the browser's own when it has a well-formed one."""
    token = request.cookies.get(LOGIN_COOKIE, "")
    if not _LOGIN_TOKEN.fullmatch(token):
        token = secrets.token_urlsafe(32)
    response = templates.TemplateResponse(
        request,
        "login.html",
        {"login_token": token, **context},
        status_code=status_code,
        headers={"Cache-Control": "no-store", **(headers or {})},
    )
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=LOGIN_TOKEN_SECONDS,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=_authenticator(request).settings.cookies_secure,
    )
    return response


async def login_page(request: Request) -> Response:
    return _page(request, {"next": _next(request, Query(request.query_params).text("next"))})


async def login(request: Request) -> Response:
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = _next(request, str(form.get("next", "/")))
    sent = str(form.get(LOGIN_TOKEN_FIELD, ""))
    if not same_bytes(sent, request.cookies.get(LOGIN_COOKIE, "")):
        return _page(
            request,
            {"next": target, "name": name, "error": "The log-in form expired; please try again."},
            status_code=403,
        )
    authenticator = _authenticator(request)
    address = request.client.host if request.client else None
    found = await run_in_threadpool(authenticator.login, name, password, address)
    if isinstance(found, TooManyAttempts):
        return _page(
            request,
            {
                "next": target,
                "name": name,
                "error": f"Too many failed log-ins. Try again in {found.retry_after} seconds.",
            },
            status_code=429,
            headers={"Retry-After": str(found.retry_after)},
        )
    if found is None:
        return _page(
            request,
            {"next": target, "error": "Wrong user name or password.", "name": name},
            status_code=401,
        )
    session = await run_in_threadpool(
        authenticator.sessions.issue,
        found,
        client_address=address,
        user_agent=request.headers.get("user-agent"),
    )
    settings = authenticator.settings
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        session.token,
        max_age=settings.session_max_seconds,
        httponly=True,
        samesite="strict",
        secure=settings.cookies_secure,
    )
    response.delete_cookie(
        LOGIN_COOKIE,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=settings.cookies_secure,
    )
    return response


async def logout(request: Request) -> Response:
    """POST only, with the session's CSRF token (the middleware checks it): ends the session."""
    session = session_of(request)
    if session is not None:
        await run_in_threadpool(_authenticator(request).sessions.end, session.id)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(
        SESSION_COOKIE,
        httponly=True,
        samesite="strict",
        secure=_authenticator(request).settings.cookies_secure,
    )
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
