"""Both HTTP surfaces answer engine errors from one table: /api/v1's status, and the status,
exception type, headers and body /engine-rest answers in Camunda's shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.camunda.errors import translate
from app.errors import Forbidden, Unauthorized, error_response, status_of
from app.params import ParameterError
from engine.errors import (
    AuthorizationDenied,
    BadRequest,
    Conflict,
    DatabaseUnavailable,
    ExpressionError,
    HandlerError,
    IdempotencyKeyReused,
    InstanceEnded,
    InterlockError,
    InvariantViolation,
    InvariantViolationKind,
    ModelError,
    NoMatchingFlow,
    NotFound,
)

LEASE = InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
STALE = InvariantViolationKind.STALE_WRITE

# error, /api/v1 status, /engine-rest status and type
CASES: list[tuple[InterlockError, int, int, str]] = [
    (Unauthorized("who?"), 401, 401, "AuthenticationException"),
    (Forbidden("no"), 403, 403, "AuthorizationException"),
    (AuthorizationDenied("ann", ()), 403, 403, "AuthorizationException"),
    (NotFound("gone"), 404, 404, "InvalidRequestException"),
    (InvariantViolation(LEASE, "held"), 409, 400, "ProcessEngineException"),
    (InvariantViolation(STALE, "stale"), 409, 500, "ProcessEngineException"),
    (Conflict("busy"), 409, 500, "ProcessEngineException"),
    (InstanceEnded("ended"), 409, 500, "ProcessEngineException"),
    (IdempotencyKeyReused("again"), 422, 500, "ProcessEngineException"),
    (BadRequest("bad"), 400, 400, "InvalidRequestException"),
    (ParameterError("maxResults", "x", "must be an integer"), 400, 400, "InvalidRequestException"),
    (ModelError("broken", file="a.bpmn", line=3, element_id="t"), 400, 400, "ParseException"),
    (ExpressionError("1 +"), 400, 400, "InvalidRequestException"),
    (NoMatchingFlow("none"), 400, 500, "ProcessEngineException"),
    (HandlerError("raised"), 500, 500, "ProcessEngineException"),
    (DatabaseUnavailable("down"), 503, 503, "ProcessEngineException"),
    (InterlockError("other"), 500, 500, "ProcessEngineException"),
]


@pytest.mark.parametrize(("error", "status", "camunda_status", "camunda_type"), CASES)
def test_each_error_has_one_answer_per_surface(
    error: InterlockError, status: int, camunda_status: int, camunda_type: str
) -> None:
    assert status_of(error) == status
    assert error_response(error).status_code == status
    answer = translate(error)
    assert (answer.status, answer.type) == (camunda_status, camunda_type)


def _camunda(error: InterlockError) -> tuple[int, dict[str, Any], dict[str, str]]:
    response = translate(error).response()
    body: dict[str, Any] = json.loads(bytes(response.body))
    headers = {
        k: v for k, v in response.headers.items() if k.startswith("x-") or k == "retry-after"
    }
    return response.status_code, body, headers


def test_camunda_shapes() -> None:
    assert _camunda(Forbidden("no")) == (
        403,
        {
            "type": "AuthorizationException",
            "message": "no",
            "userId": None,
            "missingAuthorizations": [],
        },
        {},
    )
    assert _camunda(ParameterError("maxResults", "x", "must be an integer")) == (
        400,
        {
            "type": "InvalidRequestException",
            "message": "Cannot set query parameter 'maxResults' to value 'x': "
            "the value must be an integer",
        },
        {},
    )
    assert _camunda(InvariantViolation(STALE, "stale")) == (
        500,
        {"type": "ProcessEngineException", "message": "stale"},
        {"x-invariant-violation": "StaleWrite"},
    )
    status, body, _ = _camunda(ModelError("broken", file="a.bpmn", line=3, element_id="t"))
    assert status == 400 and body["type"] == "ParseException"
    assert body["details"]["a.bpmn"]["errors"][0] == {
        "message": "a.bpmn, line 3, element 't': broken",
        "line": 3,
        "column": 0,
        "mainElementId": "t",
        "elementIds": ["t"],
    }
    status, body, headers = _camunda(DatabaseUnavailable("down"))
    assert (status, body) == (503, {"type": "ProcessEngineException", "message": "down"})
    assert "retry-after" in headers
