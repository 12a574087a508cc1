"""Console log-in and log-out."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.auth import SESSION_COOKIE, SESSION_SECONDS, Authenticator
from app.templating import templates


def _authenticator(request: Request) -> Authenticator:
    authenticator: Authenticator = request.app.state.authenticator
    return authenticator


def _next(request: Request, value: str | None) -> str:
    # Only local paths: never redirect a user to another site after log-in.
    return value if value and value.startswith("/") and not value.startswith("//") else "/"


async def login_page(request: Request) -> Response:
    return templates.TemplateResponse(
        request, "login.html", {"next": _next(request, request.query_params.get("next"))}
    )


async def login(request: Request) -> Response:
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = _next(request, str(form.get("next", "/")))
    principal = await run_in_threadpool(_authenticator(request).login, name, password)
    if principal is None:
        return templates.TemplateResponse(
            request,
            "login.html",
            {"next": target, "error": "Wrong user name or password.", "name": name},
            status_code=401,
        )
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        SESSION_COOKIE,
        _authenticator(request).sessions.issue(principal),
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
    )
    return response


async def logout(request: Request) -> Response:
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
