"""Request bodies: a JSON object read field by field. Every problem is a 400 that names the field,
raised before any command runs.

The body is read by the one reader of both APIs (`app.json_body.json_object`, over
`engine.language.json_input.loads`): non-finite numbers, integers of more than 20 digits, nesting
deeper than 64 levels, and NUL characters or lone surrogates in any string or key are refused with
the
field's path (`variables.amount.value`). Integer fields are 32-bit unless the field says
otherwise."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from app.api.schemas import Schema
from app.json_body import BodyProblem, BodyRefused, json_object
from engine.errors import BadRequest
from engine.language.json_input import INT32_MAX, INT32_MIN, MAX_JSON_BYTES
from engine.language.variables import TypedValue, infer, typed

MAX_BODY_BYTES = MAX_JSON_BYTES
_TYPED_KEYS = frozenset({"type", "value"})


class Body:
    def __init__(self, data: dict[str, Any], prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    @classmethod
    async def read(cls, request: Request, schema: Schema) -> Body:
        """The request's JSON object (an empty body is `{}`)."""
        try:
            data = await json_object(request)
        except BodyRefused as exc:
            raise _refusal(exc) from None
        return cls.of(data, schema)

    @classmethod
    def of(cls, data: dict[str, Any], schema: Schema, prefix: str = "") -> Body:
        """Fields the schema does not declare are refused, so that a misspelt field is an error
        rather than silently ignored; required fields must be present and not null."""
        known = set(schema.get("properties", {}))
        for name in data:
            if name not in known:
                raise BadRequest(
                    f"unknown field '{prefix}{name}'; known: {', '.join(sorted(known)) or 'none'}",
                    field=f"{prefix}{name}",
                )
        for name in schema.get("required", []):
            if data.get(name) is None:
                raise BadRequest(f"field '{prefix}{name}' is required", field=f"{prefix}{name}")
        return cls(data, prefix)

    def _bad(self, name: str, problem: str) -> BadRequest:
        return BadRequest(f"field '{self.prefix}{name}' {problem}", field=f"{self.prefix}{name}")

    def _wrong(self, name: str, expected: str) -> BadRequest:
        return self._bad(name, f"must be {expected}, not {_json_type(self.data[name])}")

    def text(self, name: str) -> str | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._wrong(name, "a string")
        return value

    def required_text(self, name: str) -> str:
        value = self.text(name)
        if not value:
            raise self._bad(name, "must be a non-empty string")
        return value

    def integer(
        self, name: str, default: int, *, minimum: int = INT32_MIN, maximum: int = INT32_MAX
    ) -> int:
        value = self.data.get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(name, "an integer")
        if value < minimum:
            raise self._bad(name, f"must be at least {minimum}")
        if value > maximum:
            raise self._bad(name, f"must be at most {maximum}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.data.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._wrong(name, "true or false")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.data.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self._wrong(name, "an object")
        return value

    def strings(self, name: str) -> tuple[str, ...] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._wrong(name, "a list of strings")
        return tuple(value)

    def objects(self, name: str, schema: Schema) -> list[Body]:
        """A list of objects, each read as a body of its own against `schema`."""
        value = self.data.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self._wrong(name, "a list of objects")
        return [Body.of(item, schema, f"{self.prefix}{name}[{n}].") for n, item in enumerate(value)]

    def variables(self, name: str = "variables") -> dict[str, TypedValue]:
        return parse_variables(self.mapping(name), f"{self.prefix}{name}")


def _refusal(exc: BodyRefused) -> BadRequest:
    """/api/v1's words for a body refused as a whole."""
    match exc.problem:
        case BodyProblem.TOO_LARGE:
            return BadRequest(f"the request body is larger than {MAX_BODY_BYTES} bytes")
        case BodyProblem.NOT_JSON:
            return BadRequest(f"the request body is not valid JSON: {exc.reason}")
        case BodyProblem.REFUSED if exc.refusal is not None:
            return exc.refusal
        case _:
            return BadRequest("the request body must be a JSON object")


def parse_variables(values: dict[str, Any], field: str = "variables") -> dict[str, TypedValue]:
    """`{name: value}` (type inferred) or `{name: {"type": ..., "value": ...}}` (typed)."""
    parsed: dict[str, TypedValue] = {}
    for name, value in values.items():
        where = f"{field}.{name}"
        if not name:
            raise BadRequest(f"variable names in '{field}' must not be empty", field=field)
        if isinstance(value, dict) and "type" in value and set(value) <= _TYPED_KEYS:
            type_name = value["type"]
            if not isinstance(type_name, str):
                raise BadRequest(f"field '{where}.type' must be a string", field=f"{where}.type")
            try:
                parsed[name] = typed(type_name, value.get("value"))
            except BadRequest as exc:
                raise BadRequest(f"variable '{name}': {exc.message}", field=where) from None
        else:
            try:
                parsed[name] = infer(value)
            except BadRequest as exc:
                raise BadRequest(f"variable '{name}': {exc.message}", field=where) from None
    return parsed


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
