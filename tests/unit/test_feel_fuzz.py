"""Random FEEL text and token soup never raise anything but FeelError, compiled or evaluated."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.feel import FeelError, compile_expression, compile_unary_tests

VARIABLES: dict[str, Any] = {
    "x": 7,
    "y": -2.5,
    "s": "gold",
    "d": dt.date(2026, 1, 1),
    "c": {"a": 1, "b": [1, 2]},
    "l": [1, "a", None],
    "n": None,
}
TOKENS = [
    "1",
    "0",
    "-1",
    "2.5",
    "1000",
    '"a"',
    '"gold"',
    '""',
    "true",
    "false",
    "null",
    "x",
    "y",
    "s",
    "d",
    "c",
    "l",
    "n",
    "item",
    "?",
    "+",
    "-",
    "*",
    "/",
    "**",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    ":",
    "and",
    "or",
    "not",
    "if",
    "then",
    "else",
    "in",
    "between",
    "a",
    "b",
    "string length",
    "upper case",
    "substring",
    "date",
    "duration",
    '"2026-01-01"',
    '"P1D"',
    "date and time",
    "sum",
    "count",
    "min",
    "contains",
    "__class__",
]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


def _exercise(text: str) -> None:
    with contextlib.suppress(FeelError):
        compile_expression(text).evaluate(VARIABLES)
    try:
        tests = compile_unary_tests(text)
    except FeelError:
        return
    for value in (None, 5, "gold", dt.date(2026, 1, 1)):
        with contextlib.suppress(FeelError):
            tests.matches(value, VARIABLES)


@SETTINGS
@given(st.text(max_size=60))
def test_random_text_only_raises_feel_error(text: str) -> None:
    _exercise(text)


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=25))
def test_token_soup_only_raises_feel_error(tokens: list[str]) -> None:
    _exercise(" ".join(tokens))
