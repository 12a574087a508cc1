"""Errors as a contract over HTTP: JSON `{type, message, detail}` with a status that says what
kind of problem it is; invariant violations are 409 with `X-Invariant-Violation: <Kind>`."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.outage import HEADERS, unavailable_response
from engine.errors import (
    BadRequest,
    Conflict,
    DatabaseUnavailable,
    ExpressionError,
    HandlerError,
    IdempotencyKeyReused,
    InterlockError,
    InvariantViolation,
    ModelError,
    NoMatchingFlow,
    NotFound,
)


class Unauthorized(InterlockError):
    code = "Unauthorized"


class Forbidden(InterlockError):
    code = "Forbidden"


STATUS: list[tuple[type[InterlockError], int]] = [
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (InvariantViolation, 409),
    (Conflict, 409),
    (IdempotencyKeyReused, 422),
    (BadRequest, 400),
    (ModelError, 400),
    (ExpressionError, 400),
    (NoMatchingFlow, 400),
    (HandlerError, 500),
    (DatabaseUnavailable, 503),
]


def status_of(error: InterlockError) -> int:
    for kind, status in STATUS:
        if isinstance(error, kind):
            return status
    return 500


def error_response(error: InterlockError) -> JSONResponse:
    headers = {}
    if isinstance(error, InvariantViolation):
        headers["X-Invariant-Violation"] = error.kind.value
    if isinstance(error, Unauthorized):
        headers["WWW-Authenticate"] = 'Basic realm="interlock", charset="UTF-8"'
    if isinstance(error, DatabaseUnavailable):
        headers.update(HEADERS)
    return JSONResponse(error.to_dict(), status_code=status_of(error), headers=headers)


async def interlock_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, InterlockError)
    if isinstance(exc, DatabaseUnavailable):
        return unavailable_response(request.scope)
    return error_response(exc)


async def http_error_handler(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse(
        {"type": "HttpError", "message": exc.detail, "detail": {}},
        status_code=exc.status_code,
        headers=exc.headers,
    )
