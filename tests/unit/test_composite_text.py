"""Composite texts as JUEL reads them: literal text and `${...}` parts, each part compiled by
the safe evaluator and its value turned into text as JUEL coerces to String."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ExpressionError, ModelError
from engine.language.composite import Composite, as_text, compile_text, evaluate_text
from engine.language.expressions import Expression
from engine.language.mappings import ExpressionValue, TextValue, evaluate, from_python
from engine.model import UserTask

VALUES: dict[str, Any] = {
    "loopCounter": 3,
    "var": "Tab",
    "nothing": None,
    "ratio": 2.5,
    "whole": 3.0,
    "yes": True,
    "items": [1, "a"],
    "when": datetime(2026, 12, 24, 10, 0, tzinfo=UTC),
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Review ${loopCounter}", "Review 3"),
        ("kermit_${loopCounter}", "kermit_3"),
        ("${var}oque", "Taboque"),
        ("#{var}oque", "Taboque"),
        ("[${nothing}]", "[]"),
        ("${ratio} ${whole} ${yes}", "2.5 3.0 true"),
        ("${loopCounter + 1}x", "4x"),
        ("${items}!", '[1,"a"]!'),
        ("at ${when}", "at 2026-12-24T10:00:00+00:00"),
        ("${'}'} and ${var}", "} and Tab"),
        # A backslash before ${ or #{ makes it text; other backslashes stay.
        ("\\${var} is ${var}", "${var} is Tab"),
        ("\\#{var}", "#{var}"),
        ("a\\b ${var}", "a\\b Tab"),
        ("\\\\${var}", "\\${var}"),
        ("$ {var} ${var}", "$ {var} Tab"),
    ],
)
def test_composites_evaluate_to_text(text: str, expected: str) -> None:
    assert isinstance(compile_text(text), Composite)
    assert evaluate_text(text, VALUES) == expected


def test_one_expression_keeps_its_value_and_plain_text_stays_as_it_is() -> None:
    assert isinstance(compile_text("${loopCounter}"), Expression)
    assert evaluate_text("${loopCounter}", VALUES) == 3
    assert evaluate_text("${nothing}", VALUES) is None
    for text in ("plain", "costs $5", "{braces}", "a\\b", "#hash {x}"):
        assert compile_text(text) == text
        assert evaluate_text(text, VALUES) == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Review ${loopCounter", "missing closing '}'"),
        ("Review ${loopCounter +}", "unexpected end of expression: ${loopCounter +}"),
        ("a ${}", "empty expression"),
        ("x-${exec('ls')}", "calls are not allowed to exec()"),
        ("${a}#{b}", "cannot mix ${...} and #{...}"),
        ("${a}" * 1500, "longer than"),
    ],
)
def test_a_bad_part_is_refused_when_compiled(text: str, problem: str) -> None:
    with pytest.raises(ExpressionError) as refused:
        compile_text(text)
    assert problem in refused.value.message


def test_a_failing_part_names_its_expression() -> None:
    with pytest.raises(ExpressionError) as failed:
        evaluate_text("Review ${unknown}", VALUES)
    assert "unknown variable 'unknown'" in failed.value.message
    assert "${unknown}" in failed.value.message


def test_as_text_is_javas_string_coercion() -> None:
    assert [as_text(v) for v in (None, True, False, 7, -2, 0.5, 1e3, "s")] == [
        "",
        "true",
        "false",
        "7",
        "-2",
        "0.5",
        "1000.0",
        "s",
    ]


def test_mapping_values_take_composites() -> None:
    value = from_python("${var}oque")
    assert isinstance(value, ExpressionValue)
    assert evaluate(value, VALUES) == "Taboque"
    assert from_python("costs $5") == TextValue("costs $5")
    assert evaluate(from_python({"k": "${loopCounter}-${var}"}), VALUES) == {"k": "3-Tab"}


def test_the_builder_takes_composites_as_the_parser_does() -> None:
    model = (
        ProcessBuilder("composite")
        .start_event("start")
        .user_task("review", "Review ${n}", assignee="kermit_${n}", priority="${level}0")
        .service_task("ship", topic="ship-${region}", priority="1${level}")
        .end_event("end")
        .chain("start", "review", "ship", "end")
        .build()
    )
    [parsed] = parse_bpmn(write_bpmn([model]), "composite.bpmn")
    review = parsed.node("review")
    assert isinstance(review, UserTask)
    assert (review.name, review.assignee, review.priority) == (
        "Review ${n}",
        "kermit_${n}",
        "${level}0",
    )
    with pytest.raises(ModelError) as refused:
        ProcessBuilder("bad").user_task("review", assignee="kermit_${n +}")
    assert "assignee: unexpected end of expression: ${n +}" in str(refused.value)
    with pytest.raises(ModelError) as refused:
        ProcessBuilder("bad").service_task("ship", topic="ship-${region")
    assert "topic: missing closing '}'" in str(refused.value)
