"""Query parameters, read the one way every HTTP surface reads them: /api/v1, /engine-rest, the
console pages and the event stream.

A `Query` wraps a request's query parameters and reads each by type: text, repeated text,
integers within bounds, booleans, ids, dates and times, Camunda's comma lists, one of a set of
words. An empty value is an absent one. Whatever no text column can hold (a NUL character, a
lone surrogate) is refused, and so is every value that does not read as its type: the reader
raises `ParameterError`, a `BadRequest` naming the parameter, which each surface answers in its
own shape (/api/v1 and the stream: a JSON 400 whose detail names the field; /engine-rest:
Camunda's InvalidRequestException; the console: the page's error).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from typing import ClassVar, overload
from uuid import UUID

from starlette.datastructures import QueryParams

from engine.errors import BadRequest
from engine.language.json_input import (
    INT32_MAX,
    INT32_MIN,
    MAX_INTEGER_DIGITS,
    printable,
    text_problem,
)

NO_MATCH = UUID(int=0)
"""The id a filter reads for a text that is no id, where such a filter matches nothing."""

SHOWN_CHARACTERS = 40
_INTEGER = re.compile(r"[+-]?[0-9]+")


class ParameterError(BadRequest):
    """A query parameter refused: its `name`, the `value` sent and the `problem` with it (a
    phrase such as "must be an integer"). The message names the parameter; so does the detail
    (`field`)."""

    def __init__(self, name: str, value: str, problem: str) -> None:
        super().__init__(f"query parameter '{name}' {problem}", field=name)
        self.name = name
        self.value = value
        self.problem = problem

    @property
    def shown(self) -> str:
        """The value, safe to quote in a message (see `shown`)."""
        return shown(self.value)


def shown(value: str) -> str:
    """A value sent, safe to quote in a message: escaped, and cut short when long."""
    text = printable(value)
    if len(text) > SHOWN_CHARACTERS:
        return text[:SHOWN_CHARACTERS] + "..."
    return text


# -- one value ------------------------------------------------------------------------------------


def checked_text(name: str, value: str) -> str:
    """`value` when a text column can hold it."""
    problem = text_problem(value)
    if problem is not None:
        raise ParameterError(name, value, problem)
    return value


def read_integer(name: str, value: str, *, minimum: int, maximum: int) -> int:
    """An integer written in decimal digits, from `minimum` to `maximum`."""
    raw = checked_text(name, value)
    if len(raw) > MAX_INTEGER_DIGITS + 1 and _INTEGER.fullmatch(raw):
        raise ParameterError(name, raw, f"must be between {minimum} and {maximum}")
    if not _INTEGER.fullmatch(raw):
        raise ParameterError(name, raw, "must be an integer")
    number = int(raw)
    if not minimum <= number <= maximum:
        raise ParameterError(name, raw, f"must be between {minimum} and {maximum}")
    return number


def parse_time(text: str) -> datetime:
    """A date and time in ISO 8601 or Camunda's format (`2025-01-31T12:00:00.000+0100`), an
    offset's `+` that arrived as a space in a query string included. Without an offset the time
    is UTC. Raises ValueError."""
    parsed = _moment(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _moment(text: str) -> datetime:
    """`text` read as a date and time, with its offset if it has one. Raises ValueError."""
    value = text.strip()
    if " " in value and "T" in value:
        value = value.replace(" ", "+")
    return datetime.fromisoformat(value)


def as_uuid(value: str) -> UUID:
    """The id `value` names, or NO_MATCH for a text that is no id (which names no row)."""
    try:
        return UUID(value)
    except ValueError:
        return NO_MATCH


# -- a request's parameters -----------------------------------------------------------------------


class Query:
    """The typed readers of one request's query parameters.

    `unknown_ids_match_nothing` is the surface's reading of a text that is no id: a 400 (False),
    or a filter that matches nothing (True, as Camunda's REST API answers for ids it never
    issued)."""

    unknown_ids_match_nothing: ClassVar[bool] = False
    query: QueryParams

    def __init__(self, query: QueryParams) -> None:
        self.query = query

    def text(self, name: str, default: str | None = None, *, strip: bool = False) -> str | None:
        """The parameter's text; `default` when it is absent or empty (after `strip`, which
        drops surrounding white space)."""
        value = self.query.get(name)
        if value is not None and strip:
            value = value.strip()
        if value is None or value == "":
            return default
        return checked_text(name, value)

    def fields(self, names: Iterable[str]) -> dict[str, str]:
        """The text of each of `names` that has one, without surrounding white space: the
        fields of a filter form sent by GET, to read and to show again."""
        found = {name: self.text(name, strip=True) for name in names}
        return {name: value for name, value in found.items() if value is not None}

    def texts(self, name: str) -> list[str]:
        """Every value of a repeated parameter (`?var=a&var=b`)."""
        return [checked_text(name, value) for value in self.query.getlist(name)]

    @overload
    def integer(
        self, name: str, default: int, *, minimum: int = ..., maximum: int = ..., strip: bool = ...
    ) -> int: ...

    @overload
    def integer(
        self,
        name: str,
        default: None = None,
        *,
        minimum: int = ...,
        maximum: int = ...,
        strip: bool = ...,
    ) -> int | None: ...

    def integer(
        self,
        name: str,
        default: int | None = None,
        *,
        minimum: int = INT32_MIN,
        maximum: int = INT32_MAX,
        strip: bool = False,
    ) -> int | None:
        """An integer from `minimum` to `maximum` (by default a 32-bit integer)."""
        value = self.text(name, strip=strip)
        if value is None:
            return default
        return read_integer(name, value, minimum=minimum, maximum=maximum)

    def flag(self, name: str, *, digits: bool = False) -> bool | None:
        """`true` or `false` in any case; with `digits`, `1` and `0` as well."""
        value = self.text(name)
        if value is None:
            return None
        words = {"true": True, "false": False}
        if digits:
            words.update({"1": True, "0": False})
        found = words.get(value.lower())
        if found is None:
            raise ParameterError(name, value, "must be true or false")
        return found

    def flag_unless(self, name: str, negation: str) -> bool | None:
        """The flag `name`, false when the flag `negation` is true: a pair such as
        suspended/active, where either may narrow a query."""
        value = self.flag(name)
        return False if self.flag(negation) else value

    def uuid(self, name: str) -> UUID | None:
        """An id (see `unknown_ids_match_nothing`)."""
        value = self.text(name)
        return None if value is None else self._id(name, value)

    def csv(self, name: str) -> list[str] | None:
        """A comma-separated list (`?ids=a,b`); its empty parts are dropped."""
        value = self.text(name)
        return None if value is None else [part for part in value.split(",") if part]

    def uuids(self, name: str) -> list[UUID] | None:
        """A comma-separated list of ids (see `unknown_ids_match_nothing`)."""
        parts = self.csv(name)
        return None if parts is None else [self._id(name, part) for part in parts]

    def date(self, name: str, *, offset_required: bool = False) -> datetime | None:
        """A date and time (see `parse_time`); with `offset_required`, one without an offset is
        refused instead of read as UTC."""
        value = self.text(name)
        if value is None:
            return None
        try:
            moment: datetime | None = _moment(value)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is None:
            moment = None if offset_required else moment.replace(tzinfo=UTC)
        if moment is None:
            problem = (
                "must be an ISO 8601 time with an offset (2025-01-31T12:00:00Z)"
                if offset_required
                else "must be a date and time (2025-01-31T12:00:00Z)"
            )
            raise ParameterError(name, value, problem)
        return moment

    def one_of(self, name: str, choices: Collection[str]) -> str | None:
        """One of `choices`, exactly."""
        value = self.text(name)
        if value is None or value in choices:
            return value
        raise ParameterError(name, value, f"must be one of {', '.join(choices)}")

    def some_of(self, name: str, choices: Collection[str]) -> list[str] | None:
        """A comma-separated list of `choices` (see `csv`)."""
        parts = self.csv(name)
        for part in parts or ():
            if part not in choices:
                problem = f"names '{shown(part)}', not one of {', '.join(choices)}"
                raise ParameterError(name, part, problem)
        return parts

    def _id(self, name: str, value: str) -> UUID:
        if self.unknown_ids_match_nothing:
            return as_uuid(value)
        try:
            return UUID(value)
        except ValueError:
            raise ParameterError(name, value, "must be an id (a UUID)") from None
