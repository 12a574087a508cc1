"""Errors as a contract over HTTP: JSON `{type, message, detail}` with a status that says what
kind of problem it is; invariant violations are 409 with `X-Invariant-Violation: <Kind>`.

`ANSWERS` is the one table of engine errors and their answers: /api/v1's status here, and the
status and exception type /engine-rest answers in Camunda's shape (app/camunda/errors.py)."""

from __future__ import annotations

from dataclasses import dataclass

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
    InvariantViolationKind,
    ModelError,
    NoMatchingFlow,
    NotFound,
    Suspended,
)
from engine.errors import Forbidden as Forbidden


class Unauthorized(InterlockError):
    code = "Unauthorized"


@dataclass(frozen=True)
class Answer:
    """How the HTTP surfaces answer one kind of engine error: /api/v1's status, and the status
    and exception type of Camunda's body on /engine-rest (which answers what it has no words of
    its own for as a ProcessEngineException, a 500)."""

    status: int
    camunda_status: int
    camunda_type: str


_ENGINE_FAILURE = "ProcessEngineException"
_INVALID = "InvalidRequestException"

# The one table of engine errors and what each surface answers; a subclass answers as its base.
ANSWERS: tuple[tuple[type[InterlockError], Answer], ...] = (
    (Unauthorized, Answer(401, 401, "AuthenticationException")),
    (Forbidden, Answer(403, 403, "AuthorizationException")),
    (NotFound, Answer(404, 404, _INVALID)),
    (InvariantViolation, Answer(409, 500, _ENGINE_FAILURE)),
    # Camunda answers its SuspendedEntityInteractionException as a 500; we answer the caller's
    # request on a suspended instance or definition as what it is, a 400 of that type.
    (Suspended, Answer(409, 400, "SuspendedEntityInteractionException")),
    (Conflict, Answer(409, 500, _ENGINE_FAILURE)),
    (IdempotencyKeyReused, Answer(422, 500, _ENGINE_FAILURE)),
    (BadRequest, Answer(400, 400, _INVALID)),
    (ModelError, Answer(400, 400, "ParseException")),
    (ExpressionError, Answer(400, 400, _INVALID)),
    (NoMatchingFlow, Answer(400, 500, _ENGINE_FAILURE)),
    (HandlerError, Answer(500, 500, _ENGINE_FAILURE)),
    (DatabaseUnavailable, Answer(503, 503, _ENGINE_FAILURE)),
)
OTHER = Answer(500, 500, _ENGINE_FAILURE)

# Invariant violations Camunda answers with another status than its 500: a worker's report on
# a task whose lock it does not hold is the caller's mistake.
CAMUNDA_INVARIANT_STATUS = {InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT: 400}


def answer_of(error: InterlockError) -> Answer:
    for kind, answer in ANSWERS:
        if isinstance(error, kind):
            return answer
    return OTHER


def status_of(error: InterlockError) -> int:
    """/api/v1's status for `error`."""
    return answer_of(error).status


def camunda_status(error: InterlockError) -> int:
    """/engine-rest's status for `error`."""
    if isinstance(error, InvariantViolation):
        return CAMUNDA_INVARIANT_STATUS.get(error.kind, answer_of(error).camunda_status)
    return answer_of(error).camunda_status


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
