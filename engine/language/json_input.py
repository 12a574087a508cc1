"""Untrusted input: the one strict reader of JSON text, and the checks every value from outside
passes before it reaches the database.

Python's `json` module reads `NaN`, `Infinity` and `1e999` (as infinity), integers of thousands
of digits (until its digit limit raises ValueError) and nesting until the interpreter's recursion
limit; PostgreSQL refuses NUL characters in text and jsonb, and lone surrogates (`"\\ud800"`)
cannot be encoded as UTF-8. `loads` and `check` refuse all of these with a `BadRequest` that names
the field, such as `variables.amount.value`:

    loads('{"variables": {"amount": {"type": "double", "value": NaN}}}')
    BadRequest: field 'variables.amount.value' must be a finite number, not NaN

Syntax errors raise `JsonSyntaxError` (a ValueError), so that each caller words them its own way.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from engine.errors import BadRequest

MAX_JSON_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
MAX_INTEGER_DIGITS = 20
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_INTEGER_BOUND = 10**MAX_INTEGER_DIGITS
_BAD_CHARACTER = re.compile("[\x00\ud800-\udfff]")


class JsonSyntaxError(ValueError):
    """The text is not JSON at all (as opposed to JSON holding a value that is refused)."""


class _Refused:
    """A number `loads` read but will not hand out; `check` reports it with its field."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _constant(text: str) -> _Refused:
    return _Refused(f"must be a finite number, not {text}")


def _float(text: str) -> float | _Refused:
    number = float(text)
    return number if math.isfinite(number) else _constant(text)


def _integer(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        return _Refused(f"is a number of {digits} digits; at most {MAX_INTEGER_DIGITS} are allowed")
    return int(text)


def loads(raw: bytes | str, where: str = "") -> Any:
    """The JSON value of `raw`, checked with `check` (the field paths start at `where`)."""
    if len(raw) > MAX_JSON_BYTES:
        raise _bad(f"is longer than {MAX_JSON_BYTES} bytes of JSON", where)
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_float, parse_int=_integer)
    except RecursionError:
        raise _bad(f"is nested deeper than {MAX_DEPTH} levels", where) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JsonSyntaxError(str(exc)) from None
    check(value, where)
    return value


def check(value: Any, where: str = "") -> None:
    """Refuse non-finite numbers, integers beyond MAX_INTEGER_DIGITS digits, nesting deeper than
    MAX_DEPTH objects and lists, and NUL characters or lone surrogates in any string or key."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            check_text(item, path)
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if abs(item) >= _INTEGER_BOUND:
                raise _bad(
                    f"is too large a number; at most {MAX_INTEGER_DIGITS} digits are allowed",
                    path,
                )
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise _bad(f"must be a finite number, not {_spell(item)}", path)
        elif isinstance(item, _Refused):
            raise _bad(item.problem, path)
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                raise _bad(f"is nested deeper than {MAX_DEPTH} levels", path)
            if isinstance(item, dict):
                for key, member in item.items():
                    if not isinstance(key, str):
                        raise _bad(f"has a key that is not a string: {key!r}", path)
                    inner = f"{path}.{printable(key)}" if path else printable(key)
                    check_text(key, inner)
                    stack.append((member, inner, depth + 1))
            else:
                stack.extend((member, f"{path}[{n}]", depth + 1) for n, member in enumerate(item))


def check_text(text: str, where: str = "") -> None:
    """Refuse a NUL character or a lone surrogate, which no text column can hold."""
    problem = text_problem(text)
    if problem is not None:
        raise _bad(problem, where)


def text_problem(text: str) -> str | None:
    """Why no text column can hold `text` (a NUL character or a lone surrogate), or None."""
    found = _BAD_CHARACTER.search(text)
    if found is None:
        return None
    character = found.group()
    what = "a NUL character" if character == "\x00" else "a lone surrogate"
    return f"must not contain {what} ({ascii(character)[1:-1]})"


def checked_name(name: str, limit: int, field: str = "name") -> str:
    """A name someone gives a thing (a view, a subscription): stripped, not empty, at most
    `limit` characters a text column holds."""
    name = name.strip()
    if not name:
        raise BadRequest(f"field '{field}' must be a non-empty string", field=field)
    if len(name) > limit or text_problem(name):
        raise BadRequest(
            f"field '{field}' must be at most {limit} printable characters", field=field
        )
    return name


def check_integer(value: int, where: str, *, bits: int) -> None:
    """Refuse an integer outside the signed range of `bits` bits (32: Integer, 64: Long)."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if not low <= value <= high:
        kind = "an 8-bit integer" if bits == 8 else f"a {bits}-bit integer"
        raise _bad(f"is out of range for {kind} ({low} to {high})", where)


def printable(text: str) -> str:
    """`text` with NUL characters and lone surrogates escaped, safe to quote in a message."""
    return _BAD_CHARACTER.sub(lambda m: ascii(m.group())[1:-1], text)


def _bad(problem: str, where: str) -> BadRequest:
    if where:
        return BadRequest(f"field '{where}' {problem}", field=where)
    return BadRequest(f"the value {problem}")


def _spell(number: float) -> str:
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"
