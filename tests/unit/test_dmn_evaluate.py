"""Whole decisions evaluated from DMN text: hit policies, FEEL in entries, types, JUEL, DRDs.

Each document is written here as Camunda Modeler saves DMN 1.3, parsed, compiled as deployment
does, and evaluated; the results are pinned literally.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from engine.dmn import DmnEvaluationError
from engine.errors import ModelError
from tests.unit.dmn_documents import In, Out, compiled, definitions, evaluate, literal, table

# -- hit policies ---------------------------------------------------------------------------------

LEVELS = '"gold","silver","bronze"'
# score < 50: R1; 50..89: R2; 90..100: R2 and R3; over 100: R3 and R4 (equal outputs).
SCORE_RULES: list[tuple[list[str], list[str]]] = [
    (["< 50"], ['"bronze"', "10"]),
    (["[50..100]"], ['"silver"', "20"]),
    ([">= 90"], ['"gold"', "30"]),
    (["> 100"], ['"gold"', "30"]),
]


def score_table(hit_policy: str | None) -> str:
    return definitions(
        table(
            "d",
            [In("score", "integer")],
            [Out("level", "string", LEVELS), Out("points", "integer")],
            SCORE_RULES,
            hit_policy,
        )
    )


BRONZE = {"level": "bronze", "points": 10}
SILVER = {"level": "silver", "points": 20}
GOLD = {"level": "gold", "points": 30}

HIT_POLICY_CASES: list[tuple[str | None, int | None, list[dict[str, Any]]]] = [
    (None, 10, [BRONZE]),
    ("UNIQUE", 10, [BRONZE]),
    ("UNIQUE", 60, [SILVER]),
    ("UNIQUE", None, []),
    ("FIRST", 95, [SILVER]),
    ("FIRST", 150, [GOLD]),
    ("FIRST", None, []),
    ("PRIORITY", 95, [GOLD]),
    ("PRIORITY", 60, [SILVER]),
    ("PRIORITY", 150, [GOLD]),
    ("ANY", 150, [GOLD]),
    ("ANY", 60, [SILVER]),
    ("COLLECT", 95, [SILVER, GOLD]),
    ("COLLECT", 150, [GOLD, GOLD]),
    ("COLLECT", 10, [BRONZE]),
    ("COLLECT", None, []),
    ("RULE ORDER", 95, [SILVER, GOLD]),
    ("RULE ORDER", 150, [GOLD, GOLD]),
    ("OUTPUT ORDER", 95, [GOLD, SILVER]),
    ("OUTPUT ORDER", 10, [BRONZE]),
    ("OUTPUT ORDER", None, []),
]


@pytest.mark.parametrize(("hit_policy", "score", "expected"), HIT_POLICY_CASES)
def test_hit_policy_through_a_whole_decision(
    hit_policy: str | None, score: int | None, expected: list[dict[str, Any]]
) -> None:
    assert evaluate(score_table(hit_policy), {"score": score}) == expected


def test_unique_with_two_matches_names_both_rules() -> None:
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(score_table("UNIQUE"), {"score": 95})
    assert "'d'" in raised.value.message
    assert "R2, R3" in raised.value.message
    assert raised.value.rule_ids == ("R2", "R3")


def test_any_with_different_outputs_names_the_rules() -> None:
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(score_table("ANY"), {"score": 95})
    assert "R2, R3" in raised.value.message
    assert raised.value.rule_ids == ("R2", "R3")


def test_first_stops_at_the_first_match_and_records_only_it() -> None:
    outcome = compiled(score_table("FIRST")).evaluate("d", {"score": 150})
    [evaluation] = outcome.evaluations
    assert evaluation.matched_rules == ("R3",)
    assert [(o.name, o.rule_id, o.rule_order, o.value) for o in evaluation.outputs] == [
        ("level", "R3", 3, "gold"),
        ("points", "R3", 3, 30),
    ]


def points_table(aggregation: str) -> str:
    return definitions(
        table(
            "d",
            [In("score", "integer")],
            [Out("points", "integer")],
            [(rule[0], rule[1][1:]) for rule in SCORE_RULES],
            "COLLECT",
            aggregation,
        )
    )


AGGREGATION_CASES: list[tuple[str, int | None, list[dict[str, Any]]]] = [
    ("SUM", 95, [{"points": 50}]),
    ("SUM", 150, [{"points": 60}]),
    ("SUM", 10, [{"points": 10}]),
    ("SUM", None, []),
    ("MIN", 95, [{"points": 20}]),
    ("MIN", None, []),
    ("MAX", 95, [{"points": 30}]),
    ("MAX", None, []),
    ("COUNT", 95, [{"points": 2}]),
    ("COUNT", 10, [{"points": 1}]),
    ("COUNT", None, [{"points": 0}]),
]


@pytest.mark.parametrize(("aggregation", "score", "expected"), AGGREGATION_CASES)
def test_collect_aggregation(
    aggregation: str, score: int | None, expected: list[dict[str, Any]]
) -> None:
    assert evaluate(points_table(aggregation), {"score": score}) == expected


def test_collect_sum_records_the_aggregated_value_and_every_matched_rule() -> None:
    [evaluation] = compiled(points_table("SUM")).evaluate("d", {"score": 95}).evaluations
    assert evaluation.collect_value == 50
    assert evaluation.matched_rules == ("R2", "R3")
    assert [(o.rule_id, o.value) for o in evaluation.outputs] == [("R2", 20), ("R3", 30)]


@pytest.mark.parametrize("hit_policy", ["UNIQUE", "FIRST", "COLLECT", "RULE ORDER"])
def test_default_output_entries_answer_when_nothing_matches(hit_policy: str) -> None:
    document = definitions(
        table(
            "d",
            [In("score", "integer")],
            [Out("level", "string", default='"none"'), Out("points", "integer")],
            [(["> 100"], ['"gold"', "30"])],
            hit_policy,
        )
    )
    assert evaluate(document, {"score": 5}) == [{"level": "none", "points": None}]
    assert evaluate(document, {"score": 500}) == [{"level": "gold", "points": 30}]


def test_default_output_entry_is_an_expression_over_the_variables() -> None:
    document = definitions(
        table(
            "d",
            [In("score", "integer")],
            [Out("points", "integer", default="score * 2")],
            [(["> 100"], ["1"])],
        )
    )
    assert evaluate(document, {"score": 21}) == [{"points": 42}]


@pytest.mark.parametrize(
    ("default", "expected"), [(None, []), ('"nothing"', [{"level": "nothing"}])]
)
def test_a_table_without_rules(default: str | None, expected: list[dict[str, Any]]) -> None:
    document = definitions(
        table("d", [In("score", "integer")], [Out("level", "string", default=default)], [])
    )
    assert evaluate(document, {"score": 1}) == expected


# -- FEEL in input entries --------------------------------------------------------------------


def one_entry(entry: str, type_ref: str | None = None, attributes: str = "") -> str:
    return definitions(
        table(
            "d",
            [In("v", type_ref, "Value", attributes)],
            [Out("hit", "boolean")],
            [([entry], ["true"])],
            "FIRST",
        )
    )


def matches(entry: str, value: Any, type_ref: str | None = None) -> bool:
    return evaluate(one_entry(entry, type_ref), {"v": value}) == [{"hit": True}]


D2025 = dt.date(2025, 6, 1)
D2026 = dt.date(2026, 1, 1)
ENTRY_CASES: list[tuple[str, Any, bool]] = [
    ('"gold"', "gold", True),
    ('"gold"', "silver", False),
    ('"gold"', None, False),
    ("< 1000", 999, True),
    ("< 1000", 1000, False),
    ("< 1000", 999.5, True),
    ("<= 1000", 1000, True),
    ("> 1000", 1000, False),
    (">= 1000", 1000, True),
    ("1000", 1000, True),
    ("[1..10]", 1, True),
    ("[1..10]", 10, True),
    ("[1..10]", 11, False),
    ("]1..10[", 1, False),
    ("]1..10[", 10, False),
    ("]1..10[", 5, True),
    ("(1..10)", 10, False),
    ("[1..10)", 1, True),
    ("[1..10[", 9.99, True),
    ("< 1000", None, False),
    ("[1..10]", None, False),
    ('not("a","b")', "c", True),
    ('not("a","b")', "a", False),
    ('not("a","b")', "b", False),
    ('not("a","b")', None, True),
    ("not(< 10)", 12, True),
    ("not(< 10)", 5, False),
    ("-", "anything", True),
    ("-", None, True),
    ("", 7, True),
    ('"a","b"', "b", True),
    ('"a","b"', "c", False),
    ("1, 5, [8..9]", 8.5, True),
    ("1, 5, [8..9]", 6, False),
    ("null", None, True),
    ("null", 1, False),
    ("not(null)", 1, True),
    ("true", True, True),
    ("true", False, False),
    ("false", False, True),
    ('< date("2026-01-01")', D2025, True),
    ('< date("2026-01-01")', D2026, False),
    ('[date("2025-01-01")..date("2025-12-31")]', D2025, True),
    ('date("2026-01-01")', D2026, True),
    ('>= date and time("2026-01-01T08:00:00")', dt.datetime(2026, 1, 1, 8, 0), True),
    ('>= date and time("2026-01-01T08:00:00")', dt.datetime(2026, 1, 1, 7, 59), False),
    ('> duration("P2D")', dt.timedelta(days=3), True),
    ('> duration("P2D")', dt.timedelta(hours=47), False),
    ('[duration("PT1H")..duration("PT2H")]', dt.timedelta(minutes=90), True),
    ("cellInput > 5", 6, True),
    ("cellInput > 5", 5, False),
    ("? > 5", 6, True),
    ("? > 5", 4, False),
    ('starts with(?, "go")', "gold", True),
    ('starts with(?, "go")', "silver", False),
    ("{a: ?}.a = 5", 5, True),
    ("count([1, 2, 3][item > ?]) = 1", 2, True),
    ("count([1, 2, 3][item > ?]) = 1", 1, False),
    ("limit", 3, True),
    ("< limit * 2", 5, True),
    ("< limit * 2", 6, False),
]


@pytest.mark.parametrize(("entry", "value", "expected"), ENTRY_CASES)
def test_feel_input_entry(entry: str, value: Any, expected: bool) -> None:
    document = one_entry(entry)
    assert evaluate(document, {"v": value, "limit": 3}) == ([{"hit": True}] if expected else [])


def test_camunda_input_variable_names_the_input_in_its_entries() -> None:
    document = one_entry("amount > 5 and amount < 10", attributes='camunda:inputVariable="amount"')
    assert evaluate(document, {"v": 7}) == [{"hit": True}]
    assert evaluate(document, {"v": 10}) == []
    # cellInput is the default name only: with an inputVariable it is an unknown variable.
    with pytest.raises(DmnEvaluationError, match="cellInput"):
        evaluate(one_entry("cellInput > 5", attributes='camunda:inputVariable="amount"'), {"v": 1})


# -- FEEL in input expressions and output entries ---------------------------------------------

EXPRESSION_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("a * 2 + b", {"a": 20, "b": 2}, 42),
    ("a / 4", {"a": 10}, 2.5),
    ("0.1 + 0.2", {}, 0.3),
    ("a - b", {"a": 1, "b": 3}, -2),
    ("2 ** 10", {}, 1024),
    ("-a", {"a": 5}, -5),
    ("a / 0", {"a": 5}, None),
    ('first + " " + last', {"first": "Ada", "last": "Lovelace"}, "Ada Lovelace"),
    ('if a > 10 then "big" else "small"', {"a": 11}, "big"),
    ('if a > 10 then "big" else "small"', {"a": 10}, "small"),
    ("a > 1 and b", {"a": 2, "b": True}, True),
    ("a > 1 and b", {"a": 0, "b": True}, False),
    ("a > 1 or b", {"a": 0, "b": False}, False),
    ("a > 1 or b", {"a": 0, "b": True}, True),
    ("customer.address.city", {"customer": {"address": {"city": "Oslo"}}}, "Oslo"),
    ("customer.missing", {"customer": {"address": {}}}, None),
    ("orders.total", {"orders": [{"total": 1}, {"total": 2}]}, [1, 2]),
    ('contains(name, "ell")', {"name": "Hello"}, True),
    ('contains(name, "xyz")', {"name": "Hello"}, False),
    ('starts with(name, "He")', {"name": "Hello"}, True),
    ('ends with(name, "lo")', {"name": "Hello"}, True),
    ("string length(name)", {"name": "Hello"}, 5),
    ("upper case(name)", {"name": "Hello"}, "HELLO"),
    ("lower case(name)", {"name": "Hello"}, "hello"),
    ("substring(name, 2)", {"name": "Hello"}, "ello"),
    ("substring(name, 2, 3)", {"name": "Hello"}, "ell"),
    ("substring(name, -3)", {"name": "Hello"}, "llo"),
    ('number("12.5") + 1', {}, 13.5),
    ('string(a) + "!"', {"a": 12}, "12!"),
    ("string(true)", {}, "true"),
    ("abs(a)", {"a": -7}, 7),
    ("floor(a)", {"a": 1.7}, 1),
    ("floor(a)", {"a": -1.2}, -2),
    ("ceiling(a)", {"a": 1.2}, 2),
    ("min(3, 1, 2)", {}, 1),
    ("min(xs)", {"xs": [4, 2, 9]}, 2),
    ("max(xs)", {"xs": [4, 2, 9]}, 9),
    ("sum(xs)", {"xs": [4, 2, 9]}, 15),
    ("sum(1, 2.5)", {}, 3.5),
    ("count(xs)", {"xs": [4, 2, 9]}, 3),
    ("count([])", {}, 0),
    ("xs[2]", {"xs": [4, 2, 9]}, 2),
    ("xs[item > 3]", {"xs": [4, 2, 9]}, [4, 9]),
    ("{a: 1, b: a + 1}.b", {}, 2),
    ("a in [1..5]", {"a": 3}, True),
    ("a between 1 and 5", {"a": 6}, False),
    ('date("2026-01-31") + duration("P1M")', {}, dt.date(2026, 2, 28)),
    ('date("2026-03-01") - date("2026-02-01")', {}, dt.timedelta(days=28)),
    ('date and time("2026-01-01T10:00:00").hour', {}, 10),
    ("null", {}, None),
]


@pytest.mark.parametrize(("expression", "variables", "expected"), EXPRESSION_CASES)
def test_feel_output_entry(expression: str, variables: dict[str, Any], expected: Any) -> None:
    document = definitions(table("d", [], [Out("out")], [([], [expression])]))
    [entry] = evaluate(document, variables)
    assert entry == {"out": expected}
    assert type(entry["out"]) is type(expected)


@pytest.mark.parametrize(("expression", "variables", "expected"), EXPRESSION_CASES)
def test_feel_input_expression(expression: str, variables: dict[str, Any], expected: Any) -> None:
    document = definitions(table("d", [In(expression)], [Out("out")], [(["-"], ['"hit"'])]))
    [evaluation] = compiled(document).evaluate("d", variables).evaluations
    assert [i.value for i in evaluation.inputs] == [expected]
    assert evaluation.result == [{"out": "hit"}]


# -- typeRef ----------------------------------------------------------------------------------

CONVERSIONS: list[tuple[str, Any, Any]] = [
    ("string", "abc", "abc"),
    ("string", 12, "12"),
    ("string", True, "true"),
    ("boolean", True, True),
    ("boolean", "false", False),
    ("boolean", " TRUE ", True),
    ("integer", 12, 12),
    ("integer", "12", 12),
    ("integer", 12.0, 12),
    ("integer", -(2**31), -(2**31)),
    ("long", 2**40, 2**40),
    ("long", "1099511627776", 2**40),
    ("double", 2, 2.0),
    ("double", "1.25", 1.25),
    ("double", 1.5, 1.5),
    ("date", "2026-01-02T03:04:05", dt.datetime(2026, 1, 2, 3, 4, 5)),
    ("date", "2026-01-02", dt.datetime(2026, 1, 2)),
    ("date", dt.date(2026, 1, 2), dt.datetime(2026, 1, 2)),
    ("date", dt.datetime(2026, 1, 2, 3, 4), dt.datetime(2026, 1, 2, 3, 4)),
    ("number", "12", "12"),
    ("integer", None, None),
]


@pytest.mark.parametrize(("type_ref", "value", "expected"), CONVERSIONS)
def test_type_ref_converts_an_input(type_ref: str, value: Any, expected: Any) -> None:
    [evaluation] = compiled(one_entry("-", type_ref)).evaluate("d", {"v": value}).evaluations
    [converted] = evaluation.inputs
    assert converted.value == expected
    assert type(converted.value) is type(expected)


@pytest.mark.parametrize(("type_ref", "value", "expected"), CONVERSIONS)
def test_type_ref_converts_an_output(type_ref: str, value: Any, expected: Any) -> None:
    document = definitions(table("d", [], [Out("out", type_ref)], [([], ["v"])]))
    [entry] = evaluate(document, {"v": value})
    assert entry == {"out": expected}
    assert type(entry["out"]) is type(expected)


def test_converted_input_is_what_the_entries_see() -> None:
    assert matches("< 20", "12", "integer")
    assert matches('"12"', 12, "string")
    assert matches("true", "true", "boolean")
    assert matches('< date and time("2026-01-01T00:00:00")', "2025-12-31", "date")


NOT_CONVERTING: list[tuple[str, Any]] = [
    ("integer", "abc"),
    ("integer", 1.5),
    ("integer", True),
    ("integer", 2**31),
    ("long", 2**63),
    ("double", "abc"),
    ("double", True),
    ("boolean", "yes"),
    ("boolean", 1),
    ("date", "not a date"),
    ("date", 5),
    ("string", [1, 2]),
    ("integer", "1_000"),
    ("long", "1_000"),
    ("double", "1_0.5"),
    ("double", "NaN"),
    ("double", "Infinity"),
    ("double", "-1e999"),
]


@pytest.mark.parametrize(("type_ref", "value"), NOT_CONVERTING)
def test_a_value_that_does_not_convert_names_the_input(type_ref: str, value: Any) -> None:
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(one_entry("-", type_ref), {"v": value})
    message = raised.value.message
    assert message.startswith("decision 'd': the input 'Value' has the value ")
    assert f"which is not of typeRef '{type_ref}'" in message


def test_an_output_that_does_not_convert_names_the_output_and_rule() -> None:
    document = definitions(table("d", [], [Out("out", "integer")], [([], ['"many"'])]))
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(document, {})
    assert raised.value.message == (
        "decision 'd': the output 'out' of rule 'R1' has the value 'many', "
        "which is not of typeRef 'integer'"
    )


def test_a_date_typed_input_is_a_date_and_time_so_a_date_entry_fails_loudly() -> None:
    # typeRef="date" is Camunda's java.util.Date: a date and time, which FEEL does not compare
    # with a date; the table says so instead of never matching.
    with pytest.raises(DmnEvaluationError) as raised:
        matches('< date("2026-01-01")', dt.date(2025, 1, 1), "date")
    assert "cannot compare date and time with date" in raised.value.message
    assert "rule 'R1'" in raised.value.message
    assert "input 'Value'" in raised.value.message


# -- wrong types and missing variables --------------------------------------------------------

WRONG_TYPES: list[tuple[str, Any, str]] = [
    ("< 10", "abc", "cannot compare string with number"),
    ('"gold"', 5, "cannot compare number with string"),
    ("[1..10]", "5", "cannot compare string with number"),
    ('< date("2026-01-01")', "2025-01-01", "cannot compare string with date"),
    ('> duration("P1D")', 5, "cannot compare number with days and time duration"),
    ("cellInput + 1", "a", "cannot apply + to string and number"),
]


@pytest.mark.parametrize(("entry", "value", "reason"), WRONG_TYPES)
def test_a_wrongly_typed_input_is_an_evaluation_error_not_a_non_match(
    entry: str, value: Any, reason: str
) -> None:
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(one_entry(entry), {"v": value})
    message = raised.value.message
    assert message.startswith(f"decision 'd': the input entry '{entry}' of rule 'R1' for input ")
    assert "'Value'" in message
    assert reason in message
    assert raised.value.rule_ids == ("R1",)


def test_a_missing_variable_names_the_input() -> None:
    document = definitions(
        table("d", [In("amount", "integer", "Amount")], [Out("out")], [(["-"], ['"x"'])])
    )
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(document, {"other": 1})
    assert raised.value.message.startswith("decision 'd': the input 'Amount' failed: ")
    assert "no variable named 'amount'" in raised.value.message


def test_a_missing_variable_in_an_output_entry_names_the_output_and_rule() -> None:
    document = definitions(table("d", [], [Out("out")], [([], ["bonus * 2"])]))
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(document, {})
    assert raised.value.message.startswith("decision 'd': the output 'out' of rule 'R1' failed")
    assert "no variable named 'bonus'" in raised.value.message


def test_an_input_without_label_is_named_by_its_id() -> None:
    document = definitions(table("d", [In("amount")], [Out("out")], [(["-"], ['"x"'])]))
    with pytest.raises(DmnEvaluationError, match="the input 'Input_1' failed"):
        evaluate(document, {})


# -- JUEL -------------------------------------------------------------------------------------

JUEL_RULES: list[tuple[list[str], list[str]]] = [
    (["${cellInput > 100}"], ['${"big"}']),
    (["${cellInput <= 100}"], ["${name + '!'}"]),
]


def juel_table(table_attributes: str = "", definitions_attributes: str = "") -> str:
    return definitions(
        table(
            "d",
            [In("${amount}", "integer")],
            [Out("size", "string")],
            JUEL_RULES,
            "FIRST",
            table_attributes=table_attributes,
        ),
        attributes=definitions_attributes,
    )


@pytest.mark.parametrize(
    "document",
    [
        juel_table(definitions_attributes='expressionLanguage="juel"'),
        juel_table(table_attributes='expressionLanguage="juel"'),
    ],
    ids=["on definitions", "on the table"],
)
def test_juel_entries(document: str) -> None:
    assert evaluate(document, {"amount": 500, "name": "x"}) == [{"size": "big"}]
    assert evaluate(document, {"amount": 5, "name": "small"}) == [{"size": "small!"}]


def test_juel_on_single_entries_in_a_feel_table() -> None:
    document = definitions(
        table(
            "d",
            [In("${amount * 2}", "integer", expression_attributes='expressionLanguage="juel"')],
            [Out("size", "string")],
            [([">= 10"], ['"big"']), (["< 10"], ['"small"'])],
        )
    )
    assert evaluate(document, {"amount": 5}) == [{"size": "big"}]
    assert evaluate(document, {"amount": 4}) == [{"size": "small"}]


def test_juel_text_without_braces_is_read_as_one_expression() -> None:
    # As Camunda's DMN engine does, `text` is evaluated as `${text}`: `amount` is the variable,
    # `"big"` a string literal, `cellInput > 100` a condition on the input.
    document = definitions(
        table(
            "d",
            [In("amount * 2", "integer")],
            [Out("size", "string")],
            [(["cellInput > 100"], ['"big"']), (["cellInput <= 100"], ["name"])],
            "FIRST",
        ),
        attributes='expressionLanguage="juel"',
    )
    assert evaluate(document, {"amount": 60, "name": "n"}) == [{"size": "big"}]
    assert evaluate(document, {"amount": 50, "name": "small"}) == [{"size": "small"}]
    with pytest.raises(DmnEvaluationError, match="name"):
        evaluate(document, {"amount": 5})


def test_juel_text_without_braces_that_does_not_compile_is_refused_at_deployment() -> None:
    document = definitions(
        table("d", [], [Out("size", "string")], [([], ["big deal"])]),
        attributes='expressionLanguage="juel"',
    )
    with pytest.raises(ModelError) as raised:
        compiled(document)
    assert (raised.value.file, raised.value.element_id) == ("test.dmn", "R1_o1")


@pytest.mark.parametrize(
    ("expression", "value"),
    [("${x * 10}", 1e308), ("${x}", float("nan")), ("${x}", {"a": [1.5, float("inf")]})],
)
def test_a_juel_value_that_is_no_finite_number_is_an_evaluation_error(
    expression: str, value: Any
) -> None:
    document = definitions(
        table(
            "d",
            [In(expression, label="X", expression_attributes='expressionLanguage="juel"')],
            [Out("out")],
            [(["-"], ['"x"'])],
        )
    )
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(document, {"x": value})
    assert raised.value.message.startswith("decision 'd': the input 'X' has the value ")
    assert "which is not a finite number" in raised.value.message


def test_juel_input_variable_and_missing_variable() -> None:
    document = definitions(
        table(
            "d",
            [In("${amount}", "integer", "Amount", 'camunda:inputVariable="a"')],
            [Out("size", "string")],
            [(["${a > 3}"], ['${"big"}'])],
        ),
        attributes='expressionLanguage="juel"',
    )
    assert evaluate(document, {"amount": 5}) == [{"size": "big"}]
    assert evaluate(document, {"amount": 2}) == []
    with pytest.raises(DmnEvaluationError, match="the input 'Amount' failed"):
        evaluate(document, {})


# -- decision requirements graphs and literal expressions -------------------------------------


def test_a_required_decision_is_evaluated_first_and_its_outputs_are_variables() -> None:
    document = definitions(
        table(
            "d",
            [In("tier"), In("discount")],
            [Out("message", "string")],
            [(['"gold"', "> 0.1"], ['"welcome back, " + tier']), (["-", "-"], ['"hello"'])],
            "FIRST",
            requires=["customer"],
        ),
        table(
            "customer",
            [In("years", "integer")],
            [Out("tier", "string"), Out("discount", "double")],
            [([">= 5"], ['"gold"', "0.15"]), (["< 5"], ['"silver"', "0.05"])],
        ),
    )
    outcome = compiled(document).evaluate("d", {"years": 7})
    assert outcome.result == [{"message": "welcome back, gold"}]
    assert [e.decision_id for e in outcome.evaluations] == ["customer", "d"]
    assert outcome.evaluations[0].result == [{"tier": "gold", "discount": 0.15}]
    assert evaluate(document, {"years": 1}) == [{"message": "hello"}]


def test_a_collect_required_decision_gives_lists() -> None:
    document = definitions(
        literal(
            "d",
            'string(count(dishes)) + " dishes, " + string(sum(prices))',
            "summary",
            requires=["menu"],
        ),
        table(
            "menu",
            [In("guests", "integer")],
            [Out("dishes", "string"), Out("prices", "integer")],
            [
                ([">= 1"], ['"soup"', "4"]),
                ([">= 5"], ['"stew"', "12"]),
                ([">= 9"], ['"cake"', "6"]),
            ],
            "COLLECT",
        ),
    )
    assert evaluate(document, {"guests": 6}) == [{"summary": "2 dishes, 16"}]
    # A single matching rule of a COLLECT table still gives lists.
    assert evaluate(document, {"guests": 2}) == [{"summary": "1 dishes, 4"}]


def test_a_required_unique_decision_with_no_match_gives_no_variables() -> None:
    document = definitions(
        literal("d", "tier", "out", requires=["customer"]),
        table("customer", [In("years")], [Out("tier")], [([">= 5"], ['"gold"'])]),
    )
    assert evaluate(document, {"years": 9}) == [{"out": "gold"}]
    with pytest.raises(DmnEvaluationError, match="no variable named 'tier'"):
        evaluate(document, {"years": 1})


def test_a_chain_of_requirements_evaluates_each_decision_once() -> None:
    document = definitions(
        literal("d", "b + c", "total", "integer", requires=["b", "c"]),
        literal("b", "a * 2", "b", requires=["a"]),
        literal("c", "a * 3", "c", requires=["a"]),
        literal("a", "x + 1", "a"),
    )
    outcome = compiled(document).evaluate("d", {"x": 1})
    assert outcome.result == [{"total": 10}]
    assert [e.decision_id for e in outcome.evaluations] == ["a", "b", "c", "d"]


LITERAL_CASES: list[tuple[str, str | None, dict[str, Any], Any]] = [
    ('"Hello " + name', "string", {"name": "Ada"}, "Hello Ada"),
    ("amount * 1.19", "double", {"amount": 100}, 119.0),
    ("amount * 2", "integer", {"amount": 21}, 42),
    ("amount > 10", "boolean", {"amount": 21}, True),
    ("[1, 2, 3]", None, {}, [1, 2, 3]),
    ('"2026-01-02"', "date", {}, dt.datetime(2026, 1, 2)),
]


@pytest.mark.parametrize(("text", "type_ref", "variables", "expected"), LITERAL_CASES)
def test_literal_expression_decision(
    text: str, type_ref: str | None, variables: dict[str, Any], expected: Any
) -> None:
    document = definitions(literal("d", text, "result", type_ref))
    assert evaluate(document, variables) == [{"result": expected}]


def test_a_literal_expression_that_does_not_convert_names_it() -> None:
    document = definitions(literal("d", '"abc"', "result", "integer"))
    with pytest.raises(DmnEvaluationError) as raised:
        evaluate(document, {})
    assert raised.value.message == (
        "decision 'd': the literal expression 'Literal_d' has the value 'abc', "
        "which is not of typeRef 'integer'"
    )
