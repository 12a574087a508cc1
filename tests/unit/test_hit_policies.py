from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from engine.dmn import (
    Aggregation,
    DecisionTable,
    DmnEvaluationError,
    Entry,
    HitPolicy,
    OutputClause,
    Rule,
)
from engine.dmn.hit_policy import MatchedRule, apply_hit_policy

STATUS = OutputClause("O_status", None, "status", "string", ('"gold"', '"silver"', '"bronze"'))
RATE = OutputClause("O_rate", None, "rate", "integer", ("3", "2", "1"))
AMOUNT = OutputClause("O_amount", None, "amount", "integer")


def table(
    policy: HitPolicy,
    outputs: tuple[OutputClause, ...] = (STATUS, AMOUNT),
    aggregation: Aggregation | None = None,
) -> DecisionTable:
    return DecisionTable("T", policy, aggregation, (), outputs, ())


def match(rule_id: str, **outputs: Any) -> MatchedRule:
    entries = tuple(Entry(repr(v)) for v in outputs.values())
    return MatchedRule(Rule(rule_id, None, (), entries), outputs)


GOLD = match("r1", status="gold", amount=10)
BRONZE = match("r2", status="bronze", amount=30)
SILVER = match("r3", status="silver", amount=20)
GOLD_AGAIN = match("r4", status="gold", amount=10)

# (policy, aggregation, outputs, matched, expected entries, expected rule ids)
CASES: list[
    tuple[
        str,
        HitPolicy,
        Aggregation | None,
        tuple[OutputClause, ...],
        list[MatchedRule],
        list[dict[str, Any]],
        tuple[str, ...],
    ]
] = [
    (
        "unique one",
        HitPolicy.UNIQUE,
        None,
        (STATUS, AMOUNT),
        [SILVER],
        [{"status": "silver", "amount": 20}],
        ("r3",),
    ),
    ("unique none", HitPolicy.UNIQUE, None, (STATUS, AMOUNT), [], [], ()),
    (
        "first",
        HitPolicy.FIRST,
        None,
        (STATUS, AMOUNT),
        [BRONZE, GOLD],
        [{"status": "bronze", "amount": 30}],
        ("r2",),
    ),
    (
        "any equal",
        HitPolicy.ANY,
        None,
        (STATUS, AMOUNT),
        [GOLD, GOLD_AGAIN],
        [{"status": "gold", "amount": 10}],
        ("r1",),
    ),
    (
        "priority",
        HitPolicy.PRIORITY,
        None,
        (STATUS, AMOUNT),
        [BRONZE, SILVER, GOLD],
        [{"status": "gold", "amount": 10}],
        ("r1",),
    ),
    (
        "priority tie keeps rule order",
        HitPolicy.PRIORITY,
        None,
        (STATUS, AMOUNT),
        [GOLD_AGAIN, BRONZE, GOLD],
        [{"status": "gold", "amount": 10}],
        ("r4",),
    ),
    (
        "priority second output breaks ties",
        HitPolicy.PRIORITY,
        None,
        (STATUS, RATE),
        [
            match("a", status="gold", rate=1),
            match("b", status="gold", rate=Decimal(3)),
            match("c", status="silver", rate=3),
        ],
        [{"status": "gold", "rate": Decimal(3)}],
        ("b",),
    ),
    (
        "output order",
        HitPolicy.OUTPUT_ORDER,
        None,
        (STATUS, AMOUNT),
        [BRONZE, SILVER, GOLD],
        [
            {"status": "gold", "amount": 10},
            {"status": "silver", "amount": 20},
            {"status": "bronze", "amount": 30},
        ],
        ("r1", "r3", "r2"),
    ),
    (
        "output order by numbers",
        HitPolicy.OUTPUT_ORDER,
        None,
        (RATE,),
        [match("a", rate=1), match("b", rate=3.0), match("c", rate=2)],
        [{"rate": 3.0}, {"rate": 2}, {"rate": 1}],
        ("b", "c", "a"),
    ),
    (
        "rule order",
        HitPolicy.RULE_ORDER,
        None,
        (STATUS, AMOUNT),
        [BRONZE, GOLD],
        [{"status": "bronze", "amount": 30}, {"status": "gold", "amount": 10}],
        ("r2", "r1"),
    ),
    (
        "collect",
        HitPolicy.COLLECT,
        None,
        (STATUS, AMOUNT),
        [SILVER, GOLD],
        [{"status": "silver", "amount": 20}, {"status": "gold", "amount": 10}],
        ("r3", "r1"),
    ),
    ("collect none", HitPolicy.COLLECT, None, (STATUS, AMOUNT), [], [], ()),
    (
        "collect sum",
        HitPolicy.COLLECT,
        Aggregation.SUM,
        (AMOUNT,),
        [match("a", amount=10), match("b", amount=Decimal("2.5")), match("c", amount=None)],
        [{"amount": Decimal("12.5")}],
        ("a", "b", "c"),
    ),
    ("collect sum over none is empty", HitPolicy.COLLECT, Aggregation.SUM, (AMOUNT,), [], [], ()),
    (
        "collect sum over empty outputs is empty",
        HitPolicy.COLLECT,
        Aggregation.SUM,
        (AMOUNT,),
        [match("a", amount=None)],
        [],
        ("a",),
    ),
    (
        "collect min",
        HitPolicy.COLLECT,
        Aggregation.MIN,
        (AMOUNT,),
        [match("a", amount=7), match("b", amount=3), match("c", amount=5)],
        [{"amount": 3}],
        ("a", "b", "c"),
    ),
    (
        "collect max",
        HitPolicy.COLLECT,
        Aggregation.MAX,
        (AMOUNT,),
        [match("a", amount=7), match("b", amount=9.5)],
        [{"amount": 9.5}],
        ("a", "b"),
    ),
    ("collect max over none is empty", HitPolicy.COLLECT, Aggregation.MAX, (AMOUNT,), [], [], ()),
    (
        "collect count",
        HitPolicy.COLLECT,
        Aggregation.COUNT,
        (STATUS,),
        [match("a", status="gold"), match("b", status="gold"), match("c", status=None)],
        [{"status": 2}],
        ("a", "b", "c"),
    ),
    (
        "collect count over none is zero",
        HitPolicy.COLLECT,
        Aggregation.COUNT,
        (STATUS,),
        [],
        [{"status": 0}],
        (),
    ),
]


@pytest.mark.parametrize(
    ("policy", "aggregation", "outputs", "matched", "entries", "rule_ids"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_hit_policy(
    policy: HitPolicy,
    aggregation: Aggregation | None,
    outputs: tuple[OutputClause, ...],
    matched: list[MatchedRule],
    entries: list[dict[str, Any]],
    rule_ids: tuple[str, ...],
) -> None:
    result = apply_hit_policy("dec", table(policy, outputs, aggregation), matched)
    assert result.entries == entries
    assert [type(v) for e in result.entries for v in e.values()] == [
        type(v) for e in entries for v in e.values()
    ]
    assert result.rule_ids == rule_ids


def test_unique_violation_names_the_decision_and_the_matched_rules() -> None:
    with pytest.raises(DmnEvaluationError) as caught:
        apply_hit_policy("discount", table(HitPolicy.UNIQUE), [GOLD, BRONZE, SILVER])
    assert caught.value.message == (
        "decision 'discount': hit policy UNIQUE allows one matching rule, but 3 matched: r1, r2, r3"
    )
    assert caught.value.rule_ids == ("r1", "r2", "r3")
    assert caught.value.to_dict()["detail"] == {
        "decision_id": "discount",
        "rule_ids": ["r1", "r2", "r3"],
    }


def test_any_with_different_outputs_names_the_rules() -> None:
    with pytest.raises(DmnEvaluationError) as caught:
        apply_hit_policy("dec", table(HitPolicy.ANY), [GOLD, GOLD_AGAIN, SILVER, BRONZE])
    assert caught.value.rule_ids == ("r1", "r3", "r2")
    assert "rules r1, r3, r2 differ" in caught.value.message


@pytest.mark.parametrize(
    ("policy", "value"),
    [(HitPolicy.PRIORITY, "platinum"), (HitPolicy.OUTPUT_ORDER, None)],
)
def test_priority_refuses_a_value_outside_the_output_values(
    policy: HitPolicy, value: str | None
) -> None:
    with pytest.raises(DmnEvaluationError, match="not one of its output values") as caught:
        apply_hit_policy("dec", table(policy), [GOLD, match("odd", status=value, amount=1)])
    assert caught.value.rule_ids == ("odd",)


def test_a_string_never_equals_a_numeric_output_value() -> None:
    with pytest.raises(DmnEvaluationError, match="not one of its output values"):
        apply_hit_policy("dec", table(HitPolicy.PRIORITY, (RATE,)), [match("s", rate="3")])


def test_priority_without_output_values_is_an_error() -> None:
    with pytest.raises(DmnEvaluationError, match="needs output values"):
        apply_hit_policy("dec", table(HitPolicy.PRIORITY, (AMOUNT,)), [match("a", amount=1)])


def test_collect_sum_of_non_numbers_names_the_rules() -> None:
    matched = [match("a", amount=1), match("b", amount="two"), match("c", amount=True)]
    with pytest.raises(DmnEvaluationError, match="rules b, c give other values") as caught:
        apply_hit_policy("dec", table(HitPolicy.COLLECT, (AMOUNT,), Aggregation.SUM), matched)
    assert caught.value.rule_ids == ("b", "c")


def test_collect_sum_of_float_and_decimal_is_an_evaluation_error() -> None:
    matched = [match("a", amount=1.5), match("b", amount=Decimal(2))]
    with pytest.raises(DmnEvaluationError, match="cannot combine"):
        apply_hit_policy("dec", table(HitPolicy.COLLECT, (AMOUNT,), Aggregation.SUM), matched)


@pytest.mark.parametrize("policy", list(HitPolicy))
def test_defaults_answer_when_no_rule_matched(policy: HitPolicy) -> None:
    result = apply_hit_policy("dec", table(policy), [], defaults={"status": "bronze"})
    assert result.entries == [{"status": "bronze", "amount": None}]
    assert result.rule_ids == ()


def test_defaults_are_not_used_when_a_rule_matched() -> None:
    result = apply_hit_policy("dec", table(HitPolicy.FIRST), [SILVER], defaults={"status": "x"})
    assert result.entries == [{"status": "silver", "amount": 20}]


def test_defaults_of_an_aggregating_table_replace_the_empty_answer() -> None:
    sums = table(HitPolicy.COLLECT, (AMOUNT,), Aggregation.SUM)
    assert apply_hit_policy("dec", sums, [], defaults={"amount": 0}).entries == [{"amount": 0}]


def test_output_values_literals() -> None:
    output = OutputClause("O", None, "o", None, ('"a \\"b\\""', "true", "null", "-1.5"))
    ranked = table(HitPolicy.OUTPUT_ORDER, (output,))
    matched = [
        match("n", o=None),
        match("q", o='a "b"'),
        match("d", o=Decimal("-1.5")),
        match("t", o=True),
    ]
    result = apply_hit_policy("dec", ranked, matched)
    assert result.rule_ids == ("q", "t", "n", "d")
    bad = table(HitPolicy.PRIORITY, (OutputClause("O", None, "o", None, ("date(x)",)),))
    with pytest.raises(DmnEvaluationError, match="not a string, number, boolean or null"):
        apply_hit_policy("dec", bad, [match("a", o=1)])
