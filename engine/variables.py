"""Typed process variables: string, integer, long, double, boolean, null, json, date.

A variable is stored as (type, JSON value). Dates travel as ISO 8601 text inside JSON and come back
as timezone-aware datetimes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from engine.errors import BadRequest

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
        return TypedValue("integer" if -INT32 <= value < INT32 else "long", value)
    if isinstance(value, float):
        return TypedValue("double", value)
    if isinstance(value, str):
        return TypedValue("string", value)
    if isinstance(value, datetime):
        return TypedValue("date", value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, date):
        return TypedValue("date", datetime(value.year, value.month, value.day, tzinfo=UTC))
    if isinstance(value, (dict, list)):
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
            return TypedValue("string", str(value))
        if name in ("integer", "long", "short"):
            number = int(value)
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return TypedValue("integer" if name != "long" else "long", number)
        if name == "double":
            return TypedValue("double", float(value))
        if name == "boolean":
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return TypedValue("boolean", value.lower() == "true")
            if isinstance(value, bool):
                return TypedValue("boolean", value)
            raise ValueError
        if name == "json":
            return TypedValue("json", value)
        if name == "date":
            if isinstance(value, datetime):
                return infer(value)
            return infer(datetime.fromisoformat(str(value)))
    except (TypeError, ValueError) as exc:
        raise BadRequest(f"value {value!r} is not a valid {type_name}") from exc
    raise BadRequest(f"unknown variable type '{type_name}'; known: {', '.join(VARIABLE_TYPES)}")


def from_row(type_name: str, stored: Any) -> TypedValue:
    if type_name == "date" and stored is not None:
        return TypedValue("date", datetime.fromisoformat(stored))
    return TypedValue(type_name, stored)


def infer_all(values: Mapping[str, Any] | None) -> dict[str, TypedValue]:
    if not values:
        return {}
    for name in values:
        if not isinstance(name, str) or not name:
            raise BadRequest(f"variable names must be non-empty strings, got {name!r}")
    return {name: infer(value) for name, value in values.items()}
