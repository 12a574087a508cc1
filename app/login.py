"""Console log-in and log-out.

The log-in form is protected against login CSRF by a pre-session token: GET /login sets a
short-lived cookie with a random value and puts the same value in the form; a POST whose field
does not match the cookie is refused (403) without checking the password. (The guard,
app/guard.py, also refuses a POST whose `Origin` is another site's.) A successful log-in starts a
new session (the command `StartSession`) and sets its cookie; log-out ends it (`EndSessions`, as
an admin ending it would). Both are audited as the user's own console actions; a failed log-in
changes nothing and is not audited (it is throttled, app/auth.py).

With single sign-on configured the page also offers "Sign in with single sign-on" (app/sso.py),
which ends in the same kind of session (`start_session`); with local passwords switched off it
offers only that, and the form is refused. Log-out of a single sign-on session goes on to the
provider's end-session endpoint with the id token the log-in got (kept in a cookie sent only to
/logout), which comes back to the log-in page.
"""

from __future__ import annotations

import re
import secrets
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.auth import SESSION_COOKIE, Authenticator, TooManyAttempts, same_bytes, session_of
from app.params import Query
from app.templating import templates

LOGIN_COOKIE = "interlock_login"
# The id token of a single sign-on session, for the provider's log-out (RP-initiated).
ID_TOKEN_COOKIE = "interlock_id_token"
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
    settings = _authenticator(request).settings
    response = templates.TemplateResponse(
        request,
        "login.html",
        {
            "login_token": token,
            "sso": settings.oidc is not None,
            "local_passwords": settings.local_passwords,
            **context,
        },
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


def page(request: Request, error: str, *, status_code: int, next_path: str = "/") -> Response:
    """The log-in page showing `error` (a refused single sign-on, for one)."""
    return _page(
        request, {"next": _next(request, next_path), "error": error}, status_code=status_code
    )


async def login_page(request: Request) -> Response:
    return _page(request, {"next": _next(request, Query(request.query_params).text("next"))})


async def login(request: Request) -> Response:
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = _next(request, str(form.get("next", "/")))
    sent = str(form.get(LOGIN_TOKEN_FIELD, ""))
    authenticator = _authenticator(request)
    if not authenticator.settings.local_passwords:
        return _page(
            request,
            {
                "next": target,
                "error": "Log-in with a password is switched off; use single sign-on.",
            },
            status_code=403,
        )
    if not same_bytes(sent, request.cookies.get(LOGIN_COOKIE, "")):
        return _page(
            request,
            {"next": target, "name": name, "error": "The log-in form expired; please try again."},
            status_code=403,
        )
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
    return await start_session(request, found.id, found.name, target)


async def start_session(
    request: Request,
    credential_id: UUID,
    name: str,
    target: str,
    *,
    id_token: str | None = None,
) -> Response:
    """Log the user in (the command `StartSession`): their session's cookie, and on to `target`.
    `id_token`: a single sign-on's, kept for the provider's log-out."""
    authenticator = _authenticator(request)
    session = await run_in_threadpool(
        authenticator.sessions.issue,
        credential_id,
        name,
        client_address=request.client.host if request.client else None,
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
    if id_token is not None:
        response.set_cookie(
            ID_TOKEN_COOKIE,
            id_token,
            max_age=settings.session_max_seconds,
            path="/logout",
            httponly=True,
            samesite="strict",
            secure=settings.cookies_secure,
        )
    else:
        _forget_id_token(response, settings.cookies_secure)
    return response


def _forget_id_token(response: Response, secure: bool) -> None:
    response.delete_cookie(
        ID_TOKEN_COOKIE, path="/logout", httponly=True, samesite="strict", secure=secure
    )


async def logout(request: Request) -> Response:
    """POST only, with the session's CSRF token (the middleware checks it): ends the session,
    then goes to the log-in page, or for a single sign-on session to the provider's log-out
    (which comes back there). The console's button posts with htmx: it is sent to the provider
    by `HX-Redirect` (an XHR cannot follow a redirect to another site)."""
    authenticator = _authenticator(request)
    session = session_of(request)
    if session is not None:
        await run_in_threadpool(authenticator.sessions.end, session.id)
    target = "/login"
    id_token = request.cookies.get(ID_TOKEN_COOKIE)
    if session is not None and id_token and authenticator.oidc is not None:
        end_session = await run_in_threadpool(authenticator.oidc.end_session_url, id_token)
        target = end_session or target
    response: Response
    if request.headers.get("hx-request") and target != "/login":
        response = Response(status_code=204, headers={"HX-Redirect": target})
    else:
        response = RedirectResponse(target, status_code=303)
    secure = authenticator.settings.cookies_secure
    response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="strict", secure=secure)
    _forget_id_token(response, secure)
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
