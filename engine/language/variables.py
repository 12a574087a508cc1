"""Typed process variables, one vocabulary (`VariableType`) from which the Python API, /api/v1,
/engine-rest and the console derive their type names.

A variable is stored as (type, JSON value). Dates travel as ISO 8601 text inside JSON and come back
as timezone-aware datetimes. Binary values are kept in the same JSONB column as base64 text
(`bytes`: the text; `file`: `{"filename", "mimeType", "encoding", "data"}`), at most
MAX_BINARY_BYTES each: an instance's variables are loaded whole by every command on it, so a bytea
column read apart would save nothing there, while PostgreSQL already keeps large values out of line
(TOAST) for the queries that do not select them. `object` is JSON with the type name a client gave
it (`{"objectTypeName", "value"}`); no other serialization (Java's) is taken.

Handlers and scripts see natural values: a datetime for a date, bytes for bytes, a `FileValue` for
a file, the JSON data of an object.

Values that no column could hold are refused with BadRequest: NaN and infinite doubles, an
integer beyond 32 bits (16 for short) or a long beyond 64, NUL characters and lone surrogates in
any string, json values that `engine.language.json_input.check` refuses (nesting deeper than 64
levels, ...), and binary values larger than MAX_BINARY_BYTES or not valid base64.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from engine.errors import BadRequest
from engine.language.json_input import check, check_integer, check_text, text_problem


class VariableType(StrEnum):
    """Every type a variable may have, as stored (Camunda's REST name: `camunda`)."""

    STRING = "string"
    INTEGER = "integer"
    SHORT = "short"
    LONG = "long"
    DOUBLE = "double"
    BOOLEAN = "boolean"
    NULL = "null"
    JSON = "json"
    XML = "xml"
    DATE = "date"
    BYTES = "bytes"
    FILE = "file"
    OBJECT = "object"

    @property
    def camunda(self) -> str:
        """The name Camunda's REST API gives the type: String, Integer, ..., Json, Xml, Object."""
        return self.value.capitalize()

    @property
    def binary(self) -> bool:
        """Whether the value is bytes, served raw by the `/data` endpoints and never inline."""
        return self in (VariableType.BYTES, VariableType.FILE)

    @classmethod
    def named(cls, name: str) -> VariableType | None:
        """The type of a name in any case (`Long`, `long`), or None."""
        try:
            return cls(name.lower())
        except ValueError:
            return None


VARIABLE_TYPES = tuple(VariableType)
INT32 = 2**31
# The largest Bytes or File value kept (the bytes, before base64).
MAX_BINARY_BYTES = 512 * 1024
OBJECT_JSON = "application/json"
DEFAULT_MIME_TYPE = "application/octet-stream"
# A file's MIME type (type/subtype, no parameters) and encoding, as a response header carries them.
MIME_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")
ENCODING = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")


@dataclass(frozen=True)
class FileValue:
    """A file variable's value: its bytes and the name, MIME type and encoding it came with."""

    filename: str
    content: bytes
    mime_type: str | None = None
    encoding: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "filename": self.filename,
            "mimeType": self.mime_type,
            "encoding": self.encoding,
            "data": base64.b64encode(self.content).decode("ascii"),
        }


@dataclass(frozen=True)
class TypedValue:
    type: str
    value: Any
    # An object's type name as the client gave it (Camunda's valueInfo.objectTypeName).
    object_type: str | None = None

    def to_json(self) -> Any:
        """The JSON-compatible value stored in the database."""
        if self.value is None:
            return None
        if self.type == VariableType.DATE:
            return self.value.isoformat()
        if self.type == VariableType.BYTES:
            return base64.b64encode(self.value).decode("ascii")
        if self.type == VariableType.FILE:
            return self.value.to_json()
        if self.type == VariableType.OBJECT:
            return {"objectTypeName": self.object_type, "value": self.value}
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
    if isinstance(value, (bytes, bytearray, memoryview)):
        return TypedValue("bytes", _sized(bytes(value)))
    if isinstance(value, FileValue):
        return typed("file", value)
    raise BadRequest(f"a variable cannot hold a value of Python type {type(value).__name__}")


def _sized(content: bytes) -> bytes:
    if len(content) > MAX_BINARY_BYTES:
        raise BadRequest(
            f"the value has {len(content)} bytes; at most {MAX_BINARY_BYTES} are allowed"
        )
    return content


def decode_base64(text: Any) -> bytes:
    """Base64 text (standard alphabet, padding optional, whitespace ignored) as bytes."""
    if not isinstance(text, str):
        raise BadRequest("the value must be base64 text")
    compact = "".join(text.split())
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest("the value is not valid base64") from exc


def _binary(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _sized(bytes(value))
    return _sized(decode_base64(value))


def _optional_text(info: Mapping[str, Any], key: str, *aliases: str) -> str | None:
    for name in (key, *aliases):
        found = info.get(name)
        if found is not None:
            if not isinstance(found, str):
                raise BadRequest(f"'{key}' must be a string")
            check_text(found)
            return found or None
    return None


def file_value(value: Any, info: Mapping[str, Any] | None = None) -> FileValue:
    """A file from a FileValue, from bytes or base64 text and `info` (`filename`, `mimeType`,
    `encoding`), or from the stored form `{"filename", "mimeType", "encoding", "data"}`."""
    if isinstance(value, FileValue):
        _sized(value.content)
        check_text(value.filename)
        return value
    if isinstance(value, Mapping) and info is None:
        info, value = value, value.get("data")
    info = info or {}
    filename = _optional_text(info, "filename")
    if filename is None:
        raise BadRequest("a file needs a 'filename'")
    mime_type = _optional_text(info, "mimeType", "mimetype")
    if mime_type is not None and not MIME_TYPE.fullmatch(mime_type):
        raise BadRequest(f"'mimeType' {_shown(mime_type)} is not a MIME type such as text/plain")
    encoding = _optional_text(info, "encoding")
    if encoding is not None and not ENCODING.fullmatch(encoding):
        raise BadRequest(f"'encoding' {_shown(encoding)} is not a character encoding name")
    return FileValue(
        filename=filename,
        content=_binary(value if value is not None else ""),
        mime_type=mime_type,
        encoding=encoding,
    )


def typed(
    type_name: str,
    value: Any,
    info: Mapping[str, Any] | None = None,
) -> TypedValue:
    """Convert a value the caller typed explicitly; reject values that do not fit the type.
    Binary values are bytes or base64 text; a file's name, MIME type and encoding come from
    `info` or from its stored form; an object is JSON data (or `{"objectTypeName", "value"}`)."""
    kind = VariableType.named(type_name) if isinstance(type_name, str) else None
    try:
        if kind is VariableType.NULL:
            return TypedValue("null", None)
        if kind is not None and value is None:
            return TypedValue(kind, None)
        if kind is VariableType.STRING or kind is VariableType.XML:
            text = str(value) if kind is VariableType.STRING else value
            if not isinstance(text, str):
                raise ValueError
            check_text(text)
            return TypedValue(kind, text)
        if kind in (VariableType.INTEGER, VariableType.LONG, VariableType.SHORT):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            number = int(value)
            check_integer(number, "", bits={"integer": 32, "short": 16}.get(kind, 64))
            return TypedValue(kind, number)
        if kind is VariableType.DOUBLE:
            if isinstance(value, bool):
                raise ValueError
            real = float(value)
            check(real)
            return TypedValue("double", real)
        if kind is VariableType.BOOLEAN:
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return TypedValue("boolean", value.lower() == "true")
            if isinstance(value, bool):
                return TypedValue("boolean", value)
            raise ValueError
        if kind is VariableType.JSON:
            check(value)
            return TypedValue("json", value)
        if kind is VariableType.OBJECT:
            object_type = _optional_text(info or {}, "objectTypeName")
            if (
                info is None
                and isinstance(value, Mapping)
                and set(value)
                == {
                    "objectTypeName",
                    "value",
                }
            ):
                object_type = _optional_text(value, "objectTypeName")
                value = value["value"]
            check(value)
            return TypedValue("object", value, object_type)
        if kind is VariableType.BYTES:
            return TypedValue("bytes", _binary(value))
        if kind is VariableType.FILE:
            return TypedValue("file", file_value(value, info))
        if kind is VariableType.DATE:
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
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, FileValue):
        return f"<file {value.filename!r}, {len(value.content)} bytes>"
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def from_row(type_name: str, stored: Any) -> TypedValue:
    """A stored (type, JSON value) as its typed value, without checking it again."""
    if stored is None:
        return TypedValue(type_name, None)
    if type_name == VariableType.DATE:
        return TypedValue("date", datetime.fromisoformat(stored))
    if type_name == VariableType.BYTES:
        return TypedValue("bytes", base64.b64decode(stored))
    if type_name == VariableType.FILE:
        return TypedValue(
            "file",
            FileValue(
                filename=stored["filename"],
                content=base64.b64decode(stored["data"]),
                mime_type=stored.get("mimeType"),
                encoding=stored.get("encoding"),
            ),
        )
    if type_name == VariableType.OBJECT:
        return TypedValue("object", stored.get("value"), stored.get("objectTypeName"))
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
