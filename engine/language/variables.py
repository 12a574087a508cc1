"""Typed process variables: string, integer, long, double, boolean, null, json, date.

A variable is stored as (type, JSON value). Dates travel as ISO 8601 text inside JSON and come back
as timezone-aware datetimes.

Values that no column could hold are refused with BadRequest: NaN and infinite doubles, an
integer beyond 32 bits or a long beyond 64, NUL characters and lone surrogates in any string, and
json values that `engine.language.json_input.check` refuses (nesting deeper than 64 levels, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from engine.errors import BadRequest
from engine.language.json_input import check, check_integer, check_text, text_problem

VARIABLE_TYPES = ("string", "integer", "long", "double", "boolean", "null", "json", "date")
INT32 = 2**31


@dataclass(frozen=True)
class TypedValue:
    type: str
    value: Any

    def to_json(self) -> Any:
        """The JSON-compatible value stored in the database."""
        if self.type == "date":
            return self.value.isoformat()
        return self.value


def infer(value: Any) -> TypedValue:
    """The type a Python value gets when the caller does not say."""
    if isinstance(value, TypedValue):
        return value
    if value is None:
        return TypedValue("null", None)
    if isinstance(value, bool):
        return TypedValue("boolean", value)
    if isinstance(value, int):
        check_integer(value, "", bits=64)
        return TypedValue("integer" if -INT32 <= value < INT32 else "long", value)
    if isinstance(value, float):
        check(value)
        return TypedValue("double", value)
    if isinstance(value, str):
        check_text(value)
        return TypedValue("string", value)
    if isinstance(value, datetime):
        return TypedValue("date", value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, date):
        return TypedValue("date", datetime(value.year, value.month, value.day, tzinfo=UTC))
    if isinstance(value, (dict, list)):
        check(value)
        return TypedValue("json", value)
    raise BadRequest(f"a variable cannot hold a value of Python type {type(value).__name__}")


def typed(type_name: str, value: Any) -> TypedValue:
    """Convert a value the caller typed explicitly; reject values that do not fit the type."""
    name = type_name.lower()
    try:
        if name == "null":
            return TypedValue("null", None)
        if value is None:
            return TypedValue(name if name in VARIABLE_TYPES else "null", None)
        if name == "string":
            text = str(value)
            check_text(text)
            return TypedValue("string", text)
        if name in ("integer", "long", "short"):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            number = int(value)
            check_integer(number, "", bits={"integer": 32, "short": 16}.get(name, 64))
            return TypedValue("integer" if name != "long" else "long", number)
        if name == "double":
            if isinstance(value, bool):
                raise ValueError
            real = float(value)
            check(real)
            return TypedValue("double", real)
        if name == "boolean":
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return TypedValue("boolean", value.lower() == "true")
            if isinstance(value, bool):
                return TypedValue("boolean", value)
            raise ValueError
        if name == "json":
            check(value)
            return TypedValue("json", value)
        if name == "date":
            if isinstance(value, datetime):
                return infer(value)
            return infer(datetime.fromisoformat(str(value)))
    except BadRequest as exc:
        problem = exc.message.removeprefix("the value ")
        raise BadRequest(f"value {_shown(value)} is not a valid {type_name}: {problem}") from exc
    except (TypeError, ValueError, OverflowError) as exc:
        raise BadRequest(f"value {_shown(value)} is not a valid {type_name}") from exc
    raise BadRequest(f"unknown variable type '{type_name}'; known: {', '.join(VARIABLE_TYPES)}")


def _shown(value: Any) -> str:
    """The value as a message quotes it: escaped, and cut short when long."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def from_row(type_name: str, stored: Any) -> TypedValue:
    if type_name == "date" and stored is not None:
        return TypedValue("date", datetime.fromisoformat(stored))
    return TypedValue(type_name, stored)


# As Camunda 7's NAME_ column: scripts' facade (engine/scripting/prelude.js) keeps the same limit.
MAX_NAME_LENGTH = 255


def check_name(name: Any) -> None:
    """Refuse a variable name that is not a non-empty string a text column can hold, of at most
    MAX_NAME_LENGTH characters."""
    if not isinstance(name, str) or not name:
        raise BadRequest(f"variable names must be non-empty strings, got {_shown(name)}")
    if len(name) > MAX_NAME_LENGTH:
        raise BadRequest(
            f"variable name {_shown(name)} has {len(name)} characters; "
            f"at most {MAX_NAME_LENGTH} are allowed"
        )
    problem = text_problem(name)
    if problem is not None:
        raise BadRequest(f"variable name {name!r} {problem}")
