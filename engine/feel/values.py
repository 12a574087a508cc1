"""FEEL values: conversion at the boundary, typed comparison and arithmetic, temporal parsing."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Context, Decimal, DivisionByZero, InvalidOperation, Overflow
from typing import Any

from engine.feel.budget import spend
from engine.feel.errors import FeelError

MAX_STRING = 1_000_000
MAX_EXPONENT = 1_000
NUMBERS = Context(
    prec=34, Emax=6144, Emin=-6143, traps=[InvalidOperation, DivisionByZero, Overflow]
)


@dataclass(frozen=True, order=True)
class YearsMonths:
    """A FEEL years and months duration, counted in months."""

    months: int


# Each FEEL type's Python class and name, in the order they are tested (bool before the
# numbers, datetime before date, which it subclasses).
_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    (Decimal, "number"),
    (str, "string"),
    (dt.datetime, "date and time"),
    (dt.date, "date"),
    (dt.time, "time"),
    (dt.timedelta, "days and time duration"),
    (YearsMonths, "years and months duration"),
    (list, "list"),
    (dict, "context"),
)


def type_name(value: Any) -> str:
    return next(
        (name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__
    )


def to_feel(value: Any, depth: int = 0) -> Any:
    """A Python variable value as a FEEL value (numbers become Decimal)."""
    if depth > 50:
        raise FeelError("variable value nested too deeply")
    if value is None or isinstance(value, bool | str | Decimal | YearsMonths):
        if isinstance(value, str) and len(value) > MAX_STRING:
            raise FeelError(f"string variable longer than {MAX_STRING} characters")
        return value
    if isinstance(value, int):
        return NUMBERS.create_decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise FeelError(f"number {value} is not a FEEL number")
        return NUMBERS.create_decimal(repr(value))
    if isinstance(value, dt.date | dt.time | dt.timedelta):
        return value
    if isinstance(value, Mapping):
        spend(len(value))
        return {str(key): to_feel(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        spend(len(value))
        return [to_feel(item, depth + 1) for item in value]
    raise FeelError(f"variable values of type {type(value).__name__} are not supported")


def to_python(value: Any) -> Any:
    """A FEEL value as the engine's Python value: int when integral, float otherwise."""
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value.adjusted()) < 40:
            return int(value)
        number = float(value)
        if number in (float("inf"), float("-inf")):
            raise FeelError(f"number result {value} is too large")
        return number
    if isinstance(value, list):
        spend(len(value))
        return [to_python(item) for item in value]
    if isinstance(value, dict):
        spend(len(value))
        return {key: to_python(item) for key, item in value.items()}
    return value


def check_string(value: str) -> str:
    if len(value) > MAX_STRING:
        raise FeelError(f"string result longer than {MAX_STRING} characters")
    return value


def _comparable(left: Any, right: Any) -> bool:
    kinds = (bool, Decimal, str, dt.datetime, dt.date, dt.time, dt.timedelta, YearsMonths)
    for kind in kinds:
        if isinstance(left, kind) or isinstance(right, kind):
            if not (isinstance(left, kind) and isinstance(right, kind)):
                return False
            if kind is dt.date and isinstance(left, dt.datetime) != isinstance(right, dt.datetime):
                return False
            if isinstance(left, dt.datetime | dt.time) and isinstance(right, dt.datetime | dt.time):
                return (left.tzinfo is None) == (right.tzinfo is None)
            return True
    return type(left) is type(right)


def equals(left: Any, right: Any, position: int | None = None) -> bool:
    """FEEL `=`: null equals only null; values of different types are an error."""
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, list) and isinstance(right, list):
        spend(len(left))
        return len(left) == len(right) and all(
            equals(a, b, position) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        spend(len(left))
        return left.keys() == right.keys() and all(
            equals(left[key], right[key], position) for key in left
        )
    if not _comparable(left, right):
        raise FeelError(f"cannot compare {type_name(left)} with {type_name(right)}", position)
    return bool(left == right)


def compare(operator: str, left: Any, right: Any, position: int | None = None) -> bool | None:
    """FEEL comparison: null when either side is null, an error for incompatible types."""
    if operator == "=":
        return equals(left, right, position)
    if operator == "!=":
        return not equals(left, right, position)
    if left is None or right is None:
        return None
    if (
        not _comparable(left, right)
        or isinstance(left, bool | list | dict)
        or isinstance(right, bool | list | dict)
    ):
        raise FeelError(f"cannot compare {type_name(left)} with {type_name(right)}", position)
    if operator == "<":
        return bool(left < right)
    if operator == "<=":
        return bool(left <= right)
    if operator == ">":
        return bool(left > right)
    return bool(left >= right)


def _add_months(value: dt.date, months: int) -> dt.date:
    total = value.year * 12 + value.month - 1 + months
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        raise FeelError("date out of range")
    next_month = dt.date(year + (month == 11), (month + 1) % 12 + 1, 1)
    last = (next_month - dt.timedelta(days=1)).day
    return value.replace(year=year, month=month + 1, day=min(value.day, last))


def arithmetic(operator: str, left: Any, right: Any, position: int | None = None) -> Any:
    """FEEL + - * / **: null when either side is null, an error for incompatible types."""
    if left is None or right is None:
        return None
    try:
        return _arithmetic(operator, left, right, position)
    except (ArithmeticError, OverflowError, ValueError) as error:
        if isinstance(error, DivisionByZero | ZeroDivisionError):
            return None
        raise FeelError(f"arithmetic {operator} failed: {type(error).__name__}", position) from None


def _arithmetic(operator: str, left: Any, right: Any, position: int | None) -> Any:
    both_numbers = isinstance(left, Decimal) and isinstance(right, Decimal)
    if both_numbers:
        if operator == "+":
            return NUMBERS.add(left, right)
        if operator == "-":
            return NUMBERS.subtract(left, right)
        if operator == "*":
            return NUMBERS.multiply(left, right)
        if operator == "/":
            return NUMBERS.divide(left, right)
        if abs(right) > MAX_EXPONENT:
            raise FeelError(f"exponent larger than {MAX_EXPONENT}", position)
        return NUMBERS.power(left, right)
    if operator == "+" and isinstance(left, str) and isinstance(right, str):
        return check_string(left + right)
    if (
        isinstance(left, dt.date)
        and not isinstance(left, dt.datetime)
        and isinstance(right, dt.date)
        and not isinstance(right, dt.datetime)
        and operator == "-"
    ):
        return left - right
    if isinstance(left, dt.datetime) and isinstance(right, dt.datetime) and operator == "-":
        if not _comparable(left, right):
            raise FeelError("cannot subtract a zoned and an unzoned date and time", position)
        return left - right
    if isinstance(left, dt.date | dt.datetime) and operator in ("+", "-"):
        if isinstance(right, dt.timedelta):
            if isinstance(left, dt.datetime):
                return left + right if operator == "+" else left - right
            # A date plus a days duration is a date; whole days only.
            days = right.days if operator == "+" else -right.days
            return left + dt.timedelta(days=days)
        if isinstance(right, YearsMonths):
            months = right.months if operator == "+" else -right.months
            return _add_months(left, months)
    if (
        isinstance(right, dt.date)
        and operator == "+"
        and isinstance(left, dt.timedelta | YearsMonths)
    ):
        return _arithmetic("+", right, left, position)
    if isinstance(left, dt.timedelta) and isinstance(right, dt.timedelta):
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "/":
            return NUMBERS.divide(
                Decimal(left // dt.timedelta(microseconds=1)),
                Decimal(right // dt.timedelta(microseconds=1)),
            )
    if isinstance(left, YearsMonths) and isinstance(right, YearsMonths) and operator in "+-":
        return YearsMonths(
            left.months + right.months if operator == "+" else left.months - right.months
        )
    if isinstance(left, dt.timedelta) and isinstance(right, Decimal) and operator in ("*", "/"):
        micros = Decimal(left // dt.timedelta(microseconds=1))
        scaled = micros * right if operator == "*" else NUMBERS.divide(micros, right)
        return dt.timedelta(microseconds=int(scaled))
    if isinstance(left, Decimal) and isinstance(right, dt.timedelta) and operator == "*":
        return _arithmetic("*", right, left, position)
    raise FeelError(
        f"cannot apply {operator} to {type_name(left)} and {type_name(right)}", position
    )


_DURATION = re.compile(
    r"(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?"
)


def parse_duration(text: str) -> dt.timedelta | YearsMonths:
    match = _DURATION.fullmatch(text)
    if match is None or text.rstrip("-") in ("P", "PT") or text.endswith("T"):
        raise FeelError(f"{text!r} is not a duration")
    sign, years, months, weeks, days, hours, minutes, seconds = match.groups()
    factor = -1 if sign else 1
    if years or months:
        if weeks or days or hours or minutes or seconds:
            raise FeelError(f"{text!r} mixes years/months with days/time")
        if len(years or "") + len(months or "") > 8:
            raise FeelError(f"{text!r} is too long a duration")
        return YearsMonths(factor * (int(years or 0) * 12 + int(months or 0)))
    try:
        value = dt.timedelta(
            weeks=int(weeks or 0),
            days=int(days or 0),
            hours=int(hours or 0),
            minutes=int(minutes or 0),
            seconds=float(seconds or 0),
        )
    except OverflowError:
        raise FeelError(f"{text!r} is too long a duration") from None
    return value * factor


def parse_date(text: str) -> dt.date:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise FeelError(f"{text!r} is not a date (yyyy-mm-dd)")
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise FeelError(f"{text!r} is not a date (yyyy-mm-dd)") from None


def _zone(text: str) -> tuple[str, dt.tzinfo | None]:
    if text.endswith("Z"):
        return text[:-1], dt.UTC
    zoned = re.fullmatch(r"(.*)([+-]\d{2}:\d{2})", text)
    if zoned and ("T" in text or text.count(":") >= 3):
        hours, minutes = zoned.group(2)[1:].split(":")
        offset = dt.timedelta(hours=int(hours), minutes=int(minutes))
        sign = -1 if zoned.group(2)[0] == "-" else 1
        try:
            return zoned.group(1), dt.timezone(sign * offset)
        except ValueError:
            raise FeelError(f"{text!r} has an invalid offset") from None
    return text, None


_TIME = r"\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?"


def parse_time(text: str) -> dt.time:
    local, zone = _zone(text)
    if not re.fullmatch(_TIME, local):
        raise FeelError(f"{text!r} is not a time (hh:mm:ss)")
    try:
        return dt.time.fromisoformat(local).replace(tzinfo=zone)
    except ValueError:
        raise FeelError(f"{text!r} is not a time (hh:mm:ss)") from None


def parse_date_and_time(text: str) -> dt.datetime:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return dt.datetime.combine(parse_date(text), dt.time())
    local, zone = _zone(text)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T" + _TIME, local):
        raise FeelError(f"{text!r} is not a date and time (yyyy-mm-ddThh:mm:ss)")
    try:
        return dt.datetime.fromisoformat(local).replace(tzinfo=zone)
    except ValueError:
        raise FeelError(f"{text!r} is not a date and time (yyyy-mm-ddThh:mm:ss)") from None
