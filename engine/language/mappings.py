"""Input and output parameters (`camunda:inputOutput`) of an activity, and how their values are
computed.

A parameter's value is a constant text, one `${...}` expression (the safe evaluator of
engine/language/expressions.py) or a composite text (engine/language/composite.py), a list of
values, a map of keys to values, or a script. Input parameters become local variables of the
activity instance when it starts; output parameters are computed in the activity's local context
when it ends normally and set in its parent scope (see engine/semantics/base.py). Scripts are
kept in the model; `script_problem` says whether one can run (it is the single place that
decides, and `evaluate` the single place that runs it, in the JavaScript isolate).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import scripting
from engine.errors import ExpressionError
from engine.language.composite import Composite, compile_text
from engine.language.expression_context import ExpressionContext
from engine.language.expressions import ACTS_ON_EXECUTION, Expression


@dataclass(frozen=True)
class TextValue:
    """A constant: the text as written (None for an empty parameter, which maps to null)."""

    text: str | None


@dataclass(frozen=True)
class ExpressionValue:
    """One `${...}` (its value keeps its type) or a composite text such as `${var}oque`."""

    expression: Expression | Composite


@dataclass(frozen=True)
class ListValue:
    items: tuple[MappingValue, ...]


@dataclass(frozen=True)
class MapValue:
    """Entries in document order; a key is a constant text, one `${...}` expression or a
    composite text."""

    entries: tuple[tuple[str | Expression | Composite, MappingValue], ...]


@dataclass(frozen=True)
class ScriptValue:
    """`camunda:script`: inline `source` or an external `resource`, in `language`."""

    language: str
    source: str | None = None
    resource: str | None = None


MappingValue = TextValue | ExpressionValue | ListValue | MapValue | ScriptValue


@dataclass(frozen=True)
class Parameter:
    name: str
    value: MappingValue
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class InputOutput:
    inputs: tuple[Parameter, ...] = ()
    outputs: tuple[Parameter, ...] = ()


def scripts_in(value: MappingValue) -> list[ScriptValue]:
    """Every script inside `value`, at any depth."""
    if isinstance(value, ScriptValue):
        return [value]
    if isinstance(value, ListValue):
        return [script for item in value.items for script in scripts_in(item)]
    if isinstance(value, MapValue):
        return [script for _, item in value.entries for script in scripts_in(item)]
    return []


_JAVASCRIPT = frozenset({"javascript", "ecmascript", "js"})


def script_problem(script: ScriptValue) -> str | None:
    """Why a script mapping cannot be deployed, or None. An inline JavaScript mapping runs in the
    isolate of engine/scripting.py; other languages and script files are refused."""
    if script.language.strip().lower() not in _JAVASCRIPT:
        return (
            f"a camunda:script in {script.language or 'no scriptFormat'} cannot run in an "
            'input/output mapping; port it to JavaScript (scriptFormat="javascript") or write '
            "the value as a ${...} expression"
        )
    if script.source is None or not script.source.strip():
        return (
            "a camunda:script mapping read from camunda:resource is not supported; write the "
            "script inline"
        )
    return None


def evaluate(
    value: MappingValue, variables: Mapping[str, Any], context: ExpressionContext | None = None
) -> Any:
    """The value of a parameter, computed with `variables` (those visible where it is
    evaluated) and `context` (the execution, the clock: see engine/language/expression_context.py).
    Raises ExpressionError when an expression fails."""
    if isinstance(value, TextValue):
        return value.text
    if isinstance(value, ExpressionValue):
        return value.expression.evaluate(variables, context)
    if isinstance(value, ListValue):
        return [evaluate(item, variables, context) for item in value.items]
    if isinstance(value, MapValue):
        result: dict[str, Any] = {}
        for key, item in value.entries:
            name = key if isinstance(key, str) else key.evaluate(variables, context)
            if not isinstance(name, str):
                source = key if isinstance(key, str) else key.source
                raise ExpressionError(
                    f"a map key must be a text, {source} gave {type(name).__name__}",
                    expression=source,
                )
            result[name] = evaluate(item, variables, context)
        return result
    problem = script_problem(value)
    if problem is not None or value.source is None:
        raise ExpressionError(problem or "the script mapping has no source")
    return scripting.evaluate(value.source, variables, where="script mapping")


def from_python(value: Any) -> MappingValue:
    """A parameter value given in Python (the builder): a str (constant text, one `${...}` or a
    composite text), None, a list or a dict of such values."""
    if value is None:
        return TextValue(None)
    if isinstance(value, str):
        compiled = compile_text(value, ACTS_ON_EXECUTION)
        return TextValue(value) if isinstance(compiled, str) else ExpressionValue(compiled)
    if isinstance(value, list | tuple):
        return ListValue(tuple(from_python(item) for item in value))
    if isinstance(value, dict):
        return MapValue(tuple((str(key), from_python(item)) for key, item in value.items()))
    raise TypeError(f"a mapping value is a str, None, a list or a dict, not {type(value).__name__}")
