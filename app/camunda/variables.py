"""Camunda's typed values `{value, type, valueInfo}` and Interlock's typed variables.

Camunda names (any case): String, Integer, Short, Long, Double, Boolean, Null, Json, Date, and
Object serialized as application/json. A value without a type gets one from its JSON value, as
Camunda's REST API does. Json values travel as JSON text, dates in Camunda's date format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.camunda.dto import Json, format_date, parse_date
from app.camunda.errors import CamundaError, invalid_request
from engine.errors import BadRequest
from engine.language.json_input import JsonSyntaxError, loads, printable, text_problem
from engine.language.variables import TypedValue, from_row, infer, typed

CAMUNDA_NAMES = {
    "string": "String",
    "integer": "Integer",
    "long": "Long",
    "double": "Double",
    "boolean": "Boolean",
    "null": "Null",
    "json": "Json",
    "date": "Date",
}
JSON_FORMAT = "application/json"


def to_dto(value: TypedValue) -> Json:
    """Interlock's typed value as Camunda's VariableValueDto."""
    if value.type == "json":
        shown: Any = json.dumps(value.value, separators=(",", ":"), ensure_ascii=False)
    elif value.type == "date":
        shown = format_date(value.value) if isinstance(value.value, datetime) else value.value
    else:
        shown = value.value
    return {"type": CAMUNDA_NAMES.get(value.type, value.type), "value": shown, "valueInfo": {}}


def stored_to_dto(type_name: str, stored: Any) -> Json:
    return to_dto(from_row(type_name, stored))


def dto_map(values: Mapping[str, TypedValue]) -> dict[str, Json]:
    return {name: to_dto(value) for name, value in values.items()}


def to_typed(name: str, dto: Any) -> TypedValue:
    """A VariableValueDto sent by a client. Raises CamundaError 400 when it does not fit."""
    if not isinstance(dto, Mapping):
        raise invalid_request(
            f"Cannot convert variable '{name}': expected an object with 'value' and 'type'"
        )
    value = dto.get("value")
    type_name = dto.get("type")
    if type_name is None or type_name == "":
        try:
            return infer(value)
        except BadRequest as exc:
            raise invalid_request(f"Cannot convert variable '{name}': {exc.message}") from exc
    if not isinstance(type_name, str):
        raise invalid_request(f"Unsupported value type '{type_name}' of variable '{name}'")
    kind = type_name.lower()
    if kind in ("json", "object"):
        return _json_value(name, type_name, value, dto.get("valueInfo"))
    if kind == "date" and isinstance(value, str):
        try:
            return typed("date", parse_date(value))
        except ValueError as exc:
            raise _cannot_convert(value, type_name, name) from exc
    if kind not in CAMUNDA_NAMES and kind != "short":
        raise invalid_request(f"Unsupported value type '{type_name}' of variable '{name}'")
    try:
        return typed(kind, value)
    except BadRequest as exc:
        raise _cannot_convert(value, type_name, name, exc.message) from exc


def to_typed_map(values: Any, what: str = "variables") -> dict[str, TypedValue]:
    """A `{name: VariableValueDto}` body field; None and absent mean no variables."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise invalid_request(f"'{what}' must be an object of variables")
    for name in values:
        problem = text_problem(str(name))
        if problem is not None:
            raise invalid_request(f"'{what}': the variable name {printable(str(name))!r} {problem}")
    return {str(name): to_typed(str(name), dto) for name, dto in values.items()}


def plain_values(values: Any, what: str) -> dict[str, Any]:
    """Typed values reduced to their plain values (correlation keys)."""
    return {name: typed_value.value for name, typed_value in to_typed_map(values, what).items()}


def _json_value(name: str, type_name: str, value: Any, info: Any) -> TypedValue:
    if type_name.lower() == "object":
        data_format = info.get("serializationDataFormat") if isinstance(info, Mapping) else None
        if data_format not in (None, JSON_FORMAT):
            raise invalid_request(
                f"Cannot convert variable '{name}': Object values serialized as "
                f"'{data_format}' are not supported, only '{JSON_FORMAT}'"
            )
    if isinstance(value, str):
        try:
            return TypedValue("json", loads(value))
        except JsonSyntaxError as exc:
            raise _cannot_convert(value, type_name, name) from exc
        except BadRequest as exc:
            raise _cannot_convert(value, type_name, name, exc.message) from exc
    if value is None:
        return TypedValue("null", None)
    try:
        return typed("json", value)
    except BadRequest as exc:
        raise _cannot_convert(value, type_name, name, exc.message) from exc


def _cannot_convert(
    value: Any, type_name: str, name: str, reason: str | None = None
) -> CamundaError:
    """Camunda's wording, with the variable's name and what is wrong with the value."""
    shown = printable(str(value))
    if len(shown) > 80:
        shown = f"{shown[:60]}... ({len(shown)} characters)"
    return invalid_request(
        f"Cannot convert value '{shown}' of type '{type_name}' for variable '{name}'"
        + (f": {reason}" if reason else "")
    )
