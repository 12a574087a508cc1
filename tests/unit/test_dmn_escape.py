"""Hostile FEEL in DMN documents: refused at deployment (a ModelError naming file, line and
element) or failing its evaluation (a DmnEvaluationError), never anything else and never unbounded.

Time is bounded by the evaluator's design (text length, nesting depth, string length, exponent
size and a step budget per evaluation), so these cases finish quickly or not at all; nothing here
measures time.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from engine.dmn import DmnEvaluationError
from engine.errors import ModelError
from tests.unit.dmn_documents import FILE, In, Out, compiled, definitions, evaluate, table
from tests.unit.test_feel_fuzz import TOKENS, VARIABLES

# Where a text goes: the only rule's input entry, its output entry, or the input expression.
INPUT_ENTRY, OUTPUT_ENTRY, INPUT_EXPRESSION = "input entry", "output entry", "input expression"


def document(where: str, text: str) -> str:
    entry = text if where == INPUT_ENTRY else "-"
    output = text if where == OUTPUT_ENTRY else '"ok"'
    expression = text if where == INPUT_EXPRESSION else "x"
    return definitions(
        table("d", [In(expression, label="X")], [Out("out")], [([entry], [output])], "FIRST")
    )


ELEMENT = {INPUT_ENTRY: "R1_i1", OUTPUT_ENTRY: "R1_o1", INPUT_EXPRESSION: "InputExpression_1"}


def line_of(text: str, element_id: str) -> int:
    return text[: text.index(f'id="{element_id}"')].count("\n") + 1


DEEP = 200
REFUSED_AT_DEPLOYMENT: list[tuple[str, str, str]] = [
    (OUTPUT_ENTRY, '__import__("os")', "unknown function '__import__'"),
    (INPUT_ENTRY, '__import__("os").system("true")', "unknown function '__import__'"),
    (INPUT_EXPRESSION, 'eval("1")', "unknown function 'eval'"),
    (OUTPUT_ENTRY, 'getattr(x, "y")', "unknown function 'getattr'"),
    (OUTPUT_ENTRY, 'open("/etc/passwd")', "unknown function 'open'"),
    (OUTPUT_ENTRY, "x.__class__", "name '__class__' is not allowed"),
    (INPUT_ENTRY, "x.__class__.__mro__", "name '__class__' is not allowed"),
    (INPUT_EXPRESSION, '"a".__class__', "name '__class__' is not allowed"),
    (OUTPUT_ENTRY, "__builtins__", "name '__builtins__' is not allowed"),
    (OUTPUT_ENTRY, "{__globals__: 1}", "name '__globals__' is not allowed"),
    (OUTPUT_ENTRY, "c.a.__dict__", "name '__dict__' is not allowed"),
    (OUTPUT_ENTRY, "function(a) a", "unknown function 'function'"),
    (OUTPUT_ENTRY, "for i in [1, 2] return i", "unexpected"),
    (OUTPUT_ENTRY, "x instance of number", "unexpected"),
    (OUTPUT_ENTRY, "(" * DEEP + "1" + ")" * DEEP, "nested deeper than"),
    (INPUT_ENTRY, "(" * DEEP + "1" + ")" * DEEP, "nested deeper than"),
    (OUTPUT_ENTRY, "[" * DEEP + "1" + "]" * DEEP, "nested deeper than"),
    (INPUT_ENTRY, "not(" * DEEP + "1" + ")" * DEEP, "nested deeper than"),
    (OUTPUT_ENTRY, "{a: " * DEEP + "1" + "}" * DEEP, "nested deeper than"),
    (OUTPUT_ENTRY, "-" * 3000 + "1", "nested deeper than"),
    (OUTPUT_ENTRY, "1" + " + 1" * 2000, "nested deeper than"),
    (INPUT_ENTRY, "x" + " and x" * 1500, "nested deeper than"),
    (OUTPUT_ENTRY, '"' + "a" * 20_000 + '"', "longer than 10000 characters"),
    (INPUT_ENTRY, ", ".join(["1"] * 6000), "longer than 10000 characters"),
    (OUTPUT_ENTRY, '"\\ud800"', "lone surrogate"),
    (OUTPUT_ENTRY, '"a\\udfffb"', "lone surrogate"),
    (OUTPUT_ENTRY, '"\\u0000"', "NUL"),
    (INPUT_ENTRY, '"\\u0000"', "NUL"),
]


@pytest.mark.parametrize(("where", "text", "reason"), REFUSED_AT_DEPLOYMENT)
def test_refused_at_deployment_naming_file_line_and_element(
    where: str, text: str, reason: str
) -> None:
    written = document(where, text)
    with pytest.raises(ModelError) as raised:
        compiled(written)
    error = raised.value
    assert (error.file, error.element_id) == (FILE, ELEMENT[where])
    assert error.line == line_of(written, ELEMENT[where])
    assert reason in error.message


# A context whose every entry lists the previous one ten times: tiny text, 10**9 leaves if its
# values were copied or walked without a bound.
SHARED = (
    "{a: ["
    + ",".join(["{x: 1}"] * 10)
    + "]"
    + "".join(
        f", {name}: [{','.join([previous] * 10)}]"
        for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
)
THIRTY = "[" + ",".join(["1"] * 30) + "]"
# Filters nested in filters: 30**6 condition evaluations.
NESTED_FILTERS = f"{{l: {THIRTY}, r: " + "l[count(" * 5 + "l[true]" + ") > 0]" * 5 + "}.r"

FAILING_EVALUATION: list[tuple[str, str, str]] = [
    (OUTPUT_ENTRY, "2 ** 1000000", "exponent larger than 1000"),
    (INPUT_EXPRESSION, "10 ** -5000", "exponent larger than 1000"),
    (OUTPUT_ENTRY, "(10 ** 999) ** 999", "failed: Overflow"),
    (OUTPUT_ENTRY, "10 ** 999" + " * 10 ** 999" * 7, "failed: Overflow"),
    (OUTPUT_ENTRY, "10 ** 1000", "too large"),
    (
        OUTPUT_ENTRY,
        '{a: "'
        + "x" * 9000
        + '"'
        + "".join(f", {n}: {p} + {p}" for p, n in zip("abcdefg", "bcdefgh", strict=True))
        + "}.h",
        "string result longer than 1000000 characters",
    ),
    (OUTPUT_ENTRY, "s + s", "string result longer than 1000000 characters"),
    (OUTPUT_ENTRY, SHARED + "}.i", "evaluation takes more than"),
    (OUTPUT_ENTRY, f"{SHARED}}}.i = {SHARED}}}.i", "evaluation takes more than"),
    (OUTPUT_ENTRY, f"count({SHARED}}}.i.x)", "evaluation takes more than"),
    (OUTPUT_ENTRY, NESTED_FILTERS, "evaluation takes more than"),
    (INPUT_ENTRY, f"count({NESTED_FILTERS}) > 0", "evaluation takes more than"),
    (OUTPUT_ENTRY, 'x["__class__"]', "expected a boolean"),
    (OUTPUT_ENTRY, 'date("9999-12-31") + duration("P1D")', "failed"),
    (OUTPUT_ENTRY, 'duration("P1D") * 10 ** 30', "failed"),
    (OUTPUT_ENTRY, 'duration("P99999999999999D")', "too long a duration"),
    (OUTPUT_ENTRY, 'number("1e999999999")', "failed"),
    (OUTPUT_ENTRY, "decimal(1, 10 ** 30)", "out of range"),
]


@pytest.mark.parametrize(("where", "text", "reason"), FAILING_EVALUATION)
def test_fails_at_evaluation_naming_the_decision(where: str, text: str, reason: str) -> None:
    decision = compiled(document(where, text))
    with pytest.raises(DmnEvaluationError) as raised:
        decision.evaluate("d", {"x": 7, "s": "y" * 600_000})
    assert raised.value.message.startswith("decision 'd': ")
    assert reason in raised.value.message


@pytest.mark.parametrize(
    ("entry", "value", "expected"),
    [
        ("[1..1000000000000]", 5, [{"out": "ok"}]),
        ("[1..1000000000000]", 10**13, []),
        ("]-1000000000000..1000000000000[", -(10**12), []),
        ("not([1..1000000000000])", 0, [{"out": "ok"}]),
    ],
)
def test_a_huge_range_is_two_comparisons(entry: str, value: int, expected: list[Any]) -> None:
    assert evaluate(document(INPUT_ENTRY, entry), {"x": value}) == expected


def test_a_string_just_under_the_bound_is_a_result() -> None:
    [entry] = evaluate(document(OUTPUT_ENTRY, "s + s"), {"x": 1, "s": "y" * 500_000})
    assert entry == {"out": "y" * 1_000_000}


def test_a_surrogate_pair_escape_is_one_character() -> None:
    assert evaluate(document(OUTPUT_ENTRY, '"\\ud83d\\ude00!"'), {"x": 1}) == [
        {"out": "\U0001f600!"}
    ]


# -- fuzz -------------------------------------------------------------------------------------

CHARACTERS = "abcxyz019 .,:;()[]{}<>=!+-*/\"'?_\\"
FUZZ_VARIABLES: dict[str, Any] = {**VARIABLES, "cellInput": 3}


FRAGMENTS = [
    "x",
    "s",
    "1",
    "2.5",
    '"gold"',
    "null",
    "true",
    "-",
    "< 10",
    ">= x",
    "[1..10]",
    "]1..x[",
    'not("a", "b")',
    '"a", "b"',
    "x + 1",
    "x > 5",
    "s + s",
    "c.a",
    "c.b[1]",
    "l[item != null]",
    "d",
    'date("2026-01-01")',
    'duration("P1D")',
    "string length(s)",
    "upper case(s)",
    "count(l)",
    "sum(c.b)",
    "if x > 1 then s else null",
    "? > 2",
    "cellInput",
]
JOINERS = [" + ", " - ", " * ", " / ", " and ", " or ", ", ", " < ", " = ", " ", ".", " in "]


def random_text(rng: random.Random) -> str:
    """A valid fragment, two joined, a mutated one, or token soup."""
    kind = rng.random()
    if kind < 0.3:
        return rng.choice(FRAGMENTS)
    if kind < 0.6:
        return rng.choice(FRAGMENTS) + rng.choice(JOINERS) + rng.choice(FRAGMENTS)
    if kind < 0.8:
        text = list(rng.choice(FRAGMENTS))
        at = rng.randint(0, len(text))
        if rng.random() < 0.5 and at < len(text):
            del text[at]
        else:
            text.insert(at, rng.choice(CHARACTERS))
        return "".join(text)
    return " ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 6)))


def fuzz_document(entry: str, output: str) -> str:
    return definitions(
        table(
            "d",
            [In("x", "integer", "X"), In("s", None, "S")],
            [Out("out"), Out("again", "string")],
            [([entry, "-"], [output, '"r1"']), (["-", entry], ['"r2"', output])],
            "COLLECT",
        )
    )


def test_random_feel_in_entries_raises_only_model_or_evaluation_errors() -> None:
    rng = random.Random(20261205)
    outcomes = {"refused": 0, "failed": 0, "evaluated": 0}
    for _ in range(400):
        fuzzed = rng.choice(["entry", "output", "both"])
        entry = random_text(rng) if fuzzed != "output" else "-"
        output = random_text(rng) if fuzzed != "entry" else '"r"'
        try:
            decision = compiled(fuzz_document(entry, output))
        except ModelError as error:
            assert error.file == FILE
            assert error.line is not None
            assert re.fullmatch(r"R[12]_[io][12]", error.element_id or "")
            outcomes["refused"] += 1
            continue
        try:
            decision.evaluate("d", FUZZ_VARIABLES)
        except DmnEvaluationError as error:
            assert error.message.startswith("decision 'd': ")
            outcomes["failed"] += 1
            continue
        outcomes["evaluated"] += 1
    # The generator reaches every stage, not only the parser's refusals.
    assert min(outcomes.values()) >= 20, outcomes
