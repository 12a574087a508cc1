"""The FEEL interpreter: walks the syntax tree the parser built, never Python's own evaluator."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from engine.feel import nodes as n
from engine.feel.budget import spend
from engine.feel.builtins import call
from engine.feel.errors import FeelError
from engine.feel.parser import size
from engine.feel.values import arithmetic, compare, equals, to_feel, type_name

_MISSING = object()
# The only attributes a path may read from a value that is not a context: a fixed list per type.
_TEMPORAL_PROPERTIES = {
    "date": ("year", "month", "day"),
    "datetime": ("year", "month", "day", "hour", "minute", "second"),
    "time": ("hour", "minute", "second"),
    "timedelta": ("days", "seconds"),
    "YearsMonths": ("months",),
}


class Scope:
    """Names visible to an expression, innermost first. A scope over a caller's variables
    converts each value to FEEL once, when first read; a scope the evaluation made (a context's
    entries, a filter's item) holds FEEL values already. `value` is the value under test (`?`)
    in the unary tests this scope belongs to."""

    def __init__(
        self,
        variables: Mapping[str, Any],
        value: Any = _MISSING,
        parent: Scope | None = None,
        *,
        feel: bool = False,
    ) -> None:
        self.variables = variables
        self.value = value
        self.parent = parent
        self.converted: dict[str, Any] | None = None if feel else {}

    def lookup(self, name: str, position: int) -> Any:
        scope: Scope | None = self
        while scope is not None:
            found = scope.variables.get(name, _MISSING)
            if found is not _MISSING:
                if scope.converted is None:
                    return found
                if name not in scope.converted:
                    scope.converted[name] = to_feel(found)
                return scope.converted[name]
            scope = scope.parent
        raise FeelError(f"no variable named {name!r}", position)

    def tested(self) -> Any:
        """The value under test (`?`) of the innermost unary test, or null outside one."""
        scope: Scope | None = self
        while scope is not None:
            if scope.value is not _MISSING:
                return scope.value
            scope = scope.parent
        return None


def _boolean(value: Any, node: n.Node) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise FeelError(f"expected a boolean but got {type_name(value)}", node.position)


def evaluate(node: n.Node, scope: Scope) -> Any:
    if isinstance(node, n.Literal):
        return node.value
    if isinstance(node, n.Name):
        return scope.lookup(node.name, node.position)
    if isinstance(node, n.InputValue):
        return scope.tested()
    if isinstance(node, n.Binary):
        left, right = evaluate(node.left, scope), evaluate(node.right, scope)
        if node.operator in ("=", "!=", "<", "<=", ">", ">="):
            return compare(node.operator, left, right, node.position)
        return arithmetic(node.operator, left, right, node.position)
    if isinstance(node, n.Negate):
        value = evaluate(node.operand, scope)
        if value is None:
            return None
        return (
            arithmetic("-", Decimal(0), value, node.position)
            if isinstance(value, Decimal)
            else arithmetic("*", value, Decimal(-1), node.position)
        )
    if isinstance(node, n.Logical):
        left = _boolean(evaluate(node.left, scope), node.left)
        right = _boolean(evaluate(node.right, scope), node.right)
        if node.operator == "and":
            if left is False or right is False:
                return False
            return True if left and right else None
        if left is True or right is True:
            return True
        return False if left is False and right is False else None
    if isinstance(node, n.If):
        condition = _boolean(evaluate(node.condition, scope), node.condition)
        return evaluate(node.then if condition else node.otherwise, scope)
    if isinstance(node, n.Path):
        return _path(evaluate(node.target, scope), node)
    if isinstance(node, n.Filter):
        return _filter(evaluate(node.target, scope), node, scope)
    if isinstance(node, n.ListNode):
        return [evaluate(item, scope) for item in node.items]
    if isinstance(node, n.ContextNode):
        context: dict[str, Any] = {}
        for key, value in node.entries:
            context[key] = evaluate(value, Scope(context, parent=scope, feel=True))
        return context
    if isinstance(node, n.Call):
        arguments = [evaluate(argument, scope) for argument in node.arguments]
        return call(node.function, arguments, node.position)
    if isinstance(node, n.Between):
        value = evaluate(node.value, scope)
        low = compare(">=", value, evaluate(node.low, scope), node.position)
        high = compare("<=", value, evaluate(node.high, scope), node.position)
        return _and(low, high)
    if isinstance(node, n.In):
        return test(node.test, evaluate(node.value, scope), scope)
    raise FeelError(f"{type(node).__name__} is not an expression", node.position)


def _and(left: bool | None, right: bool | None) -> bool | None:
    if left is False or right is False:
        return False
    return True if left and right else None


def _path(target: Any, node: n.Path) -> Any:
    if target is None:
        return None
    if isinstance(target, dict):
        return target.get(node.key)
    if isinstance(target, list):
        spend(len(target))
        return [_path(item, node) for item in target]
    properties = _TEMPORAL_PROPERTIES.get(type(target).__name__, ())
    if node.key in properties:
        return Decimal(getattr(target, node.key))
    raise FeelError(f"cannot read {node.key!r} of a {type_name(target)}", node.position)


def _filter(target: Any, node: n.Filter, scope: Scope) -> Any:
    if target is None:
        return None
    items = target if isinstance(target, list) else [target]
    # The condition runs once per item: charged up front, so filters nested in filters stop early.
    spend(len(items) * size(node.condition))
    kept = []
    for item in items:
        names = dict(item) if isinstance(item, dict) else {}
        spend(len(names))
        names["item"] = item
        outcome = evaluate(node.condition, Scope(names, parent=scope, feel=True))
        if isinstance(outcome, Decimal):
            return _index(items, outcome)
        if _boolean(outcome, node.condition):
            kept.append(item)
    return kept


def _index(items: list[Any], position: Decimal) -> Any:
    index = int(position)
    if 0 < index <= len(items):
        return items[index - 1]
    if index < 0 and -index <= len(items):
        return items[index]
    return None


def test(node: n.Node, value: Any, scope: Scope) -> bool | None:
    """A unary test against a value: True, False or null (null never matches a rule)."""
    if isinstance(node, n.Anything):
        return True
    if isinstance(node, n.TestList):
        result: bool | None = False
        for item in node.tests:
            outcome = test(item, value, scope)
            if outcome:
                result = True
                break
            if outcome is None:
                result = None
        if node.negated:
            return None if result is None else not result
        return result
    if isinstance(node, n.Compare):
        return compare(node.operator, value, evaluate(node.endpoint, scope), node.position)
    if isinstance(node, n.Range):
        low, high = evaluate(node.low, scope), evaluate(node.high, scope)
        above = compare(">=" if node.low_closed else ">", value, low, node.position)
        below = compare("<=" if node.high_closed else "<", value, high, node.position)
        return _and(above, below)
    if isinstance(node, n.Equals):
        inner = Scope({}, value, parent=scope, feel=True)
        expected = evaluate(node.expression, inner)
        if node.uses_input:
            return _boolean(expected, node)
        if isinstance(expected, list) and not isinstance(value, list):
            return any(equals(value, item, node.position) for item in expected)
        if isinstance(expected, bool) and not isinstance(value, bool) and value is not None:
            return expected
        return equals(value, expected, node.position)
    raise FeelError(f"{type(node).__name__} is not a unary test", node.position)
