"""Camunda's typed values `{value, type, valueInfo}` and Interlock's typed variables.

Every type of engine/language/variables.py's `VariableType`, by Camunda's names (any case):
String, Integer, Short, Long, Double, Boolean, Null, Json, Xml, Date, Bytes, File, and Object
serialized as application/json (any other serialization format is refused, naming the variable).
A value without a type gets one from its JSON value, as Camunda's REST API does. Json values
travel as JSON text, Xml as text (never parsed), dates in Camunda's date format, Bytes and File
values as base64 text (a File's name, MIME type and encoding in its valueInfo; a File's value is
never sent back: its bytes are served by the `/data` endpoints). An Object's value goes out as its
JSON, or as its JSON text when the caller asks for serialized values (`deserializeValues=false`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from app.camunda.dto import Json, format_date, parse_date
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call
from engine.errors import BadRequest
from engine.language.json_input import JsonSyntaxError, loads, printable, text_problem
from engine.language.variables import (
    OBJECT_JSON,
    FileValue,
    TypedValue,
    VariableType,
    from_row,
    infer,
    typed,
)

JSON_FORMAT = OBJECT_JSON


def camunda_name(type_name: str) -> str:
    """Camunda's name of a stored type."""
    kind = VariableType.named(type_name)
    return kind.camunda if kind is not None else type_name


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def to_dto(value: TypedValue, *, serialized: bool = False) -> Json:
    """Interlock's typed value as Camunda's VariableValueDto; `serialized`: as Camunda answers
    `deserializeValues=false` (an Object's value as its JSON text)."""
    kind = VariableType.named(value.type)
    shown: Any = value.value
    info: Json = {}
    if shown is None:
        pass
    elif kind is VariableType.JSON:
        shown = _json_text(shown)
    elif kind is VariableType.DATE:
        shown = format_date(shown) if isinstance(shown, datetime) else shown
    elif kind is VariableType.BYTES:
        shown = base64.b64encode(shown).decode("ascii")
    elif kind is VariableType.OBJECT and serialized:
        shown = _json_text(shown)
    if kind is VariableType.OBJECT:
        if value.object_type is not None:
            info["objectTypeName"] = value.object_type
        info["serializationDataFormat"] = JSON_FORMAT
    if kind is VariableType.FILE:
        shown = None
        if isinstance(value.value, FileValue):
            info["filename"] = value.value.filename
            if value.value.mime_type is not None:
                info["mimeType"] = value.value.mime_type
            if value.value.encoding is not None:
                info["encoding"] = value.value.encoding
    return {"type": camunda_name(value.type), "value": shown, "valueInfo": info}


def stored_to_dto(type_name: str, stored: Any, *, serialized: bool = False) -> Json:
    return to_dto(from_row(type_name, stored), serialized=serialized)


def dto_map(values: Mapping[str, TypedValue], *, serialized: bool = False) -> dict[str, Json]:
    return {name: to_dto(value, serialized=serialized) for name, value in values.items()}


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
    kind = VariableType.named(type_name) if isinstance(type_name, str) else None
    if kind is None:
        raise invalid_request(f"Unsupported value type '{type_name}' of variable '{name}'")
    info = dto.get("valueInfo")
    if info is not None and not isinstance(info, Mapping):
        raise invalid_request(f"Cannot convert variable '{name}': 'valueInfo' must be an object")
    if kind in (VariableType.JSON, VariableType.OBJECT):
        return _json_value(name, type_name, value, info)
    if kind is VariableType.XML and value is not None and not isinstance(value, str):
        raise invalid_request(
            f"Cannot convert variable '{name}': Must provide 'null' or String value for value "
            f"of SerializableValue type '{type_name}'."
        )
    if kind is VariableType.DATE and isinstance(value, str):
        try:
            return typed("date", parse_date(value))
        except ValueError as exc:
            raise _cannot_convert(value, type_name, name) from exc
    try:
        return typed(kind, value, info if kind is VariableType.FILE else None)
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


def object_type_of(name: str, info: Mapping[str, Any] | None) -> str | None:
    """An Object's objectTypeName from its valueInfo; any serialization but JSON is refused."""
    data_format = info.get("serializationDataFormat") if info is not None else None
    if data_format not in (None, JSON_FORMAT):
        raise invalid_request(
            f"Cannot convert variable '{name}': Object values serialized as "
            f"'{data_format}' are not supported, only '{JSON_FORMAT}'"
        )
    object_type = info.get("objectTypeName") if info is not None else None
    if object_type is not None and (not isinstance(object_type, str) or text_problem(object_type)):
        raise invalid_request(f"Cannot convert variable '{name}': 'objectTypeName' must be text")
    return object_type or None


def _json_value(
    name: str, type_name: str, value: Any, info: Mapping[str, Any] | None
) -> TypedValue:
    is_object = type_name.lower() == VariableType.OBJECT
    object_type = object_type_of(name, info) if is_object else None
    if isinstance(value, str):
        try:
            data = loads(value)
        except JsonSyntaxError as exc:
            raise _cannot_convert(value, type_name, name) from exc
        except BadRequest as exc:
            raise _cannot_convert(value, type_name, name, exc.message) from exc
    elif value is None:
        return TypedValue("object", None, object_type) if is_object else TypedValue("null", None)
    else:
        data = value
    try:
        checked = typed("json", data)
    except BadRequest as exc:
        raise _cannot_convert(value, type_name, name, exc.message) from exc
    return TypedValue("object", checked.value, object_type) if is_object else checked


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


def wants_serialized(call: Call) -> bool:
    """Camunda's `deserializeValues` query parameter (default true): false asks for the
    serialized form of Object values."""
    return call.flag("deserializeValues") is False
