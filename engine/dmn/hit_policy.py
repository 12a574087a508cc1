"""A decision table's result from its matched rules, per hit policy (DMN 1.3), as Camunda answers.

The caller evaluates the rules; this module only selects, orders and aggregates. A matched rule
comes with its evaluated outputs (output name to value), an empty output entry left out. The
result is a list of entries, each a dict of output name to value, of the outputs the rule gave
(as Camunda's: a rule of a two-output table that fills one output gives a one-output entry).

No rule matched: one entry of the default output entries' values when any output has one (the
outputs without a default are None), else no entry. COLLECT with SUM, MIN or MAX aggregates the
non-empty values of the single output, and over none answers no entry at all (Camunda returns an
empty result, not a zero); COLLECT COUNT counts them and answers `{name: 0}` over none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from engine.dmn.errors import DmnEvaluationError
from engine.dmn.model import Aggregation, DecisionTable, HitPolicy, OutputClause, Rule


@dataclass(frozen=True)
class MatchedRule:
    rule: Rule
    outputs: Mapping[str, Any]


@dataclass(frozen=True)
class TableResult:
    entries: list[dict[str, Any]]
    # The rules the result is made of, in the result's order (FIRST, PRIORITY, ANY: one).
    rule_ids: tuple[str, ...]


def apply_hit_policy(
    decision_id: str,
    table: DecisionTable,
    matched: Sequence[MatchedRule],
    defaults: Mapping[str, Any] | None = None,
) -> TableResult:
    """The table's result from `matched` (in rule order). `defaults` holds the evaluated default
    output entries by output name. Raises DmnEvaluationError naming the decision and rules."""
    if not matched:
        if defaults:
            return TableResult([{o.name: defaults.get(o.name) for o in table.outputs}], ())
        if table.aggregation is Aggregation.COUNT:
            return TableResult([{table.outputs[0].name: 0}], ())
        return TableResult([], ())
    policy = table.hit_policy
    if policy is HitPolicy.UNIQUE and len(matched) > 1:
        ids = tuple(m.rule.id for m in matched)
        raise DmnEvaluationError(
            f"hit policy UNIQUE allows one matching rule, but {len(ids)} matched: "
            + ", ".join(ids),
            decision_id=decision_id,
            rule_ids=ids,
        )
    if policy is HitPolicy.ANY:
        first = _entry(table, matched[0])
        differing = [m.rule.id for m in matched[1:] if _entry(table, m) != first]
        if differing:
            involved = [matched[0].rule.id, *differing]
            raise DmnEvaluationError(
                "hit policy ANY needs equal outputs from every matching rule, but rules "
                + ", ".join(involved)
                + " differ",
                decision_id=decision_id,
                rule_ids=involved,
            )
        return TableResult([first], (matched[0].rule.id,))
    if policy in (HitPolicy.UNIQUE, HitPolicy.FIRST):
        return TableResult([_entry(table, matched[0])], (matched[0].rule.id,))
    if policy is HitPolicy.PRIORITY:
        [best, *_] = _by_priority(decision_id, table, matched)
        return TableResult([_entry(table, best)], (best.rule.id,))
    if policy is HitPolicy.OUTPUT_ORDER:
        ordered = _by_priority(decision_id, table, matched)
        return TableResult([_entry(table, m) for m in ordered], tuple(m.rule.id for m in ordered))
    ids = tuple(m.rule.id for m in matched)
    if policy is HitPolicy.COLLECT and table.aggregation is not None:
        return _aggregate(decision_id, table, table.aggregation, matched)
    return TableResult([_entry(table, m) for m in matched], ids)


def _entry(table: DecisionTable, matched: MatchedRule) -> dict[str, Any]:
    return {o.name: matched.outputs[o.name] for o in table.outputs if o.name in matched.outputs}


def _aggregate(
    decision_id: str, table: DecisionTable, aggregation: Aggregation, matched: Sequence[MatchedRule]
) -> TableResult:
    name = table.outputs[0].name
    ids = tuple(m.rule.id for m in matched)
    present = [m for m in matched if m.outputs.get(name) is not None]
    if aggregation is Aggregation.COUNT:
        return TableResult([{name: len(present)}], ids)
    if not present:
        return TableResult([], ids)
    values = [m.outputs[name] for m in present]
    wrong = [
        m.rule.id
        for m in present
        if isinstance(m.outputs[name], bool)
        or not isinstance(m.outputs[name], int | float | Decimal)
    ]
    if wrong:
        raise DmnEvaluationError(
            f"COLLECT {aggregation.value} needs numbers, but rules {', '.join(wrong)} "
            f"give other values for '{name}'",
            decision_id=decision_id,
            rule_ids=wrong,
        )
    try:
        if aggregation is Aggregation.SUM:
            result: Any = sum(values[1:], values[0])
        elif aggregation is Aggregation.MIN:
            result = min(values)
        else:
            result = max(values)
    except TypeError:
        raise DmnEvaluationError(
            f"COLLECT {aggregation.value} cannot combine the values of '{name}' "
            f"({', '.join(type(v).__name__ for v in values)})",
            decision_id=decision_id,
            rule_ids=ids,
        ) from None
    return TableResult([{name: result}], ids)


def _by_priority(
    decision_id: str, table: DecisionTable, matched: Sequence[MatchedRule]
) -> list[MatchedRule]:
    """The matched rules ordered by their outputs' places in the outputs' allowed values, the
    first output first; rules of equal priority stay in rule order."""
    ranked = [
        (output, [allowed_value(decision_id, output, text) for text in output.output_values])
        for output in table.outputs
        if output.output_values
    ]
    if not ranked:
        raise DmnEvaluationError(
            f"hit policy {table.hit_policy.value} needs output values on an output",
            decision_id=decision_id,
        )

    def key(match: MatchedRule) -> tuple[int, ...]:
        places: list[int] = []
        for output, values in ranked:
            value = match.outputs.get(output.name)
            place = next((i for i, allowed in enumerate(values) if _same(allowed, value)), None)
            if place is None:
                raise DmnEvaluationError(
                    f"rule {match.rule.id} gives '{output.name}' the value {value!r}, "
                    "which is not one of its output values",
                    decision_id=decision_id,
                    rule_ids=[match.rule.id],
                )
            places.append(place)
        return tuple(places)

    return sorted(matched, key=key)


def _same(allowed: Any, value: Any) -> bool:
    """A value equals a written output value of the same kind (no string equals a number)."""
    if isinstance(allowed, bool) or isinstance(value, bool):
        return allowed is value
    if isinstance(allowed, str) or isinstance(value, str):
        return isinstance(allowed, str) and isinstance(value, str) and allowed == value
    if isinstance(value, float):
        return bool(allowed == Decimal(repr(value)))
    return bool(allowed == value)


def allowed_value(decision_id: str, output: OutputClause, text: str) -> Any:
    """One written output value as a value: a string literal, a number, true, false or null."""
    written = text.strip()
    if len(written) >= 2 and written[0] == written[-1] == '"':
        inner = written[1:-1]
        return inner.replace('\\"', '"').replace("\\\\", "\\")
    if written in ("true", "false"):
        return written == "true"
    if written == "null":
        return None
    try:
        return Decimal(written)
    except InvalidOperation:
        raise DmnEvaluationError(
            f"output '{output.name}' has the output value {written}, which is not a string, "
            "number, boolean or null literal",
            decision_id=decision_id,
        ) from None
