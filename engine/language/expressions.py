"""Camunda/JUEL-style `${...}` expressions, compiled once into a small AST and never `eval`-ed.

The language is deliberately small: literals, variables, `a.b` / `a['b']` / `a[0]` over dicts and
lists, unary `- ! not empty`, arithmetic, comparisons, `&& || and or`, `c ? a : b` and
parentheses, and the calls Camunda models use: the functions `dateTime()`, `now()`, Spin's
`S()` and `JSON()`, and the methods that engine/language/expression_context.py lists by type
(`execution.getVariable('x')`, `name.startsWith('A')`, `S(order).prop('a').numberValue()`...).
Nothing reaches a Python attribute: a property of the execution or the task, and every method, is
an entry of those tables. A call to a function or a method no type allows is refused when the
expression is compiled (so when the model is deployed); one on a type that does not have it, when
it runs. So are Spin XML written literally, and acting calls (`execution.setVariable(...)`)
where the expression may not act (`acting`, given by where the model uses it).

Semantics, where JUEL leaves room or where we are stricter:
- `+ - * / % div mod` need numbers (bool is not a number); `+` also joins two strings. `/` and `div`
  always give a float; `%` and `mod` take the sign of the dividend, as in Java.
- `< > <= >=` compare two numbers, two strings or two dates; anything else (null with a
  number...) is an error.
  `==` and `!=` work on any values, and a boolean never equals a number.
- `! && || ?:` need booleans; null counts as false.
- A missing dict key, an out-of-range list index, or any access on null gives null (as JUEL does);
  an unknown top-level variable is an error.
- With a context (`ExpressionContext`), `execution` and `task` name the execution and the task
  when there is one, and `authenticatedUserId` the user (or null), before any variable of that
  name, as in Camunda. A `dateTime()` result is given to the caller as its moment.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from engine.errors import ExpressionError
from engine.language import spin
from engine.language.expression_context import (
    ACTING_METHODS,
    FUNCTIONS,
    METHOD_NAMES,
    CallFailure,
    ExpressionContext,
    call_function,
    call_method,
    execution_problem,
    read_property,
    result_value,
)

MAX_SOURCE_LENGTH = 1000
MAX_DEPTH = 50

# Two-character operators are tried first, so that "<=" is not read as "<" followed by "=".
_TWO_CHAR_OPERATORS = ("&&", "||", "==", "!=", "<=", ">=")
_ONE_CHAR_OPERATORS = "<>+-*/%!?:.[](),"
_WORD_OPERATORS = {
    "and": "&&",
    "or": "||",
    "not": "!",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "gt": ">",
    "le": "<=",
    "ge": ">=",
    "div": "/",
    "mod": "%",
    "empty": "empty",
}
_LITERAL_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
# Binary operators from the loosest to the tightest binding.
_PRECEDENCE = {
    op: level
    for level, ops in enumerate(["||", "&&", "== !=", "< > <= >=", "+ -", "* / %"], start=1)
    for op in ops.split()
}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_DIGITS = "0123456789"
FUNCTION_NAMES = frozenset(FUNCTIONS)


class _Failure(Exception):
    """Raised inside evaluation; `Expression.evaluate` turns it into an ExpressionError."""


@dataclass(frozen=True)
class _Scope:
    """What one evaluation reads: the variables, and the context when the caller gives one."""

    variables: Mapping[str, Any]
    context: ExpressionContext | None = None


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _truth(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise _Failure(f"expected a boolean, got {_type_name(value)}")


# --- syntax tree -------------------------------------------------------------------------------


class ExprNode:
    def evaluate(self, scope: _Scope) -> Any:
        raise NotImplementedError

    def children(self) -> tuple[ExprNode, ...]:
        return ()


@dataclass(frozen=True)
class Literal(ExprNode):
    value: Any

    def evaluate(self, scope: _Scope) -> Any:
        return self.value


@dataclass(frozen=True)
class Variable(ExprNode):
    name: str

    def evaluate(self, scope: _Scope) -> Any:
        if scope.context is not None:
            found, value = scope.context.lookup(self.name, scope.variables)
            if found:
                return value
        if self.name not in scope.variables:
            raise _Failure(f"unknown variable '{self.name}'")
        return scope.variables[self.name]


@dataclass(frozen=True)
class Member(ExprNode):
    """`target.key` or `target[key]`: a dict key, a list index, or a listed property of the
    execution or the task; never a Python attribute."""

    target: ExprNode
    key: ExprNode

    def evaluate(self, scope: _Scope) -> Any:
        base = self.target.evaluate(scope)
        key = self.key.evaluate(scope)
        if base is None:
            return None
        if isinstance(key, str):
            handled, value = read_property(base, key)
            if handled:
                return value
        if isinstance(base, Mapping):
            try:
                return base.get(key)
            except TypeError:
                raise _Failure(f"cannot use a {_type_name(key)} as a key") from None
        if isinstance(base, (list, tuple)):
            if not isinstance(key, int) or isinstance(key, bool):
                raise _Failure(f"a list index must be an integer, got {_type_name(key)}")
            return base[key] if 0 <= key < len(base) else None
        raise _Failure(f"cannot read [{key!r}] of a {_type_name(base)}")

    def children(self) -> tuple[ExprNode, ...]:
        return (self.target, self.key)


@dataclass(frozen=True)
class Call(ExprNode):
    """`name(args)`: one of the allowed functions (`dateTime`, `now`, `S`, `JSON`)."""

    name: str
    arguments: tuple[ExprNode, ...]

    def evaluate(self, scope: _Scope) -> Any:
        values = [argument.evaluate(scope) for argument in self.arguments]
        return call_function(self.name, values, scope.context)

    def children(self) -> tuple[ExprNode, ...]:
        return self.arguments


@dataclass(frozen=True)
class MethodCall(ExprNode):
    """`target.name(args)`: a method the type of the target lists, or an error."""

    target: ExprNode
    name: str
    arguments: tuple[ExprNode, ...]

    def evaluate(self, scope: _Scope) -> Any:
        target = self.target.evaluate(scope)
        values = [argument.evaluate(scope) for argument in self.arguments]
        return call_method(target, self.name, values)

    def children(self) -> tuple[ExprNode, ...]:
        return (self.target, *self.arguments)


@dataclass(frozen=True)
class Unary(ExprNode):
    op: str
    operand: ExprNode

    def evaluate(self, scope: _Scope) -> Any:
        value = self.operand.evaluate(scope)
        if self.op == "!":
            return not _truth(value)
        if self.op == "empty":
            return value is None or (isinstance(value, (str, list, tuple, Mapping)) and not value)
        if not _is_number(value):
            raise _Failure(f"cannot negate a {_type_name(value)}")
        return -value

    def children(self) -> tuple[ExprNode, ...]:
        return (self.operand,)


@dataclass(frozen=True)
class Binary(ExprNode):
    op: str
    left: ExprNode
    right: ExprNode

    def evaluate(self, scope: _Scope) -> Any:
        left = self.left.evaluate(scope)
        right = self.right.evaluate(scope)
        try:
            return _BINARY[self.op](left, right)
        except ArithmeticError as error:
            raise _Failure(f"arithmetic error in '{self.op}': {error}") from None

    def children(self) -> tuple[ExprNode, ...]:
        return (self.left, self.right)


@dataclass(frozen=True)
class Logical(ExprNode):
    """`&&` / `||` over two or more operands, evaluated left to right with short-circuit."""

    op: str
    operands: tuple[ExprNode, ...]

    def evaluate(self, scope: _Scope) -> Any:
        stop_at = self.op == "||"
        for operand in self.operands:
            if _truth(operand.evaluate(scope)) == stop_at:
                return stop_at
        return not stop_at

    def children(self) -> tuple[ExprNode, ...]:
        return self.operands


@dataclass(frozen=True)
class Conditional(ExprNode):
    test: ExprNode
    then: ExprNode
    otherwise: ExprNode

    def evaluate(self, scope: _Scope) -> Any:
        branch = self.then if _truth(self.test.evaluate(scope)) else self.otherwise
        return branch.evaluate(scope)

    def children(self) -> tuple[ExprNode, ...]:
        return (self.test, self.then, self.otherwise)


def _numbers(op: str, left: Any, right: Any) -> None:
    if not (_is_number(left) and _is_number(right)):
        raise _Failure(f"'{op}' needs two numbers, got {_type_name(left)} and {_type_name(right)}")


def _add(left: Any, right: Any) -> Any:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if not (_is_number(left) and _is_number(right)):
        raise _Failure(
            f"'+' needs two numbers or two strings, got {_type_name(left)} and {_type_name(right)}"
        )
    return left + right


def _arithmetic(op: str, apply: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def run(left: Any, right: Any) -> Any:
        _numbers(op, left, right)
        if op in "/%" and right == 0:
            raise _Failure("division by zero")
        return apply(left, right)

    return run


def _remainder(left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int):
        result = abs(left) % abs(right)
        return -result if left < 0 else result
    return math.fmod(left, right)


def _ordering(op: str, apply: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def run(left: Any, right: Any) -> bool:
        both_numbers = _is_number(left) and _is_number(right)
        both_dates = isinstance(left, datetime) and isinstance(right, datetime)
        if both_numbers or both_dates or (isinstance(left, str) and isinstance(right, str)):
            return apply(left, right)
        raise _Failure(f"cannot compare {_type_name(left)} {op} {_type_name(right)}")

    return run


def _equals(left: Any, right: Any) -> bool:
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    return bool(left == right)


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": _add,
    "-": _arithmetic("-", operator.sub),
    "*": _arithmetic("*", operator.mul),
    "/": _arithmetic("/", operator.truediv),
    "%": _arithmetic("%", _remainder),
    "==": _equals,
    "!=": lambda a, b: not _equals(a, b),
    "<": _ordering("<", operator.lt),
    ">": _ordering(">", operator.gt),
    "<=": _ordering("<=", operator.le),
    ">=": _ordering(">=", operator.ge),
}


def _depth(root: ExprNode) -> int:
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children())
    return deepest


# --- tokenizer and parser ----------------------------------------------------------------------


class _Token(NamedTuple):
    kind: str  # "op", "name", "literal" or "end"
    value: Any


class _SyntaxError(Exception):
    pass


def closing_brace(text: str) -> int | None:
    """Index of the `}` that closes the `${` at the start of `text`, skipping quoted strings."""
    quote: str | None = None
    index = 2
    while index < len(text):
        char = text[index]
        if quote is not None:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "}":
            return index
        index += 1
    return None


def _tokenize(body: str) -> list[_Token]:
    tokens: list[_Token] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char.isspace():
            index += 1
        elif char in _DIGITS:
            start = index
            while index < len(body) and body[index] in _DIGITS:
                index += 1
            is_float = index + 1 < len(body) and body[index] == "." and body[index + 1] in _DIGITS
            if is_float:
                index += 1
                while index < len(body) and body[index] in _DIGITS:
                    index += 1
            if index < len(body) and body[index] in "eE":
                exponent = index + 1
                if exponent < len(body) and body[exponent] in "+-":
                    exponent += 1
                if exponent < len(body) and body[exponent] in _DIGITS:
                    is_float, index = True, exponent
                    while index < len(body) and body[index] in _DIGITS:
                        index += 1
            text = body[start:index]
            tokens.append(_Token("literal", float(text) if is_float else int(text)))
        elif char in "'\"":
            index = _read_string(body, index, tokens)
        elif char.isalpha() or char == "_":
            start = index
            while index < len(body) and (body[index].isalnum() or body[index] == "_"):
                index += 1
            word = body[start:index]
            if word in _LITERAL_WORDS:
                tokens.append(_Token("literal", _LITERAL_WORDS[word]))
            elif word in _WORD_OPERATORS:
                tokens.append(_Token("op", _WORD_OPERATORS[word]))
            elif word == "instanceof":
                raise _SyntaxError("instanceof is not supported")
            else:
                tokens.append(_Token("name", word))
        elif body.startswith("->", index):
            raise _SyntaxError("lambda expressions are not allowed")
        elif char == ";":
            raise _SyntaxError("';' is not allowed")
        elif char == "=" and not body.startswith("==", index):
            raise _SyntaxError("assignment is not allowed")
        else:
            op = body[index : index + 2]
            if op not in _TWO_CHAR_OPERATORS:
                op = char
                if op not in _ONE_CHAR_OPERATORS:
                    raise _SyntaxError(f"unexpected character {char!r}")
            tokens.append(_Token("op", op))
            index += len(op)
    tokens.append(_Token("end", None))
    _check_calls(tokens)
    return tokens


def _check_calls(tokens: list[_Token]) -> None:
    """Only the allowed functions and methods may be called: anything else is refused here,
    before the expression ever runs."""
    for index, (previous, current) in enumerate(itertools.pairwise(tokens)):
        if current != ("op", "("):
            continue
        if previous.kind == "literal" or previous in (("op", ")"), ("op", "]")):
            raise _SyntaxError(
                "only named functions and methods can be called; other calls are not allowed "
                "in expressions"
            )
        if previous.kind != "name":
            continue
        name = previous.value
        if name == "XML" or name in spin.XML_METHODS:
            raise _SyntaxError(f"{name}(): {spin.SPIN_XML}")
        if name in spin.SETTERS:
            raise _SyntaxError(f"{name}() changes a JSON node; Spin nodes are read-only here")
        if index > 0 and tokens[index - 1] == ("op", "."):
            if name not in METHOD_NAMES:
                raise _SyntaxError(
                    f"{name}() is not a method any value allows; other calls are not allowed "
                    "in expressions"
                )
        elif name not in FUNCTION_NAMES:
            functions = " and ".join(f"{f}()" for f in sorted(FUNCTION_NAMES))
            raise _SyntaxError(
                f"calls are not allowed to {name}() (the functions are {functions}); other "
                "calls are not allowed in expressions"
            )


def _read_string(body: str, index: int, tokens: list[_Token]) -> int:
    quote, chars = body[index], []
    index += 1
    while index < len(body) and body[index] != quote:
        if body[index] == "\\":
            escaped = body[index + 1] if index + 1 < len(body) else ""
            if escaped not in _ESCAPES:
                raise _SyntaxError(f"unknown escape '\\{escaped}' in a string")
            chars.append(_ESCAPES[escaped])
            index += 2
        else:
            chars.append(body[index])
            index += 1
    if index >= len(body):
        raise _SyntaxError("unterminated string")
    tokens.append(_Token("literal", "".join(chars)))
    return index + 1


def _check_name(name: str) -> str:
    if name.startswith("_"):
        raise _SyntaxError(f"names starting with '_' are not allowed ('{name}')")
    return name


class _Parser:
    """Recursive descent; binary operators by precedence climbing."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.position = 0
        self.nesting = 0

    def peek(self) -> _Token:
        return self.tokens[self.position]

    def advance(self) -> _Token:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def at(self, op: str) -> bool:
        return self.peek() == ("op", op)

    def expect(self, op: str) -> None:
        if not self.at(op):
            raise _SyntaxError(f"expected '{op}' but found {self.describe()}")
        self.advance()

    def describe(self) -> str:
        token = self.peek()
        return "end of expression" if token.kind == "end" else repr(token.value)

    def parse(self) -> ExprNode:
        node = self.ternary()
        if self.peek().kind != "end":
            raise _SyntaxError(f"unexpected {self.describe()}")
        return node

    def enter(self) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH:
            raise _SyntaxError(f"expression is nested more than {MAX_DEPTH} levels deep")

    def ternary(self) -> ExprNode:
        self.enter()
        node = self.binary(1)
        if self.at("?"):
            self.advance()
            then = self.ternary()
            self.expect(":")
            node = Conditional(node, then, self.ternary())
        self.nesting -= 1
        return node

    def binary(self, min_precedence: int) -> ExprNode:
        left = self.unary()
        while True:
            token = self.peek()
            precedence = _PRECEDENCE.get(token.value) if token.kind == "op" else None
            if precedence is None or precedence < min_precedence:
                return left
            self.advance()
            right = self.binary(precedence + 1)
            if isinstance(left, Logical) and left.op == token.value:
                left = Logical(left.op, (*left.operands, right))
            elif token.value in ("&&", "||"):
                left = Logical(token.value, (left, right))
            else:
                left = Binary(token.value, left, right)

    def unary(self) -> ExprNode:
        token = self.peek()
        if token.kind == "op" and token.value in ("-", "!", "empty"):
            self.advance()
            self.enter()
            node: ExprNode = Unary(token.value, self.unary())
            self.nesting -= 1
            return node
        return self.postfix()

    def postfix(self) -> ExprNode:
        node = self.primary()
        while True:
            if self.at("."):
                self.advance()
                token = self.advance()
                if token.kind != "name":
                    raise _SyntaxError(f"expected a property name after '.', found {token.value!r}")
                name = _check_name(token.value)
                if self.at("("):
                    node = MethodCall(node, name, self.arguments())
                else:
                    node = Member(node, Literal(name))
            elif self.at("["):
                self.advance()
                key = self.ternary()
                self.expect("]")
                if isinstance(key, Literal) and isinstance(key.value, str):
                    _check_name(key.value)
                node = Member(node, key)
            elif self.at("("):
                raise _SyntaxError("calls are not allowed in expressions")
            else:
                return node

    def arguments(self) -> tuple[ExprNode, ...]:
        """`( a, b, ... )` after a function or method name."""
        self.expect("(")
        found: list[ExprNode] = []
        if not self.at(")"):
            found.append(self.ternary())
            while self.at(","):
                self.advance()
                found.append(self.ternary())
        self.expect(")")
        return tuple(found)

    def primary(self) -> ExprNode:
        token = self.advance()
        if token.kind == "literal":
            return Literal(token.value)
        if token.kind == "name":
            name = _check_name(token.value)
            if self.at("("):
                return Call(name, self.arguments())
            return Variable(name)
        if token == ("op", "("):
            node = self.ternary()
            self.expect(")")
            return node
        self.position -= 1
        raise _SyntaxError(f"unexpected {self.describe()}")


# Who may act: the names whose acting methods (`setVariable`...) an expression may call.
NO_ACTING: frozenset[str] = frozenset()
ACTS_ON_EXECUTION = frozenset({"execution"})
ACTS_ON_TASK = frozenset({"execution", "task"})


def _compile(text: str, acting: frozenset[str] = NO_ACTING) -> ExprNode:
    if len(text) > MAX_SOURCE_LENGTH:
        raise _SyntaxError(f"expression is longer than {MAX_SOURCE_LENGTH} characters")
    if not text.startswith(("${", "#{")):
        raise _SyntaxError("an expression must be written as ${...}")
    close = closing_brace(text)
    if close is None:
        raise _SyntaxError("missing closing '}'")
    if close != len(text) - 1:
        raise _SyntaxError("text outside the expression is not allowed")
    body = text[2:close]
    if not body.strip():
        raise _SyntaxError("empty expression")
    root = _Parser(_tokenize(body)).parse()
    if _depth(root) > MAX_DEPTH:
        raise _SyntaxError(f"expression is nested more than {MAX_DEPTH} levels deep")
    _check_execution(root)
    _check_acting(root, acting)
    _check_spin(root)
    return root


def _nodes(root: ExprNode) -> list[ExprNode]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children())
    return found


def _check_acting(root: ExprNode, acting: frozenset[str]) -> None:
    """A call that changes the instance (`execution.setVariable(...)`, `task.setAssignee(...)`)
    is allowed only on `execution` or `task`, and only where the expression may act."""
    for node in _nodes(root):
        if not isinstance(node, MethodCall) or node.name not in ACTING_METHODS:
            continue
        target = node.target.name if isinstance(node.target, Variable) else None
        if target not in ("execution", "task"):
            raise _SyntaxError(
                f"{node.name}() changes the instance: call it on execution or task "
                f"(execution.{node.name}(...))"
            )
        if target not in acting:
            where = (
                "task listeners"
                if target == "task" and acting
                else "listeners, input/output parameters and service task expressions"
            )
            raise _SyntaxError(
                f"{target}.{node.name}() changes the instance; only {where} may call it"
            )


def _check_spin(root: ExprNode) -> None:
    """Spin XML written literally (`S('<order/>')`, `S(x, 'application/xml')`) is refused
    before the expression runs."""
    for node in _nodes(root):
        if isinstance(node, Call) and node.name in ("S", "JSON"):
            first, second = (*node.arguments, None, None)[:2]
            xml_text = (
                node.name == "S" and isinstance(first, Literal) and spin.is_xml_text(first.value)
            )
            xml_format = (
                isinstance(second, Literal)
                and isinstance(second.value, str)
                and second.value.strip().lower() == spin.XML_FORMAT
            )
            if xml_text or xml_format:
                raise _SyntaxError(f"{node.name}(): {spin.SPIN_XML}")


def _check_execution(root: ExprNode) -> None:
    """A property or method of `execution` that it does not have is refused before it runs."""
    for node in _nodes(root):
        problem = None
        if isinstance(node, MethodCall) and node.target == Variable("execution"):
            problem = execution_problem(node.name, called=True)
        elif (
            isinstance(node, Member)
            and node.target == Variable("execution")
            and isinstance(node.key, Literal)
            and isinstance(node.key.value, str)
        ):
            problem = execution_problem(node.key.value, called=False)
        if problem is not None:
            raise _SyntaxError(problem)


# --- public API --------------------------------------------------------------------------------


def _shorten(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."


@dataclass(frozen=True)
class Expression:
    """A compiled expression. Equal (and hashed) by its source text only."""

    source: str
    # The names whose acting methods it may call (see `ACTS_ON_EXECUTION`, `ACTS_ON_TASK`).
    acting: frozenset[str] = field(default=NO_ACTING, repr=False, compare=False)
    _root: ExprNode = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            root = _compile(self.source, self.acting)
        except _SyntaxError as error:
            message = f"{error}: {_shorten(self.source)}"
            raise ExpressionError(message, expression=self.source) from None
        object.__setattr__(self, "_root", root)

    def evaluate(
        self, variables: Mapping[str, Any], context: ExpressionContext | None = None
    ) -> Any:
        """The value over `variables`, with `context` for what Camunda's expressions reach
        beyond them (see engine/language/expression_context.py)."""
        try:
            return result_value(self._root.evaluate(_Scope(variables, context)))
        except (_Failure, CallFailure) as error:
            raise ExpressionError(f"{error} in {self.source}", expression=self.source) from None
        except RecursionError:
            message = f"value too deeply nested in {self.source}"
            raise ExpressionError(message, expression=self.source) from None

    @property
    def identifier(self) -> str | None:
        return self._root.name if isinstance(self._root, Variable) else None


def compile_expression(text: str, acting: frozenset[str] = NO_ACTING) -> Expression:
    """Compile `${...}` or `#{...}` text; raise ExpressionError naming the problem and the text.
    `acting` names what its calls may change (none, unless it is a listener's, a mapping's or a
    service task's: `ACTS_ON_EXECUTION`, `ACTS_ON_TASK`)."""
    return Expression(text, acting)


def compile_or_refuse(
    text: str,
    what: str,
    refuse: Callable[[str], Exception],
    acting: frozenset[str] = NO_ACTING,
) -> Expression:
    """Compile `text` as `compile_expression` does; a problem is raised as the error `refuse`
    makes of the message "`what`: problem" (a model reader's or builder's refusal)."""
    try:
        return Expression(text, acting)
    except ExpressionError as error:
        raise refuse(f"{what}: {error.message}") from None


def is_expression(text: str) -> bool:
    """True when `text` is exactly one `${...}` or `#{...}` (whether or not it compiles)."""
    return text.startswith(("${", "#{")) and closing_brace(text) == len(text) - 1
