"""The one reader of a JSON request body, for /api/v1 (app/api/body.py) and /engine-rest
(app/camunda/http.py): an object, or `{}` for an empty body, read by the strict reader of
engine/language/json_input.py. What it refuses it raises as `BodyRefused`, naming the problem; each
surface words the refusal in its own way."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from starlette.requests import Request

from engine.errors import BadRequest
from engine.language.json_input import MAX_JSON_BYTES, JsonSyntaxError, loads


class BodyProblem(StrEnum):
    TOO_LARGE = "too large"  # longer than MAX_JSON_BYTES
    NOT_JSON = "not JSON"
    REFUSED = "refused"  # JSON holding a value engine/language/json_input.py refuses
    NOT_OBJECT = "not an object"


class BodyRefused(Exception):
    """A body `json_object` refuses: the `problem`, and the reader's own words for it (the
    syntax error; the refusal, which names the field)."""

    def __init__(
        self, problem: BodyProblem, reason: str = "", refusal: BadRequest | None = None
    ) -> None:
        super().__init__(reason or problem.value)
        self.problem = problem
        self.reason = reason
        self.refusal = refusal


async def json_object(request: Request) -> dict[str, Any]:
    """The request's JSON object; an empty body (or only white space) is `{}`."""
    raw = await request.body()
    too_large = len(raw) > MAX_JSON_BYTES
    if not too_large and not raw.strip():
        return {}
    try:
        data = loads(raw)  # refuses a body longer than MAX_JSON_BYTES before parsing it
    except JsonSyntaxError as exc:
        raise BodyRefused(BodyProblem.NOT_JSON, str(exc)) from None
    except BadRequest as exc:
        problem = BodyProblem.TOO_LARGE if too_large else BodyProblem.REFUSED
        raise BodyRefused(problem, exc.message, exc) from None
    if not isinstance(data, dict):
        raise BodyRefused(BodyProblem.NOT_OBJECT)
    return data
