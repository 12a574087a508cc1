"""A deployed decision as the console draws it: its decision table (hit policy, input and output
columns, one row per rule) or its literal expression, and the decisions it requires, read from
the DMN file deployed. The decision page shades each rule by how often it matched; the
inspector marks the rules one evaluation matched."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from app.templating import templates
from engine.api import Engine
from engine.dmn import (
    Decision,
    DecisionTable,
    InputClause,
    LiteralExpression,
    OutputClause,
)
from engine.errors import NotFound
from engine.queries import decision_console, decisions
from engine.queries.decision_console import Evaluation, RuleCounts


@dataclass(frozen=True)
class RuleLine:
    """One rule of a table: its position (from 1), id, entries as written and description, and
    how often it matched (`heat`: 0 for never, else 1 to 5 relative to the most matched rule)."""

    number: int
    id: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    description: str | None
    count: int = 0
    share: float = 0.0
    heat: int = 0


@dataclass(frozen=True)
class TableView:
    hit_policy: str
    inputs: tuple[InputClause, ...]
    outputs: tuple[OutputClause, ...]
    rules: tuple[RuleLine, ...]


@dataclass(frozen=True)
class DecisionView:
    """A decision: its table or its literal expression, and the ids of the decisions it
    requires."""

    id: str
    name: str | None
    table: TableView | None
    literal: LiteralExpression | None
    requirements: tuple[str, ...]

    def rule_numbers(self) -> dict[str, int]:
        """Each rule's number in the table (from 1, as the table's # column shows), by id."""
        return {rule.id: rule.number for rule in self.table.rules} if self.table else {}


def _hit_policy(table: DecisionTable) -> str:
    if table.aggregation is not None:
        return f"{table.hit_policy.value} {table.aggregation.value}"
    return table.hit_policy.value


def _table(table: DecisionTable) -> TableView:
    rules = tuple(
        RuleLine(
            number,
            rule.id,
            tuple(entry.text.strip() or "-" for entry in rule.input_entries),
            tuple(entry.text.strip() for entry in rule.output_entries),
            rule.description,
        )
        for number, rule in enumerate(table.rules, start=1)
    )
    return TableView(_hit_policy(table), table.inputs, table.outputs, rules)


def _view(decision: Decision) -> DecisionView:
    logic = decision.logic
    return DecisionView(
        decision.id,
        decision.name,
        _table(logic) if isinstance(logic, DecisionTable) else None,
        logic if isinstance(logic, LiteralExpression) else None,
        decision.requirements,
    )


def decision_view(engine: Engine, definition_id: str, key: str) -> DecisionView:
    """The decision `key` of the decision definition `definition_id`, as deployed."""
    found = decisions.deployed(engine, definition_id)
    if found is None:
        raise NotFound(f"decision definition {definition_id} does not exist")
    return _view(found.file.definitions.decision(key))


def with_counts(view: DecisionView, counts: RuleCounts) -> DecisionView:
    """The decision with each rule's matches of `counts`, its share of the evaluations and its
    heat level."""
    if view.table is None:
        return view
    most = max((counts.rules.get(rule.id, 0) for rule in view.table.rules), default=0)
    rules = tuple(
        RuleLine(
            rule.number,
            rule.id,
            rule.inputs,
            rule.outputs,
            rule.description,
            count,
            counts.share(rule.id),
            min(5, max(1, math.ceil(count / most * 5))) if count else 0,
        )
        for rule in view.table.rules
        for count in (counts.rules.get(rule.id, 0),)
    )
    table = TableView(view.table.hit_policy, view.table.inputs, view.table.outputs, rules)
    return DecisionView(view.id, view.name, table, view.literal, view.requirements)


@dataclass(frozen=True)
class EvaluationLine:
    """One decision an instance evaluated, with its decision as deployed and, for a required
    decision, the key of the decision that required it."""

    evaluation: Evaluation
    decision: DecisionView
    required_by: str | None


def evaluation_lines(engine: Engine, instance_id: UUID) -> list[EvaluationLine]:
    """Every decision the instance evaluated, in the order they were evaluated."""
    found = decision_console.instance_evaluations(engine, instance_id)
    keys = {e.id: e.decision_key for e in found}
    return [
        EvaluationLine(
            e,
            decision_view(engine, e.definition_id, e.decision_key),
            keys.get(e.root_id) if e.root_id is not None else None,
        )
        for e in found
    ]


def dmn_value(value: Any) -> str:
    """A value of an evaluation (an input, an output) as JSON writes it: strings quoted."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


templates.env.filters["dmn_value"] = dmn_value
