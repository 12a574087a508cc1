"""A safe subset of FEEL (DMN 1.3), compiled once into a syntax tree of our own and interpreted.

Nothing here reaches Python's evaluator or attributes: a path `a.b` reads only the key `b` of a
context (a dict), names with `__` are refused, and text length, nesting depth, string results,
exponents and the steps of one evaluation (engine/feel/budget.py) are bounded. Every failure is
a `FeelError` carrying a message and, when known, the position in the text.

Numbers are `Decimal` inside (34 digits, so `0.1 + 0.2 = 0.3` holds); variables given as int or
float are read exactly, and results come back as `int` when integral and `float` otherwise.

Types: comparing or combining values of incompatible types (`"a" < 1`, `"a" = 1`, `1 + "a"`,
`1 and true`) is a `FeelError`, in expressions and unary tests alike, rather than a silent false:
a decision table whose entries do not fit its inputs fails loudly, as Camunda's engine reports a
failed evaluation. Null is the one value every type accepts: `null = null` is true, `x = null` is
false, an ordering comparison or arithmetic with null is null, and a unary test that yields null
does not match. So on a null input only `-`, `null`, and `not(...)` of equality tests match
(`< 10` is null there, and `not(< 10)` is null too). A missing variable is a `FeelError`.

Names: variables are identifiers (`[A-Za-z_][A-Za-z0-9_]*`, no `__`); the built-in functions
whose names hold spaces (`string length`, `date and time`, ...) are recognised as one name before
their opening parenthesis. Not supported: variable names with spaces, `for`/`some`/`every`,
function definitions, named arguments, and `instance of`; each fails to compile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.feel import budget, nodes
from engine.feel.builtins import _string as string_of
from engine.feel.errors import FeelError
from engine.feel.interpreter import Scope, evaluate, test
from engine.feel.parser import parse_expression, parse_unary_tests
from engine.feel.values import to_feel, to_python

__all__ = [
    "Cell",
    "Expression",
    "FeelError",
    "UnaryTests",
    "compile_expression",
    "compile_unary_tests",
    "feel_string",
]


def _guarded(text: str, parse: Any) -> nodes.Node:
    if not isinstance(text, str):
        raise FeelError("a FEEL text must be a string")
    try:
        node: nodes.Node = parse(text)
    except RecursionError:
        raise FeelError("expression nested too deeply") from None
    return node


class Expression:
    """A compiled FEEL expression."""

    def __init__(self, text: str, tree: nodes.Node) -> None:
        self.text = text
        self.tree = tree

    def evaluate(self, variables: Mapping[str, Any]) -> Any:
        token = budget.start()
        try:
            return to_python(evaluate(self.tree, Scope(variables)))
        except RecursionError:
            raise FeelError("evaluation nested too deeply") from None
        finally:
            budget.stop(token)


class UnaryTests:
    """Compiled FEEL unary tests: a DMN input entry."""

    def __init__(self, text: str, tree: nodes.Node) -> None:
        self.text = text
        self.tree = tree

    def matches(
        self,
        value: Any,
        variables: Mapping[str, Any] | None = None,
        input_variable: str = "cellInput",
    ) -> bool:
        """Whether `value` passes; entries may also name it as `input_variable` (Camunda's
        `camunda:inputVariable`, `cellInput` by default) or as `?`."""
        return self.passes(Cell(value, variables, input_variable))

    def passes(self, cell: Cell) -> bool:
        """Whether the cell's value passes: a column's value prepared once for all its rows."""
        token = budget.start()
        try:
            return test(self.tree, cell.value, cell.scope) is True
        except RecursionError:
            raise FeelError("evaluation nested too deeply") from None
        finally:
            budget.stop(token)


class Cell:
    """A value tested by unary tests, converted to FEEL once, with the scope the tests see: the
    value as `input_variable` (and `?`) over `variables`."""

    __slots__ = ("scope", "value")

    def __init__(
        self,
        value: Any,
        variables: Mapping[str, Any] | None = None,
        input_variable: str = "cellInput",
    ) -> None:
        self.value = to_feel(value)
        self.scope = Scope(
            {input_variable: self.value}, self.value, Scope(variables or {}), feel=True
        )


def feel_string(value: Any) -> str:
    """A value as FEEL's `string()` writes it: dates and times in ISO form, durations as
    `P1DT2H0M0S` or `P1Y2M`."""
    return string_of(to_feel(value))


def compile_expression(text: str) -> Expression:
    return Expression(text, _guarded(text, parse_expression))


def compile_unary_tests(text: str) -> UnaryTests:
    return UnaryTests(text, _guarded(text, parse_unary_tests))
