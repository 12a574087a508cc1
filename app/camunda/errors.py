"""Camunda's error bodies: `{"type": <exception class>, "message": ...}` with the status Camunda
answers for the case. Endpoints raise `CamundaError` for the cases Camunda words in its own way;
`translate` answers any other engine error with the status and exception type app/errors.py's
table gives it, in the shape of that type."""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse

from app.errors import Forbidden, answer_of, camunda_status
from app.guard import current_request_id
from app.outage import HEADERS
from app.params import ParameterError
from engine.errors import (
    AuthorizationDenied,
    DatabaseUnavailable,
    InterlockError,
    InvariantViolation,
    ModelError,
    Suspended,
)

INVARIANT_HEADER = "X-Invariant-Violation"

log = logging.getLogger("interlock.camunda")


class CamundaError(Exception):
    def __init__(
        self,
        status: int,
        type_: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.headers = headers or {}
        self.extra = extra or {}

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"type": self.type, "message": self.message, **self.extra}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def invalid_request(message: str, status: int = 400) -> CamundaError:
    """JAX-RS parameter and body problems: Camunda's InvalidRequestException."""
    return CamundaError(status, "InvalidRequestException", message)


def rest_error(status: int, message: str, exc: Exception | None = None) -> CamundaError:
    """What Camunda's resources throw after catching an engine exception: RestException."""
    return CamundaError(status, "RestException", message, headers=_invariant_headers(exc))


def engine_error(
    message: str, type_: str = "ProcessEngineException", status: int = 500
) -> CamundaError:
    return CamundaError(status, type_, message)


def suspended_error(message: str) -> CamundaError:
    """A request on a suspended instance's work, in its endpoint's words: answered as the one
    table of errors (app/errors.py) answers `Suspended`."""
    return _engine_answer(Suspended(message))


def _invariant_headers(exc: Exception | None) -> dict[str, str]:
    if isinstance(exc, InvariantViolation):
        return {INVARIANT_HEADER: exc.kind.value}
    return {}


def parse_error(exc: ModelError) -> CamundaError:
    resource = exc.file or "resource"
    problem = {
        "message": exc.message,
        "line": exc.line or 0,
        "column": 0,
        "mainElementId": exc.element_id,
        "elementIds": [exc.element_id] if exc.element_id else [],
    }
    return CamundaError(
        camunda_status(exc),
        answer_of(exc).camunda_type,
        f"ENGINE-09005 Could not parse BPMN process. Errors: \n* {exc.message}",
        extra={"details": {resource: {"errors": [problem], "warnings": []}}},
    )


def translate(exc: Exception) -> CamundaError:
    """The Camunda answer for an engine error no endpoint translated itself. A refusal is
    Camunda's 403 AuthorizationException whatever an endpoint wrapped it in: Camunda's resources
    pass AuthorizationException through untouched."""
    refused = _refusal_in(exc)
    if refused is not None:
        return _engine_answer(refused)
    if isinstance(exc, CamundaError):
        return exc
    if isinstance(exc, HTTPException):
        return CamundaError(exc.status_code, "InvalidRequestException", str(exc.detail))
    if isinstance(exc, InterlockError):
        return _engine_answer(exc)
    if isinstance(exc, ClientDisconnect):
        # The client went away, or the guard cut the body off at its limit (and has answered).
        return invalid_request("the request body did not arrive whole")
    # Anything else is a fault of ours; what it says (a database error quoting the request, a
    # library's internals) stays in the log, under the request id the caller is given.
    request_id = current_request_id()
    log.error("request %s: unexpected %s: %s", request_id, type(exc).__name__, exc)
    return engine_error(f"internal error; request id {request_id}")


def _refusal_in(exc: BaseException) -> AuthorizationDenied | None:
    """The AuthorizationDenied `exc` is, or was raised from (an endpoint's own wrapping)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, AuthorizationDenied):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _engine_answer(exc: InterlockError) -> CamundaError:
    """An engine error with the status and exception type of the one table of errors
    (app/errors.py), in the shape Camunda gives that type."""
    if isinstance(exc, ModelError):
        return parse_error(exc)
    message = exc.message
    if isinstance(exc, ParameterError):
        message = (
            f"Cannot set query parameter '{exc.name}' to value '{exc.shown}': "
            f"the value {exc.problem}"
        )
    extra: dict[str, Any] = {}
    if isinstance(exc, AuthorizationDenied):
        extra = {
            "userId": exc.user_id,
            "missingAuthorizations": [
                {
                    "permissionName": m.permission,
                    "resourceName": m.resource_type,
                    "resourceId": m.resource_id,
                }
                for m in exc.missing
            ],
        }
    elif isinstance(exc, Forbidden):
        extra = {"userId": None, "missingAuthorizations": []}
    headers = _invariant_headers(exc)
    if isinstance(exc, DatabaseUnavailable):
        headers = dict(HEADERS)
    return CamundaError(
        camunda_status(exc), answer_of(exc).camunda_type, message, headers=headers, extra=extra
    )
