"""The FEEL built-in functions people use in decision tables."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from engine.feel.budget import spend
from engine.feel.errors import FeelError
from engine.feel.values import (
    NUMBERS,
    YearsMonths,
    check_string,
    compare,
    parse_date,
    parse_date_and_time,
    parse_duration,
    parse_time,
    type_name,
)

Function = Callable[..., Any]


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise FeelError(f"{name}() expects a string but got {type_name(value)}")
    return value


def _number(name: str, value: Any) -> Decimal:
    if not isinstance(value, Decimal):
        raise FeelError(f"{name}() expects a number but got {type_name(value)}")
    return value


def _items(name: str, arguments: tuple[Any, ...]) -> list[Any]:
    single = len(arguments) == 1 and isinstance(arguments[0], list)
    items = list(arguments[0]) if single else list(arguments)
    spend(len(items))
    return items


def _substring(text: Any, start: Any, length: Any = None) -> str:
    value = _text("substring", text)
    first = int(_number("substring", start))
    index = first - 1 if first > 0 else len(value) + first
    index = max(index, 0)
    if length is None:
        return value[index:]
    return value[index : index + max(int(_number("substring", length)), 0)]


def _string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return (
            format(value.normalize(NUMBERS), "f")
            if value == value.to_integral_value()
            else str(value.normalize(NUMBERS))
        )
    if isinstance(value, str):
        return value
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list):
        spend(len(value))
        return check_string("[" + ", ".join(_string(item) for item in value) + "]")
    if isinstance(value, dict):
        spend(len(value))
        entries = (f"{key}: {_string(item)}" for key, item in value.items())
        return check_string("{" + ", ".join(entries) + "}")
    if isinstance(value, YearsMonths):
        return (
            f"P{value.months // 12}Y{value.months % 12}M"
            if value.months >= 0
            else (f"-P{-value.months // 12}Y{-value.months % 12}M")
        )
    if isinstance(value, dt.timedelta):
        sign, span = ("-", -value) if value < dt.timedelta(0) else ("", value)
        hours, rest = divmod(span.seconds, 3600)
        return f"{sign}P{span.days}DT{hours}H{rest // 60}M{rest % 60}S"
    raise FeelError(f"string() cannot convert {type_name(value)}")


def _to_number(value: Any) -> Decimal:
    text = _text("number", value).strip()
    try:
        number = NUMBERS.create_decimal(text)
    except InvalidOperation:
        raise FeelError(f"number() cannot read {value[:40]!r}") from None
    if not number.is_finite():
        raise FeelError(f"number() cannot read {value[:40]!r}")
    return number


def _extreme(name: str, operator: str) -> Function:
    def pick(*arguments: Any) -> Any:
        items = _items(name, arguments)
        if not items:
            return None
        best = items[0]
        for item in items[1:]:
            if compare(operator, item, best):
                best = item
        return best

    return pick


def _sum(*arguments: Any) -> Any:
    items = _items("sum", arguments)
    if not items:
        return None
    total = Decimal(0)
    for item in items:
        total = NUMBERS.add(total, _number("sum", item))
    return total


def _round(rounding: str) -> Function:
    def apply(value: Any) -> Decimal:
        return _number("round", value).quantize(Decimal(1), rounding=rounding, context=NUMBERS)

    return apply


def _decimal(value: Any, scale: Any) -> Decimal:
    places = int(_number("decimal", scale))
    if not -6000 <= places <= 6000:
        raise FeelError("decimal() scale out of range")
    return _number("decimal", value).quantize(
        Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN, context=NUMBERS
    )


def _not(value: Any) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise FeelError(f"not() expects a boolean but got {type_name(value)}")
    return not value


def _duration(text: Any) -> dt.timedelta | YearsMonths:
    return parse_duration(_text("duration", text))


def _years_and_months(start: Any, end: Any) -> YearsMonths:
    if not (isinstance(start, dt.date) and isinstance(end, dt.date)):
        raise FeelError("years and months duration() expects two dates")
    months = (end.year - start.year) * 12 + end.month - start.month
    if months > 0 and end.day < start.day:
        months -= 1
    elif months < 0 and end.day > start.day:
        months += 1
    return YearsMonths(months)


def _date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    return parse_date(_text("date", value))


def _date_and_time(value: Any) -> dt.datetime:
    return parse_date_and_time(_text("date and time", value))


def _time(value: Any) -> dt.time:
    if isinstance(value, dt.datetime):
        return value.timetz()
    return parse_time(_text("time", value))


# name -> (function, least arguments, most arguments or None for any number)
FUNCTIONS: dict[str, tuple[Function, int, int | None]] = {
    "contains": (lambda s, m: _text("contains", m) in _text("contains", s), 2, 2),
    "starts with": (lambda s, m: _text("starts with", s).startswith(_text("starts with", m)), 2, 2),
    "ends with": (lambda s, m: _text("ends with", s).endswith(_text("ends with", m)), 2, 2),
    "string length": (lambda s: Decimal(len(_text("string length", s))), 1, 1),
    "upper case": (lambda s: _text("upper case", s).upper(), 1, 1),
    "lower case": (lambda s: _text("lower case", s).lower(), 1, 1),
    "substring": (_substring, 2, 3),
    "number": (_to_number, 1, 1),
    "string": (_string, 1, 1),
    "abs": (lambda x: abs(_number("abs", x)), 1, 1),
    "floor": (_round(ROUND_FLOOR), 1, 1),
    "ceiling": (_round(ROUND_CEILING), 1, 1),
    "decimal": (_decimal, 2, 2),
    "min": (_extreme("min", "<"), 1, None),
    "max": (_extreme("max", ">"), 1, None),
    "sum": (_sum, 1, None),
    "count": (lambda *a: Decimal(len(_items("count", a))), 1, None),
    "not": (_not, 1, 1),
    "date": (_date, 1, 1),
    "date and time": (_date_and_time, 1, 1),
    "time": (_time, 1, 1),
    "duration": (_duration, 1, 1),
    "years and months duration": (_years_and_months, 2, 2),
}
# Functions that answer null for a null argument instead of failing.
NULL_SAFE = {"not", "string", "min", "max", "sum", "count"}


def check_arity(name: str, count: int, position: int) -> None:
    if name not in FUNCTIONS:
        raise FeelError(f"unknown function {name!r}", position)
    _, least, most = FUNCTIONS[name]
    if count < least or (most is not None and count > most):
        expected = (
            str(least)
            if least == most
            else f"{least} or more"
            if most is None
            else (f"{least} to {most}")
        )
        raise FeelError(f"{name}() takes {expected} arguments, not {count}", position)


def call(name: str, arguments: list[Any], position: int) -> Any:
    function, _, _ = FUNCTIONS[name]
    if name not in NULL_SAFE and any(argument is None for argument in arguments):
        return None
    try:
        result = function(*arguments)
    except FeelError as error:
        raise FeelError(error.message, position) from None
    except (ArithmeticError, ValueError, OverflowError) as error:
        raise FeelError(f"{name}() failed: {type(error).__name__}", position) from None
    if isinstance(result, str):
        check_string(result)
    return result
