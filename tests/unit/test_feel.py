"""FEEL expressions and unary tests, table-driven: values, matches and errors."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from engine.feel import FeelError, compile_expression, compile_unary_tests

VARIABLES: dict[str, Any] = {
    "x": 5,
    "amount": 2.5,
    "name": "Gold Card",
    "order": {"amount": 120, "customer": {"tier": "gold"}},
    "items": [{"price": 3}, {"price": 7}],
    "nothing": None,
    "day": dt.date(2026, 3, 1),
}

EXPRESSIONS: list[tuple[str, Any]] = [
    ("1 + 2", 3),
    ("7 / 2", 3.5),
    ("0.1 + 0.2 = 0.3", True),
    ("2 ** 10", 1024),
    ("-x + 1", -4),
    ("- - 3", 3),
    ("10 - 2 * 3", 4),
    ("(10 - 2) * 3", 24),
    ("1 / 0", None),
    ("amount * 2", 5),
    ("x + null", None),
    ('"a" + "b"', "ab"),
    ('"say \\"hi\\"\\n\\u0041"', 'say "hi"\nA'),
    ("1 < 2", True),
    ("2 <= 1", False),
    ("x = 5", True),
    ("x != 5", False),
    ('"b" > "a"', True),
    ("null = null", True),
    ("x = null", False),
    ("x < null", None),
    ("true and null", None),
    ("false and null", False),
    ("true or null", True),
    ("false or null", None),
    ("not(true)", False),
    ("not(null)", None),
    ('if x > 3 then "big" else "small"', "big"),
    ('if null then "yes" else "no"', "no"),
    ("x in [1..10]", True),
    ("x in ]5..10]", False),
    ("x in [1, 5, 9]", True),
    ("x in < 5", False),
    ("x between 5 and 6", True),
    ("order.amount", 120),
    ("order.customer.tier", "gold"),
    ("order.missing", None),
    ("nothing.anything", None),
    ("items.price", [3, 7]),
    ("[1, 2, 3][item > 1]", [2, 3]),
    ("[1, 2, 3][1]", 1),
    ("[1, 2, 3][-1]", 3),
    ("items[price > 5].price", [7]),
    ("{a: 1, b: a + 1}.b", 2),
    ('{"full name": "x"}', {"full name": "x"}),
    ('contains(name, "Card")', True),
    ('starts with(name, "Gold")', True),
    ('ends with(name, "Gold")', False),
    ("string length(name)", 9),
    ("upper case(name)", "GOLD CARD"),
    ("lower case(name)", "gold card"),
    ('substring("foobar", 3)', "obar"),
    ('substring("foobar", 3, 3)', "oba"),
    ('substring("foobar", -2, 1)', "a"),
    ('number("12.5") + 1', 13.5),
    ("string(12)", "12"),
    ("string(1.50)", "1.5"),
    ("string(true)", "true"),
    ("abs(-3)", 3),
    ("floor(1.7)", 1),
    ("floor(-1.2)", -2),
    ("ceiling(1.2)", 2),
    ("decimal(1.256, 2)", 1.26),
    ("min(3, 1, 2)", 1),
    ("max([3, 1, 2])", 3),
    ("sum([1, 2, 3])", 6),
    ("sum(items.price)", 10),
    ("sum([])", None),
    ("count([1, 2, 3])", 3),
    ("count(1, 2)", 2),
    ('date("2026-01-01")', dt.date(2026, 1, 1)),
    ('date("2026-01-02") - date("2026-01-01")', dt.timedelta(days=1)),
    ('date("2026-01-31") + duration("P1M")', dt.date(2026, 2, 28)),
    ('date("2026-01-01") + duration("P1D")', dt.date(2026, 1, 2)),
    ('day > date("2026-01-01")', True),
    ('date and time("2026-01-01T10:00:00")', dt.datetime(2026, 1, 1, 10)),
    (
        'date and time("2026-01-01T10:00:00Z")',
        dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC),
    ),
    (
        'date and time("2026-01-01T10:00:00+01:00") < date and time("2026-01-01T10:00:00Z")',
        True,
    ),
    ('date and time("2026-01-01T10:00:00") + duration("PT2H")', dt.datetime(2026, 1, 1, 12)),
    ('time("10:30:00")', dt.time(10, 30)),
    ('duration("PT2H") > duration("PT90M")', True),
    ('duration("P1DT1H")', dt.timedelta(days=1, hours=1)),
    ("day.year + day.month + day.day", 2030),
    ('string(duration("P1DT2H"))', "P1DT2H0M0S"),
    ('string(duration("P14M"))', "P1Y2M"),
    ('string([1, "a", null])', "[1, a, null]"),
    ("string({a: 1})", "{a: 1}"),
    ("x in (1..5)", False),
    ("x in (1..6)", True),
    ('name in ("Gold Card", "Silver Card")', True),
    ("x in (< 3, > 4)", True),
    ("x in (< 3, > 5)", False),
    ("x in (x)", True),
    ('years and months duration(date("2020-01-15"), date("2021-03-14")) = duration("P1Y1M")', True),
]


@pytest.mark.parametrize(("text", "expected"), EXPRESSIONS)
def test_expression_value(text: str, expected: Any) -> None:
    result = compile_expression(text).evaluate(VARIABLES)
    assert result == expected
    assert type(result) is type(expected)


UNARY_TESTS: list[tuple[str, Any, bool]] = [
    ("-", None, True),
    ("-", "anything", True),
    ('"gold"', "gold", True),
    ('"gold"', "silver", False),
    ('"gold"', None, False),
    ("12", 12, True),
    ("12", 12.0, True),
    ("true", True, True),
    ("true", False, False),
    ("null", None, True),
    ("null", 1, False),
    ("< 1000", 999, True),
    ("< 1000", 1000, False),
    ("<= 1000", 1000, True),
    (">= 5", 5, True),
    ("> 5", 5, False),
    ("< 10", None, False),
    ("[1..10]", 1, True),
    ("[1..10]", 10, True),
    ("[1..10]", 11, False),
    ("]1..10[", 1, False),
    ("]1..10[", 10, False),
    ("]1..10[", 5, True),
    ("(1..10)", 1, False),
    ("(1..10)", 9, True),
    ("[1..10)", 10, False),
    ("[1..10)", 1, True),
    ("[1..10]", None, False),
    ('"a", "b"', "b", True),
    ('"a", "b"', "c", False),
    ("< 0, > 100", 150, True),
    ("< 0, > 100", 50, False),
    ('not("a", "b")', "c", True),
    ('not("a", "b")', "a", False),
    ('not("a")', None, True),
    ("not(< 10)", None, False),
    ("not(< 10)", 20, True),
    ('< date("2026-01-01")', dt.date(2025, 12, 31), True),
    ('< date("2026-01-01")', dt.date(2026, 1, 1), False),
    ('[date("2026-01-01")..date("2026-12-31")]', dt.date(2026, 6, 1), True),
    ("? > 3", 4, True),
    ("? > 3", 2, False),
    ('starts with(?, "go")', "gold", True),
    ("[1, 2, 3]", 2, True),
    ("< limit", 5, True),
    ("x", 5, True),
    ("cellInput > 3", 4, True),
    ("cellInput > 3", 3, False),
]


@pytest.mark.parametrize(("text", "value", "expected"), UNARY_TESTS)
def test_unary_test_matches(text: str, value: Any, expected: bool) -> None:
    assert compile_unary_tests(text).matches(value, {"limit": 10, "x": 5}) is expected


COMPILE_ERRORS: list[tuple[str, str]] = [
    ("1 +", "unexpected end of text"),
    ("(1", "expected ')'"),
    ("1 2", "unexpected '2'"),
    ("x.__class__", "not allowed"),
    ("__import__", "not allowed"),
    ('__import__("os")', "unknown function"),
    ("eval(1)", "unknown function"),
    ("upper case()", "takes 1 arguments"),
    ("substring(1)", "takes 2 to 3"),
    ("'a'", "unexpected character"),
    ("1 ; 2", "unexpected character"),
    ('"a\\q"', "unknown escape"),
    ("?", "only allowed in unary tests"),
    ("if true then 1", "expected 'else'"),
    ("(" * 200 + "1" + ")" * 200, "nested deeper"),
    ("+".join(["1"] * 500), "nested deeper"),
    ("1" * 10_001, "longer than"),
]


@pytest.mark.parametrize(("text", "message"), COMPILE_ERRORS)
def test_compile_error(text: str, message: str) -> None:
    with pytest.raises(FeelError, match=re.escape(message)):
        compile_expression(text)


@pytest.mark.parametrize("text", ["x in (" * 30 + "1", "x in [(x in [" * 30 + "1", "[(" * 30 + "1"])
def test_backtracking_texts_fail_fast(text: str) -> None:
    with pytest.raises(FeelError):
        compile_expression(text)
    with pytest.raises(FeelError):
        compile_unary_tests(text)


def test_compile_error_carries_position() -> None:
    with pytest.raises(FeelError) as caught:
        compile_expression("1 + * 2")
    assert caught.value.position == 4


@pytest.mark.parametrize("text", ["", "< ", "[1..", "not(", '"a",', "[1..10", "1..2"])
def test_unary_tests_compile_error(text: str) -> None:
    with pytest.raises(FeelError):
        compile_unary_tests(text)


EVALUATION_ERRORS: list[tuple[str, str]] = [
    ('"a" < 1', "cannot compare string with number"),
    ('"a" = 1', "cannot compare string with number"),
    ('1 + "a"', "cannot apply + to number and string"),
    ("1 and true", "expected a boolean"),
    ("if 1 then 2 else 3", "expected a boolean"),
    ("missing + 1", "no variable named 'missing'"),
    ("x.amount", "cannot read 'amount' of a number"),
    ("upper case(1)", "expects a string"),
    ('number("abc")', "cannot read"),
    ('date("2026-13-01")', "is not a date"),
    ('date("tomorrow")', "is not a date"),
    ('duration("P1Y1D")', "mixes"),
    ('duration("forever")', "is not a duration"),
    ("2 ** 100000", "exponent larger than"),
    (
        "10 ** 1000 * 10 ** 1000 * 10 ** 1000 * 10 ** 1000 * 10 ** 1000 * 10 ** 1000 * 10 ** 1000",
        "failed",
    ),
    ('sum([1, "a"])', "expects a number"),
    ("10 ** 999", "too large"),
]


@pytest.mark.parametrize(("text", "message"), EVALUATION_ERRORS)
def test_evaluation_error(text: str, message: str) -> None:
    expression = compile_expression(text)
    with pytest.raises(FeelError, match=re.escape(message)):
        expression.evaluate(VARIABLES)


@pytest.mark.parametrize(
    ("text", "value"), [("< 10", "a"), ('"gold"', 5), ("[1..10]", "x"), ('< date("2026-01-01")', 1)]
)
def test_unary_test_on_incompatible_input_is_an_error(text: str, value: Any) -> None:
    with pytest.raises(FeelError, match="cannot compare"):
        compile_unary_tests(text).matches(value, {})


def test_huge_range_membership_does_not_materialise() -> None:
    expression = compile_expression("x in [1..1000000000000000000000000]")
    assert expression.evaluate({"x": 10**20}) is True


def test_very_long_string_result_is_refused() -> None:
    expression = compile_expression("s + s")
    with pytest.raises(FeelError, match="longer than"):
        expression.evaluate({"s": "x" * 600_000})


def test_path_reads_only_context_keys_never_attributes() -> None:
    class Secret:
        token = "hidden"

    assert compile_expression("v.token").evaluate({"v": {"token": 1}}) == 1
    with pytest.raises(FeelError, match="not supported"):
        compile_expression("v.token").evaluate({"v": Secret()})
    with pytest.raises(FeelError, match="cannot read"):
        compile_expression("v.real").evaluate({"v": 3})


def test_input_variable_names_the_value_under_test() -> None:
    tests = compile_unary_tests("amount >= limit")
    assert tests.matches(12, {"limit": 10}, input_variable="amount") is True
    assert tests.matches(8, {"limit": 10}, input_variable="amount") is False


def test_path_on_a_date_reads_only_its_listed_properties() -> None:
    with pytest.raises(FeelError, match="cannot read 'isoformat' of a date"):
        compile_expression("day.isoformat").evaluate(VARIABLES)


def test_compiled_once_evaluates_many_times() -> None:
    expression = compile_expression("x * 2")
    assert [expression.evaluate({"x": value}) for value in (1, 2.5, -3)] == [2, 5, -6]
