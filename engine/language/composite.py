"""Composite expressions: text mixed with `${...}` (or `#{...}`) parts, as JUEL reads them.

Camunda evaluates most model attributes as JUEL "composite" expressions: `Review ${loopCounter}`,
`kermit_${loopCounter}`, `order-${orderId}`. Each `${...}` part is one expression of
engine/language/expressions.py (compiled once, never `eval`-ed), and the text evaluates to the
parts joined, each value turned into text as JUEL coerces to String: null is the empty string,
a boolean `true`/`false`, an integer its digits (`3`, never `3.0`), any other number as Java
prints a double (`2.5`, `3.0`), a date its ISO 8601 text, a list or map its JSON text.

A text that is exactly one `${...}` is that expression and keeps its value's type (a number stays
a number); a text with no expression is a literal. As in JUEL, a backslash before `${` or `#{`
makes it literal text (`\\${a}` is the text `${a}`), other backslashes are kept, and one
composite cannot mix `${...}` and `#{...}` parts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from engine.errors import ExpressionError
from engine.language.expression_context import ExpressionContext
from engine.language.expressions import (
    MAX_SOURCE_LENGTH,
    NO_ACTING,
    Expression,
    closing_brace,
)

MAX_COMPOSITE_LENGTH = 4 * MAX_SOURCE_LENGTH

Part = str | Expression


def as_text(value: Any) -> str:
    """A part's value as JUEL coerces it to a String."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=str, separators=(",", ":"))
    return str(value)


@dataclass(frozen=True)
class Composite:
    """Literal text and expressions, evaluated to the joined text. Equal by its source."""

    source: str
    parts: tuple[Part, ...]

    def evaluate(
        self, variables: Mapping[str, Any], context: ExpressionContext | None = None
    ) -> str:
        return "".join(
            part if isinstance(part, str) else as_text(part.evaluate(variables, context))
            for part in self.parts
        )


def _fail(text: str, problem: str) -> ExpressionError:
    shown = text if len(text) <= 200 else text[:200] + "..."
    return ExpressionError(f"{problem}: {shown}", expression=text)


def _split(text: str, acting: frozenset[str] = NO_ACTING) -> list[Part]:
    """The literal texts and expressions of `text`, by JUEL's rules for literal text."""
    parts: list[Part] = []
    literal: list[str] = []
    markers: set[str] = set()
    index, escaped = 0, False
    while index < len(text):
        char = text[index]
        starts = char in "$#" and text.startswith("{", index + 1)
        if char == "\\":
            if escaped:
                literal.append("\\")
            escaped = True
            index += 1
            continue
        if starts and not escaped:
            close = closing_brace(text[index:])
            if close is None:
                raise _fail(text, "missing closing '}'")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(Expression(text[index : index + close + 1], acting))
            markers.add(char)
            index += close + 1
            continue
        if escaped and not starts:
            literal.append("\\")
        literal.append(char)
        escaped = False
        index += 1
    if escaped:
        literal.append("\\")
    if literal:
        parts.append("".join(literal))
    if len(markers) > 1:
        raise _fail(text, "a text cannot mix ${...} and #{...} expressions")
    return parts


def has_expression(text: str) -> bool:
    """Whether `text` is more than plain literal text: it has a `${`/`#{` (or an escaped one)."""
    return "${" in text or "#{" in text


def compile_text(text: str, acting: frozenset[str] = NO_ACTING) -> str | Expression | Composite:
    """A model attribute as JUEL reads it: the text itself when it has no `${`/`#{`, one
    expression, or a composite (also a text whose only `${` is escaped: it evaluates to the
    text without the escapes); `acting` as `compile_expression` takes it. Raises
    ExpressionError naming the bad part."""
    if not has_expression(text):
        return text
    if len(text) > MAX_COMPOSITE_LENGTH:
        raise _fail(text, f"text is longer than {MAX_COMPOSITE_LENGTH} characters")
    parts = _split(text, acting)
    if len(parts) == 1 and isinstance(parts[0], Expression):
        return parts[0]
    return Composite(text, tuple(parts))


def compile_text_or_refuse(
    text: str,
    what: str,
    refuse: Callable[[str], Exception],
    acting: frozenset[str] = NO_ACTING,
) -> str | Expression | Composite:
    """`compile_text`; a problem is raised as the error `refuse` makes of "`what`: problem" (a
    model reader's or builder's refusal)."""
    try:
        return compile_text(text, acting)
    except ExpressionError as error:
        raise refuse(f"{what}: {error.message}") from None


@lru_cache(maxsize=4096)
def compiled_text(text: str) -> str | Expression | Composite:
    """`compile_text`, once per distinct text (texts come from deployed models)."""
    return compile_text(text)


def evaluate_text(
    text: str, variables: Mapping[str, Any], context: ExpressionContext | None = None
) -> Any:
    """`text` evaluated: a literal as it is, one expression to its value, a composite to text."""
    compiled = compiled_text(text)
    if isinstance(compiled, str):
        return compiled
    return compiled.evaluate(variables, context)
