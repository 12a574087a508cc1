"""Evaluating decisions: a DMN file compiled once at deployment, then evaluated over variables.

`compile_definitions` compiles every expression of every decision (FEEL through engine/feel,
JUEL `${...}` through engine/expressions: no other language is ever evaluated) and refuses the
file with a ModelError naming the file, line and element of the first that does not compile.

`CompiledDefinitions.evaluate` evaluates a decision after the decisions it requires, as Camunda 7
does: a required decision's single result entry becomes variables of the requiring decision (its
outputs by name); several entries, or a COLLECT or RULE ORDER table's, give each output name the
list of its values. Each decision evaluated is one `Evaluation` (its inputs with their values,
the rules that matched, their outputs and the result, and the variables it read): what the
history records, and enough to evaluate the decision again from its record alone (`replay`).

Types: an input's `typeRef` converts the input expression's value, an output's the output entry's
(string, boolean, integer, long, double, date; others leave the value as it is). A value that
does not convert, a unary test comparing values of different types, a missing variable: each is
a DmnEvaluationError naming the decision and the clause or rule, never a silent non-match.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import ChainMap
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from engine.dmn import model
from engine.dmn.errors import DmnEvaluationError
from engine.dmn.graph import evaluation_order
from engine.dmn.hit_policy import MatchedRule, apply_hit_policy
from engine.errors import ExpressionError, ModelError
from engine.feel import Cell, FeelError, compile_expression, compile_unary_tests
from engine.language.expressions import compile_expression as compile_juel

_INT_RANGE = {"integer": 2**31, "long": 2**63}


@dataclass(frozen=True)
class InputValue:
    id: str
    label: str | None
    type_ref: str | None
    value: Any


@dataclass(frozen=True)
class OutputValue:
    id: str
    label: str | None
    name: str
    # The rule that gave it and its place in the table (1-based); None for a literal
    # expression's value and a default output entry's.
    rule_id: str | None
    rule_order: int | None
    type_ref: str | None
    value: Any


@dataclass(frozen=True)
class Evaluation:
    """One decision evaluated."""

    decision_id: str
    decision_name: str | None
    inputs: tuple[InputValue, ...]
    matched_rules: tuple[str, ...]
    outputs: tuple[OutputValue, ...]
    # The decision's result: entries of output name to value.
    result: list[dict[str, Any]]
    # COLLECT with an aggregator: the aggregated value.
    collect_value: Any = None
    # The variables the evaluation read, with the values it read: evaluating the decision again
    # over these alone (`replay`) gives the same inputs, rules and result.
    variables: dict[str, Any] = field(default_factory=dict)


class _Reads(Mapping[str, Any]):
    """Variables that remember which of them an evaluation read."""

    def __init__(self, variables: Mapping[str, Any]) -> None:
        self._variables = variables
        self.read: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        value = self._variables[name]
        self.read[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return name in self._variables

    def __iter__(self) -> Iterator[str]:
        return iter(self._variables)

    def __len__(self) -> int:
        return len(self._variables)


@dataclass(frozen=True)
class DecisionResult:
    """The asked decision's result, and every decision evaluated for it (the asked one last)."""

    result: list[dict[str, Any]]
    evaluations: tuple[Evaluation, ...]


class _Compiled:
    """One entry compiled in its language: a FEEL expression or unary tests, or a JUEL `${...}`.
    A JUEL text without `${` is read as if written inside one (`amount` is `${amount}`), as
    Camunda's DMN engine reads it."""

    def __init__(self, entry: model.Entry, unary: bool) -> None:
        self.text = entry.text
        self.empty = not entry.text.strip() or (unary and entry.text.strip() == "-")
        self.juel = entry.language is model.ExpressionLanguage.JUEL
        self._feel: Any = None
        self._juel: Any = None
        if self.empty:
            return
        if self.juel:
            braced = "${" in entry.text or "#{" in entry.text
            self._juel = compile_juel(entry.text if braced else "${" + entry.text + "}")
        elif unary:
            self._feel = compile_unary_tests(entry.text)
        else:
            self._feel = compile_expression(entry.text)

    def value(self, variables: Mapping[str, Any]) -> Any:
        if self.empty:
            return None
        if self._feel is not None:
            return self._feel.evaluate(variables)
        return self._juel.evaluate(variables)

    def matches(self, cell: _Cell) -> bool:
        if self.empty:
            return True
        if self._feel is not None:
            return bool(self._feel.passes(cell.feel()))
        return self._juel.evaluate(cell.scope()) is True


class _Cell:
    """One input's value as its column's entries test it, prepared once for all the rules."""

    __slots__ = ("_feel", "input_variable", "value", "variables")

    def __init__(self, value: Any, variables: Mapping[str, Any], input_variable: str) -> None:
        self.value = value
        self.variables = variables
        self.input_variable = input_variable
        self._feel: Cell | None = None

    def feel(self) -> Cell:
        if self._feel is None:
            self._feel = Cell(self.value, self.variables, self.input_variable)
        return self._feel

    def scope(self) -> Mapping[str, Any]:
        # Looks up each name it reads, and only those (the variables record their reads).
        variables = cast("MutableMapping[str, Any]", self.variables)
        return ChainMap({self.input_variable: self.value}, variables)


# Entries already compiled in one file, by (text, language, unary): a table repeats its cells
# (`-`, `>= 18`, `"gold"`) across rules, and a compiled entry holds no state of its own.
_Seen = dict[tuple[str, model.ExpressionLanguage, bool], "_Compiled"]


def _compile(entry: model.Entry, unary: bool, file: str, owner: str, seen: _Seen) -> _Compiled:
    key = (entry.text, entry.language, unary)
    found = seen.get(key)
    if found is not None:
        return found
    try:
        compiled = seen[key] = _Compiled(entry, unary)
    except FeelError as error:
        what = "input entry" if unary else "expression"
        message = f"the {what} '{_shorten(entry.text)}' does not parse: {error}"
        raise ModelError(
            message, file=file, line=entry.line, element_id=entry.id or owner
        ) from None
    except ExpressionError as error:
        raise ModelError(
            error.message, file=file, line=entry.line, element_id=entry.id or owner
        ) from None
    return compiled


def _shorten(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


class _Table:
    def __init__(self, table: model.DecisionTable, file: str, seen: _Seen) -> None:
        self.table = table
        self.inputs = [_compile(i.expression, False, file, i.id, seen) for i in table.inputs]
        self.rules = [
            (
                [_compile(e, True, file, rule.id, seen) for e in rule.input_entries],
                [_compile(e, False, file, rule.id, seen) for e in rule.output_entries],
            )
            for rule in table.rules
        ]
        self.defaults = [
            _compile(o.default_output_entry, False, file, o.id, seen)
            if o.default_output_entry is not None
            else None
            for o in table.outputs
        ]


class CompiledDefinitions:
    """A DMN file's decisions, every expression compiled."""

    def __init__(self, definitions: model.DmnDefinitions, file: str) -> None:
        self.definitions = definitions
        self.file = file
        self._logic: dict[str, _Table | _Compiled] = {}
        seen: _Seen = {}
        for decision in definitions.decisions:
            logic = decision.logic
            if isinstance(logic, model.DecisionTable):
                self._logic[decision.id] = _Table(logic, file, seen)
            else:
                expression = logic.expression
                self._logic[decision.id] = _compile(expression, False, file, decision.id, seen)

    def decision(self, decision_id: str) -> model.Decision:
        return self.definitions.decision(decision_id)

    def evaluate(self, decision_id: str, variables: Mapping[str, Any]) -> DecisionResult:
        """Evaluate `decision_id` (after what it requires) over `variables`."""
        scope = dict(variables)
        evaluations: list[Evaluation] = []
        for decision in evaluation_order(self.definitions, decision_id):
            evaluation = self._evaluate_one(decision, scope)
            evaluations.append(evaluation)
            if decision.id != decision_id:
                scope.update(_as_variables(decision, evaluation.result))
        return DecisionResult(evaluations[-1].result, tuple(evaluations))

    def replay(self, decision_id: str, variables: Mapping[str, Any]) -> Evaluation:
        """The decision `decision_id` alone evaluated again over the variables an evaluation
        of it read (`Evaluation.variables`; a required decision's outputs are among them)."""
        return self._evaluate_one(self.decision(decision_id), variables)

    def _evaluate_one(self, decision: model.Decision, variables: Mapping[str, Any]) -> Evaluation:
        reads = _Reads(variables)
        evaluation = self._logic_of(decision, reads)
        return replace(evaluation, variables=reads.read)

    def _logic_of(self, decision: model.Decision, variables: Mapping[str, Any]) -> Evaluation:
        logic = self._logic[decision.id]
        if isinstance(logic, _Table):
            return self._table(decision, logic, variables)
        literal = decision.logic
        assert isinstance(literal, model.LiteralExpression)
        value = _convert(
            _run(decision.id, f"literal expression '{literal.id}'", logic.value, variables),
            literal.type_ref,
            decision.id,
            f"the literal expression '{literal.id}'",
        )
        output = OutputValue(
            literal.id, None, literal.variable_name, None, None, literal.type_ref, value
        )
        return Evaluation(
            decision.id,
            decision.name,
            (),
            (),
            (output,),
            [{literal.variable_name: value}],
        )

    def _table(
        self,
        decision: model.Decision,
        compiled: _Table,
        variables: Mapping[str, Any],
    ) -> Evaluation:
        table = compiled.table
        inputs: list[InputValue] = []
        for clause, expression in zip(table.inputs, compiled.inputs, strict=True):
            where = f"input '{clause.label or clause.id}'"
            raw = _run(decision.id, where, expression.value, variables)
            value = _convert(raw, clause.type_ref, decision.id, f"the {where}")
            inputs.append(InputValue(clause.id, clause.label, clause.type_ref, value))
        cells = [
            _Cell(item.value, variables, clause.input_variable)
            for clause, item in zip(table.inputs, inputs, strict=True)
        ]
        matched: list[MatchedRule] = []
        outputs_of: dict[str, tuple[int, list[OutputValue]]] = {}
        for order, (rule, (entries, results)) in enumerate(
            zip(table.rules, compiled.rules, strict=True), start=1
        ):
            if not self._matches(decision, rule.id, entries, table.inputs, cells):
                continue
            values: list[OutputValue] = []
            for output, entry in zip(table.outputs, results, strict=True):
                if entry.empty:
                    continue  # as Camunda's: an empty output entry is no output of the rule
                where = f"output '{output.name}' of rule '{rule.id}'"
                raw = _run(decision.id, where, entry.value, variables)
                value = _convert(raw, output.type_ref, decision.id, f"the {where}")
                values.append(
                    OutputValue(
                        output.id, output.label, output.name, rule.id, order, output.type_ref, value
                    )
                )
            outputs_of[rule.id] = (order, values)
            matched.append(MatchedRule(rule, {v.name: v.value for v in values}))
            if table.hit_policy is model.HitPolicy.FIRST:
                break  # the rules below are not evaluated, as Camunda's engine stops here
        defaults: dict[str, Any] = {}
        for output, default in zip(table.outputs, compiled.defaults, strict=True):
            if default is not None and not matched:
                where = f"default output of '{output.name}'"
                raw = _run(decision.id, where, default.value, variables)
                defaults[output.name] = _convert(raw, output.type_ref, decision.id, f"the {where}")
        outcome = apply_hit_policy(decision.id, table, matched, defaults)
        collect_value = None
        if table.hit_policy is model.HitPolicy.COLLECT and table.aggregation is not None:
            name = table.outputs[0].name
            collect_value = outcome.entries[0][name] if outcome.entries else None
            recorded_outputs = [v for rule_id in outcome.rule_ids for v in outputs_of[rule_id][1]]
        elif matched:
            recorded_outputs = [v for rule_id in outcome.rule_ids for v in outputs_of[rule_id][1]]
        else:
            recorded_outputs = [
                OutputValue(o.id, o.label, o.name, None, None, o.type_ref, defaults[o.name])
                for o in table.outputs
                if o.name in defaults
            ]
        return Evaluation(
            decision.id,
            decision.name,
            tuple(inputs),
            tuple(m.rule.id for m in matched),
            tuple(recorded_outputs),
            outcome.entries,
            _plain(collect_value),
        )

    @staticmethod
    def _matches(
        decision: model.Decision,
        rule_id: str,
        entries: list[_Compiled],
        clauses: tuple[model.InputClause, ...],
        cells: list[_Cell],
    ) -> bool:
        """Whether every input entry of the rule holds, tried left to right."""
        for entry, clause, cell in zip(entries, clauses, cells, strict=True):
            try:
                if not entry.matches(cell):
                    return False
            except (FeelError, ExpressionError) as error:
                message = getattr(error, "message", str(error))
                raise DmnEvaluationError(
                    f"the input entry '{_shorten(entry.text)}' of rule '{rule_id}' for input "
                    f"'{clause.label or clause.id}' failed: {message}",
                    decision_id=decision.id,
                    rule_ids=[rule_id],
                ) from None
        return True


def compile_definitions(definitions: model.DmnDefinitions, file: str) -> CompiledDefinitions:
    """Compile every expression of `definitions`; raises ModelError naming file, line and
    element of the first that does not compile."""
    return CompiledDefinitions(definitions, file)


def _run(decision_id: str, where: str, evaluate: Any, variables: Mapping[str, Any]) -> Any:
    try:
        value = _plain(evaluate(variables))
    except (FeelError, ExpressionError) as error:
        if isinstance(error, DmnEvaluationError):
            raise
        message = getattr(error, "message", str(error))
        raise DmnEvaluationError(
            f"the {where} failed: {message}", decision_id=decision_id
        ) from None
    if not _finite(value):
        # A JUEL expression passes a variable's NaN or overflows to infinity; no JSON holds it.
        raise DmnEvaluationError(
            f"the {where} has the value {_shorten(repr(value))}, which is not a finite number",
            decision_id=decision_id,
        )
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True


def _plain(value: Any) -> Any:
    """Numbers as int or float (never Decimal), so results store and compare plainly."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _as_variables(decision: model.Decision, result: list[dict[str, Any]]) -> dict[str, Any]:
    """A required decision's result as the requiring decision's variables (Camunda's rule)."""
    if not result:
        return {}
    logic = decision.logic
    collects = isinstance(logic, model.DecisionTable) and (
        (logic.hit_policy is model.HitPolicy.COLLECT and logic.aggregation is None)
        or logic.hit_policy is model.HitPolicy.RULE_ORDER
    )
    if len(result) == 1 and not collects:
        return dict(result[0])
    names = list(dict.fromkeys(name for entry in result for name in entry))
    return {name: [entry.get(name) for entry in result] for name in names}


def _convert(value: Any, type_ref: str | None, decision_id: str, where: str) -> Any:
    """`value` as the `typeRef` says (Camunda's data type transformers); None stays None."""
    if value is None or type_ref is None:
        return value
    kind = type_ref.strip().lower()
    if kind.startswith("feel:"):
        kind = kind[5:]
    try:
        if kind == "string":
            return _to_string(value)
        if kind == "boolean":
            return _to_boolean(value)
        if kind in _INT_RANGE:
            return _to_integer(value, _INT_RANGE[kind])
        if kind == "double":
            return _to_double(value)
        if kind in ("date", "datetime", "date and time"):
            return _to_date(value)
    except (ValueError, TypeError, InvalidOperation, OverflowError):
        shown = repr(value) if not isinstance(value, str) else f"'{_shorten(value)}'"
        raise DmnEvaluationError(
            f"{where} has the value {shown}, which is not of typeRef '{type_ref}'",
            decision_id=decision_id,
        ) from None
    return value


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise TypeError(value)


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise TypeError(value)


def _to_integer(value: Any, bound: int) -> int:
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        number = int(_digits(value))
    else:
        raise TypeError(value)
    if not -bound <= number < bound:
        raise OverflowError(value)
    return number


def _to_double(value: Any) -> float:
    if isinstance(value, bool):
        raise TypeError(value)
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        number = float(Decimal(_digits(value)))
    else:
        raise TypeError(value)
    if not math.isfinite(number):
        raise ValueError(value)
    return number


def _digits(text: str) -> str:
    """A number's text as Java reads it: Python's `_` digit separators are not part of it."""
    if "_" in text:
        raise ValueError(text)
    return text.strip()


def _to_date(value: Any) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.strip())
    raise TypeError(value)
