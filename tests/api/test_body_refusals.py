"""Both APIs read a JSON body with one reader and word what it refuses in their own way: /api/v1
as `{type, message, detail}`, /engine-rest as Camunda's InvalidRequestException."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server import PASSWORD, LiveServer

JSON = {"content-type": "application/json"}
NOT_JSON = b'{"variables": '
NAN = b'{"variables": {"x": NaN}}'


@pytest.fixture(scope="module")
def rest(api: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=f"{api.url}/engine-rest", auth=("operator", PASSWORD), timeout=30
    ) as client:
        yield client


def _answer(response: httpx.Response) -> tuple[int, Any]:
    return response.status_code, response.json()


def test_api_words_refused_bodies(operator: httpx.Client) -> None:
    def post(content: bytes) -> tuple[int, Any]:
        return _answer(
            operator.post("/definitions/key/review/start", content=content, headers=JSON)
        )

    assert post(NOT_JSON) == (
        400,
        {
            "type": "BadRequest",
            "message": "the request body is not valid JSON: "
            "Expecting value: line 1 column 15 (char 14)",
            "detail": {},
        },
    )
    assert post(b"[1, 2]") == (
        400,
        {"type": "BadRequest", "message": "the request body must be a JSON object", "detail": {}},
    )
    assert post(NAN) == (
        400,
        {
            "type": "BadRequest",
            "message": "field 'variables.x' must be a finite number, not NaN",
            "detail": {"field": "variables.x"},
        },
    )
    # An empty body is an empty object: here, one without the required worker id.
    empty = operator.post("/external-tasks/fetch-and-lock", content=b"  ", headers=JSON)
    assert _answer(empty) == (
        400,
        {
            "type": "BadRequest",
            "message": "field 'worker_id' is required",
            "detail": {"field": "worker_id"},
        },
    )


def test_engine_rest_words_refused_bodies(rest: httpx.Client) -> None:
    def post(content: bytes) -> tuple[int, Any]:
        return _answer(
            rest.post("/process-definition/key/review/start", content=content, headers=JSON)
        )

    def invalid(message: str) -> tuple[int, Any]:
        return 400, {"type": "InvalidRequestException", "message": message}

    assert post(NOT_JSON) == invalid(
        "The request body is not valid JSON: Expecting value: line 1 column 15 (char 14)"
    )
    assert post(b"[1, 2]") == invalid("The request body must be a JSON object")
    assert post(NAN) == invalid(
        "The request body is refused: field 'variables.x' must be a finite number, not NaN"
    )
    # An empty body is an empty object: the instance starts without variables.
    started = rest.post("/process-definition/key/review/start", content=b"", headers=JSON)
    assert started.status_code == 200, started.text
    assert started.json()["definitionId"].startswith("review:")
