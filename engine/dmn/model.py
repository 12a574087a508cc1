"""The immutable DMN model: definitions, decisions, decision tables and literal expressions.

Every expression is kept as its text with the language it is written in (`Entry`); nothing here
evaluates anything. Source lines are kept for messages and take no part in equality.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class HitPolicy(StrEnum):
    UNIQUE = "UNIQUE"
    FIRST = "FIRST"
    PRIORITY = "PRIORITY"
    ANY = "ANY"
    COLLECT = "COLLECT"
    RULE_ORDER = "RULE ORDER"
    OUTPUT_ORDER = "OUTPUT ORDER"


class Aggregation(StrEnum):
    SUM = "SUM"
    MIN = "MIN"
    MAX = "MAX"
    COUNT = "COUNT"


class ExpressionLanguage(StrEnum):
    """FEEL, or JUEL as older Camunda files write `${...}` entries (read by the `${}` evaluator)."""

    FEEL = "feel"
    JUEL = "juel"


DEFAULT_INPUT_VARIABLE = "cellInput"


@dataclass(frozen=True)
class Entry:
    """One expression text (an input expression, a unary test, an output entry) and its language."""

    text: str
    language: ExpressionLanguage = ExpressionLanguage.FEEL
    id: str | None = None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputClause:
    id: str
    label: str | None
    expression: Entry
    type_ref: str | None
    input_variable: str = DEFAULT_INPUT_VARIABLE
    # The inputValues unary tests, as written (None: any value).
    input_values: str | None = None


@dataclass(frozen=True)
class OutputClause:
    id: str
    label: str | None
    # The key of this output in each result entry (its id when a table's only output has no name).
    name: str
    type_ref: str | None
    # The allowed values in priority order (PRIORITY, OUTPUT ORDER), each as written: `"gold"`.
    output_values: tuple[str, ...] = ()
    default_output_entry: Entry | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    description: str | None
    input_entries: tuple[Entry, ...]
    output_entries: tuple[Entry, ...]
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DecisionTable:
    id: str
    hit_policy: HitPolicy
    aggregation: Aggregation | None
    inputs: tuple[InputClause, ...]
    outputs: tuple[OutputClause, ...]
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class LiteralExpression:
    id: str
    # The variable the decision's result is named after (the decision's <variable name>).
    variable_name: str
    type_ref: str | None
    expression: Entry


@dataclass(frozen=True)
class Decision:
    id: str
    name: str | None
    version_tag: str | None
    # camunda:historyTimeToLive in days.
    history_time_to_live: int | None
    # The ids of the decisions this one requires (informationRequirement/requiredDecision).
    requirements: tuple[str, ...]
    logic: DecisionTable | LiteralExpression
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DmnDefinitions:
    id: str | None
    name: str | None
    namespace: str | None
    decisions: tuple[Decision, ...]
    expression_language: ExpressionLanguage = ExpressionLanguage.FEEL

    def decision(self, decision_id: str) -> Decision:
        for decision in self.decisions:
            if decision.id == decision_id:
                return decision
        raise KeyError(decision_id)
