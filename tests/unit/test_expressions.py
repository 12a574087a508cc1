from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import ExpressionError
from engine.language.expressions import (
    MAX_DEPTH,
    MAX_SOURCE_LENGTH,
    compile_expression,
    is_expression,
)

VARIABLES: dict[str, Any] = {
    "amount": 1500,
    "small": 10,
    "approved": True,
    "rejected": False,
    "a": "x",
    "b": 5,
    "name": "Ada",
    "nothing": None,
    "blank": "",
    "items": ["first", "second"],
    "no_items": [],
    "order": {"total": 99.5, "lines": [{"sku": "A-1"}], "customer": {"tier": "gold"}},
    "no_order": {},
    "price": 2.5,
    "zero": 0,
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # literals
        ("${42}", 42),
        ("${3.25}", 3.25),
        ("${1.5e3}", 1500.0),
        ("${'single'}", "single"),
        ('${"double"}', "double"),
        (r"${'it\'s'}", "it's"),
        (r'${"a\"b\\c\n"}', 'a"b\\c\n'),
        ("${'}'}", "}"),
        ("${true}", True),
        ("${false}", False),
        ("${null}", None),
        ("#{approved}", True),
        # variables and comparisons
        ("${approved}", True),
        ("${amount > 1000}", True),
        ("${small > 1000}", False),
        ("${amount gt 1000}", True),
        ("${amount >= 1500 && amount le 1500}", True),
        ("${b < 3}", False),
        ("${b lt 6}", True),
        ("${b ge 5}", True),
        ("${a == 'x' && !(b < 3)}", True),
        ("${a eq 'x'}", True),
        ("${a != 'x'}", False),
        ("${a ne 'y'}", True),
        ('${name == "Ada"}', True),
        ("${name < 'Bob'}", True),
        # logic
        ("${approved and rejected}", False),
        ("${approved or rejected}", True),
        ("${not approved}", False),
        ("${!rejected}", True),
        ("${approved && rejected || approved}", True),
        ("${approved || rejected && rejected}", True),
        ("${rejected && unknown}", False),
        ("${approved || unknown}", True),
        ("${!nothing}", True),
        # arithmetic and precedence
        ("${1 + 2 * 3}", 7),
        ("${(1 + 2) * 3}", 9),
        ("${10 - 4 - 3}", 3),
        ("${-b + 1}", -4),
        ("${- -b}", 5),
        ("${7 / 2}", 3.5),
        ("${6 div 3}", 2.0),
        ("${7 % 3}", 1),
        ("${-7 mod 3}", -1),
        ("${7.5 % 2}", 1.5),
        ("${price * 2}", 5.0),
        ("${amount / 1000 > 1}", True),
        ("${'Ada' + ' ' + 'Lovelace'}", "Ada Lovelace"),
        # property and index access
        ("${order.total}", 99.5),
        ("${order['total']}", 99.5),
        ('${order["customer"].tier}', "gold"),
        ("${order.lines[0].sku}", "A-1"),
        ("${items[1]}", "second"),
        ("${items[b - 4]}", "second"),
        ("${items[7]}", None),
        ("${items[-1]}", None),
        ("${order.missing}", None),
        ("${order.missing.deeper}", None),
        ("${nothing.anything}", None),
        # empty
        ("${empty nothing}", True),
        ("${empty blank}", True),
        ("${empty no_items}", True),
        ("${empty no_order}", True),
        ("${empty items}", False),
        ("${empty name}", False),
        ("${empty zero}", False),
        ("${not empty order.lines}", True),
        # ternary
        ("${approved ? 'yes' : 'no'}", "yes"),
        ("${rejected ? 'yes' : 'no'}", "no"),
        ("${rejected ? 1 : approved ? 2 : 3}", 2),
        ("${amount > 1000 ? amount * 2 : 0}", 3000),
        # null and equality across types
        ("${nothing == null}", True),
        ("${nothing != null}", False),
        ("${nothing == 0}", False),
        ("${zero == null}", False),
        ("${approved == 1}", False),
        ("${1 == 1.0}", True),
        ("${items == items}", True),
    ],
)
def test_evaluates(text: str, expected: Any) -> None:
    result = compile_expression(text).evaluate(VARIABLES)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("${__import__('os')}", "calls are not allowed in expressions: ${__import__('os')}"),
        ("${open('x')}", "calls are not allowed"),
        ("${x.y()}", "calls are not allowed"),
        ("${order.lines[0]()}", "calls are not allowed"),
        ("${(a)(b)}", "calls are not allowed"),
        ("${fn:length(items)}", "calls are not allowed"),
        ("${a.__class__}", "names starting with '_' are not allowed"),
        ("${a['__class__']}", "names starting with '_' are not allowed"),
        ('${a["_private"]}', "names starting with '_' are not allowed"),
        ("${_secret}", "names starting with '_' are not allowed"),
        ("${a; b}", "';' is not allowed"),
        ("${a = 1}", "assignment is not allowed"),
        ("${a += 1}", "assignment is not allowed"),
        ("${x -> x + 1}", "lambda expressions are not allowed"),
        ("${a instanceof b}", "instanceof is not supported"),
        ("${}", "empty expression"),
        ("${   }", "empty expression"),
        ("${} ", "text outside the expression"),
        ("foo ${a}", "must be written as ${...}"),
        ("${a} bar", "text outside the expression"),
        ("${a}${b}", "text outside the expression"),
        ("", "must be written as ${...}"),
        ("a > 1", "must be written as ${...}"),
        ("${a", "missing closing '}'"),
        ("${'abc}", "missing closing '}'"),
        ("${(a}", "expected ')'"),
        ("${a)}", "unexpected ')'"),
        ("${items[0}", "expected ']'"),
        ("${a +}", "unexpected end of expression"),
        ("${a b}", "unexpected 'b'"),
        ("${a ? b}", "expected ':'"),
        ("${a.1}", "expected a property name"),
        ("${{a}", "unexpected character '{'"),
        ("${a & b}", "unexpected character '&'"),
        (r"${'\q'}", "unknown escape"),
        ("${" + "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1) + "}", "nested more than"),
        ("${" + "!" * (MAX_DEPTH + 1) + "a}", "nested more than"),
        ("${" + " + ".join(["1"] * (MAX_DEPTH + 1)) + "}", "nested more than"),
        ("${'" + "x" * MAX_SOURCE_LENGTH + "'}", "longer than"),
    ],
)
def test_rejected_at_compile_time(text: str, problem: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    assert problem in str(caught.value)
    if len(text) < 100:
        assert text in str(caught.value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("${missing > 1}", "unknown variable 'missing'"),
        ("${nothing < 1}", "cannot compare null < int"),
        ("${1 >= nothing}", "cannot compare int >= null"),
        ("${name > 1}", "cannot compare str > int"),
        ("${b / 0}", "division by zero"),
        ("${b div zero}", "division by zero"),
        ("${b % 0}", "division by zero"),
        ("${name + 1}", "'+' needs two numbers or two strings"),
        ("${approved + 1}", "'+' needs two numbers or two strings"),
        ("${name * 3}", "'*' needs two numbers"),
        ("${-name}", "cannot negate a str"),
        ("${!b}", "expected a boolean, got int"),
        ("${b && approved}", "expected a boolean, got int"),
        ("${name ? 1 : 2}", "expected a boolean, got str"),
        ("${items['x']}", "a list index must be an integer"),
        ("${name.length}", "cannot read ['length'] of a str"),
        ("${order[items]}", "cannot use a list as a key"),
    ],
)
def test_fails_at_evaluation(text: str, problem: str) -> None:
    expression = compile_expression(text)
    with pytest.raises(ExpressionError) as caught:
        expression.evaluate(VARIABLES)
    assert problem in str(caught.value)
    assert text in str(caught.value)


def test_data_keys_are_plain_lookups_never_attributes() -> None:
    class Sneaky(dict[str, Any]):
        secret = "attribute"

    expression = compile_expression("${obj.secret}")
    assert expression.evaluate({"obj": Sneaky()}) is None
    assert compile_expression("${obj[key]}").evaluate({"obj": {"_id": 7}, "key": "_id"}) == 7
    with pytest.raises(ExpressionError, match="cannot read"):
        compile_expression("${obj.real}").evaluate({"obj": 3 + 4j})


def test_identifier() -> None:
    assert compile_expression("${chargeCard}").identifier == "chargeCard"
    assert compile_expression("#{chargeCard}").identifier == "chargeCard"
    assert compile_expression("${ chargeCard }").identifier == "chargeCard"
    assert compile_expression("${bean.charge}").identifier is None
    assert compile_expression("${(chargeCard)}").identifier == "chargeCard"
    assert compile_expression("${true}").identifier is None


def test_equality_and_hash_use_the_source_only() -> None:
    first, second = compile_expression("${a > 1}"), compile_expression("${a > 1}")
    assert first == second
    assert hash(first) == hash(second)
    assert first != compile_expression("${a>1}")
    assert {first, second} == {first}
    assert "a > 1" in repr(first)


def test_expression_is_immutable() -> None:
    expression = compile_expression("${a}")
    with pytest.raises(AttributeError):
        expression.source = "${b}"  # type: ignore[misc]  # the assignment must fail


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${a}", True),
        ("#{a > 1}", True),
        ("${'}'}", True),
        ("${a +}", True),
        ("${a} ", False),
        (" ${a}", False),
        ("a", False),
        ("${a", False),
        ("${a}${b}", False),
        ("", False),
    ],
)
def test_is_expression(text: str, expected: bool) -> None:
    assert is_expression(text) is expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_random_text_only_raises_expression_error(text: str) -> None:
    for candidate in (text, "${" + text + "}"):
        with contextlib.suppress(ExpressionError):
            compile_expression(candidate)


_PIECES = st.sampled_from(
    [
        "a",
        "b",
        "items",
        "order",
        "nothing",
        "name",
        ".",
        "[",
        "]",
        "(",
        ")",
        "0",
        "1",
        "2.5",
        "'x'",
        "true",
        "null",
        "+",
        "-",
        "*",
        "/",
        "%",
        "==",
        "!=",
        "<",
        ">=",
        "&&",
        "||",
        "!",
        "not",
        "empty",
        "?",
        ":",
        "div",
        "mod",
        " ",
        "total",
        "lines",
    ]
)


@settings(max_examples=250, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=25))
def test_random_grammar_soup_only_raises_expression_error(pieces: list[str]) -> None:
    text = "${" + " ".join(pieces) + "}"
    try:
        expression = compile_expression(text)
    except ExpressionError:
        return
    with contextlib.suppress(ExpressionError):
        expression.evaluate(VARIABLES)
