"""What every surface answers while the database is unavailable: 503 with `Retry-After`, fast.

/api/v1 and the other JSON routes answer `{"type": "DatabaseUnavailable", "message", "detail"}`,
/engine-rest Camunda's `{"type", "message"}`, a console page load a page of its own with the
"database unavailable" banner (it reloads itself until the database is back), and an htmx
request of the console JSON as well, which the page's script shows as the banner. Never an
internal error's text.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from app.templating import templates
from engine.db.outage import UNAVAILABLE_MESSAGE

RETRY_AFTER_SECONDS = 2
HEADERS = {"Retry-After": str(RETRY_AFTER_SECONDS), "Cache-Control": "no-store"}


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return ""


def wants_page(scope: Scope) -> bool:
    """A browser loading a console page (not the APIs, not an htmx request, not a stream)."""
    path = str(scope.get("path", ""))
    if path.startswith(("/api/", "/engine-rest", "/static/", "/health")) or path == "/stream":
        return False
    if scope.get("method") not in ("GET", "HEAD") or _header(scope, b"hx-request"):
        return False
    return "text/html" in _header(scope, b"accept")


def unavailable_response(scope: Scope) -> Response:
    """The 503 for the surface `scope` asked."""
    path = str(scope.get("path", ""))
    if path.startswith("/engine-rest"):
        camunda = {"type": "ProcessEngineException", "message": UNAVAILABLE_MESSAGE}
        return JSONResponse(camunda, status_code=503, headers=HEADERS)
    if wants_page(scope):
        return templates.TemplateResponse(
            Request(scope),
            "unavailable.html",
            {"message": UNAVAILABLE_MESSAGE, "retry_after": RETRY_AFTER_SECONDS},
            status_code=503,
            headers=HEADERS,
        )
    problem = {"type": "DatabaseUnavailable", "message": UNAVAILABLE_MESSAGE, "detail": {}}
    return JSONResponse(problem, status_code=503, headers=HEADERS)
