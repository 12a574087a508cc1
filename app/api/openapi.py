"""The OpenAPI 3.1 document of the API, built from the same operation declarations that make the
routes, so the two cannot drift apart."""

from __future__ import annotations

from functools import cache
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.api.http import IDEMPOTENCY_HEADER, Op, Reply, reply
from app.api.schemas import COMPONENTS, INTEGER, STRING, ref
from app.gates import Gate

VERSION = "1"
_ERRORS = {
    400: "Bad request: malformed JSON, a wrong or missing field (named in `detail.field`), an "
    "invalid model (file, line and element in `detail`)",
    401: "No valid credentials (Bearer token or HTTP Basic)",
    403: "The caller's role does not allow this",
    404: "No such resource",
    409: "The current state does not allow this; an invariant violation also carries the "
    "header X-Invariant-Violation naming its kind",
    413: "The request body is larger than the server's limit",
    422: "The Idempotency-Key was already used by this caller with a different request",
    429: "Too many failed log-ins from this user name or address; retry after `Retry-After` "
    "seconds",
}

# Operations that answer 404 about what their body names, not their path: a message that
# matches no waiting instance and no message start event.
_NOT_FOUND_WITHOUT_PATH_PARAMETERS = {"/messages"}


def _media(reply_spec: Reply) -> dict[str, Any]:
    if reply_spec.schema is None:
        return {"description": reply_spec.description}
    return {
        "description": reply_spec.description,
        "content": {reply_spec.media_type: {"schema": reply_spec.schema}},
    }


def _error(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _ERRORS[status],
        "content": {"application/json": {"schema": ref("Error")}},
    }
    if status == 429:
        response["headers"] = {
            "Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}
        }
    if status == 409:
        response["headers"] = {
            "X-Invariant-Violation": {
                "description": "the invariant's kind, e.g. ExternalTaskLeaseConflict",
                "schema": STRING,
            }
        }
    return response


def _parameters(op: Op) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": INTEGER if convertor == "int" else STRING,
        }
        for name, convertor in op.path_params
    ]
    for param in op.query:
        entry: dict[str, Any] = {
            "name": param.name,
            "in": "query",
            "required": param.required,
            "schema": param.schema,
        }
        if param.description:
            entry["description"] = param.description
        params.append(entry)
    if op.method == "POST":
        params.append(
            {
                "name": IDEMPOTENCY_HEADER,
                "in": "header",
                "required": False,
                "description": "a repeated request with the same key returns the first "
                "response and changes nothing",
                "schema": {**STRING, "maxLength": 200},
            }
        )
    return params


def _operation(op: Op) -> dict[str, Any]:
    module = op.handler.__module__.rsplit(".", 1)[-1]
    responses: dict[str, Any] = {str(status): _media(r) for status, r in op.replies.items()}
    errors = [401, 429]
    if op.body is not None or op.query or op.method == "POST":
        errors.append(400)  # a POST may also carry a malformed Idempotency-Key
    if op.body is not None:
        errors.append(413)
    if op.is_mutation or op.gate is not Gate.SIGNED_IN:
        errors.append(403)
    if op.path_params or op.openapi_path in _NOT_FOUND_WITHOUT_PATH_PARAMETERS:
        errors.append(404)
    if op.is_mutation:
        errors += [409, 422]
    for status in sorted(errors):
        responses[str(status)] = _error(status)
    entry: dict[str, Any] = {
        "operationId": f"{module}_{op.handler.__name__}",
        "summary": op.summary,
        "tags": [module],
        "x-required-gate": op.gate.value,
        "parameters": _parameters(op),
        "responses": responses,
    }
    if op.body is not None:
        entry["requestBody"] = {
            "required": op.body_required,
            "content": {op.body_media_type: {"schema": op.body}},
        }
    return entry


def document(operations: list[Op]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        paths.setdefault(op.openapi_path, {})[op.method.lower()] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Interlock API",
            "version": VERSION,
            "description": "The native JSON API of the Interlock BPMN engine. Every POST "
            "honours an Idempotency-Key header. Errors are `{type, message, detail}`.",
        },
        "servers": [{"url": "/api/v1"}],
        "security": [{"bearer": []}, {"basic": []}],
        "paths": paths,
        "components": {
            "schemas": COMPONENTS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "basic": {"type": "http", "scheme": "basic"},
            },
        },
    }


def spec_operation(operations: list[Op]) -> Op:
    """The operation serving the document of `operations` (itself included once appended)."""

    @cache
    def built() -> dict[str, Any]:
        return document(operations)

    async def openapi(request: Request) -> Response:
        return reply(built())

    return Op(
        "GET",
        "/openapi.json",
        openapi,
        "This OpenAPI document",
        replies={200: Reply("OpenAPI 3.1", {"type": "object"})},
    )
