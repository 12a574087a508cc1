"""The FEEL lexer and recursive-descent parser, bounded in text length and nesting depth."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from engine.feel import nodes as n
from engine.feel.errors import FeelError

MAX_TEXT = 10_000
MAX_NESTING = 40
MAX_TREE_DEPTH = 120

KEYWORDS = {"if", "then", "else", "and", "or", "in", "between", "true", "false", "null"}
# Built-in function names with spaces, recognised as one name before an opening parenthesis.
MULTI_WORD_FUNCTIONS = (
    "years and months duration",
    "date and time",
    "string length",
    "upper case",
    "lower case",
    "starts with",
    "ends with",
)

_TOKEN = re.compile(
    r"""(?P<space>\s+)
    |(?P<number>\d+(?:\.\d+)?)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<name>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\.\.|\*\*|<=|>=|!=|[-+*/=<>()\[\]{},.:?])""",
    re.VERBOSE,
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "'": "'"}


@dataclass(frozen=True)
class Token:
    kind: str  # number | string | name | op | end
    text: str
    position: int


def tokenize(text: str) -> list[Token]:
    if len(text) > MAX_TEXT:
        raise FeelError(f"expression longer than {MAX_TEXT} characters")
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise FeelError(f"unexpected character {text[position]!r}", position)
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), position))
        position = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def _code_unit(body: str, index: int) -> int | None:
    """The code unit of a `\\uXXXX` escape starting at `index`, or None."""
    code = body[index + 2 : index + 6]
    if body[index : index + 2] == "\\u" and re.fullmatch(r"[0-9A-Fa-f]{4}", code):
        return int(code, 16)
    return None


def _unescape(token: Token) -> str:
    """A string literal's value. `\\uXXXX` escapes of a surrogate pair make one character; a
    lone surrogate or a NUL character is refused, as no text column can hold either."""
    body = token.text[1:-1]
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            escaped = body[index + 1]
            unit = _code_unit(body, index)
            if unit is not None:
                low = _code_unit(body, index + 6) if 0xD800 <= unit < 0xDC00 else None
                if low is not None and 0xDC00 <= low < 0xE000:
                    out.append(chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)))
                    index += 12
                    continue
                if 0xD800 <= unit < 0xE000:
                    raise FeelError("a lone surrogate escape", token.position + index + 1)
                if unit == 0:
                    raise FeelError("a NUL character escape", token.position + index + 1)
                out.append(chr(unit))
                index += 6
                continue
            if escaped not in _ESCAPES:
                raise FeelError(f"unknown escape \\{escaped}", token.position + index + 1)
            out.append(_ESCAPES[escaped])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


class TooComplex(FeelError):
    """A text whose parse would backtrack without bound; never caught by backtracking."""


def _depth(node: n.Node) -> int:
    return getattr(node, "_depth", 1)


def size(node: n.Node) -> int:
    """How many nodes the tree under `node` has (what evaluating it once costs at most)."""
    return getattr(node, "_size", 1)


class Parser:
    def __init__(self, text: str, *, allow_input: bool) -> None:
        self.tokens = tokenize(text)
        self.index = 0
        self.nesting = 0
        self.allow_input = allow_input
        self.uses_input = False
        self.range_end = False
        # Backtracking (ranges against parenthesised expressions) is bounded by a step budget.
        self.steps = 0
        self.budget = 20 * len(self.tokens) + 200

    # -- token helpers -------------------------------------------------------------------------
    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def at(self, text: str) -> bool:
        token = self.token
        return token.kind in ("op", "name") and token.text == text

    def advance(self) -> Token:
        token = self.token
        self.steps += 1
        if self.steps > self.budget:
            raise TooComplex("expression too complex to parse", token.position)
        if token.kind != "end":
            self.index += 1
        return token

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise FeelError(f"expected {text!r} but found {self.describe()}", self.token.position)
        return self.advance()

    def describe(self) -> str:
        return "end of text" if self.token.kind == "end" else repr(self.token.text)

    def finish(self) -> None:
        if self.token.kind != "end":
            raise FeelError(f"unexpected {self.describe()}", self.token.position)

    def make(self, node: n.Node, *children: n.Node) -> n.Node:
        depth = 1 + max((_depth(child) for child in children), default=0)
        if depth > MAX_TREE_DEPTH:
            raise FeelError(f"expression nested deeper than {MAX_TREE_DEPTH}", node.position)
        object.__setattr__(node, "_depth", depth)
        object.__setattr__(node, "_size", 1 + sum(size(child) for child in children))
        return node

    # -- expressions ---------------------------------------------------------------------------
    def expression(self) -> n.Node:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise FeelError(f"expression nested deeper than {MAX_NESTING}", self.token.position)
        try:
            if self.at("if"):
                start = self.advance().position
                condition = self.expression()
                self.expect("then")
                then = self.expression()
                self.expect("else")
                otherwise = self.expression()
                return self.make(
                    n.If(start, condition, then, otherwise), condition, then, otherwise
                )
            return self.disjunction()
        finally:
            self.nesting -= 1

    def disjunction(self) -> n.Node:
        return self.chain(("or",), self.conjunction, n.Logical)

    def conjunction(self) -> n.Node:
        return self.chain(("and",), self.comparison, n.Logical)

    def chain(
        self,
        operators: tuple[str, ...],
        operand: Callable[[], n.Node],
        kind: type[n.Binary] | type[n.Logical] = n.Binary,
    ) -> n.Node:
        """One or more `operand`s joined by any of `operators`, grouped from the left."""
        node = operand()
        while self.token.kind in ("op", "name") and self.token.text in operators:
            token = self.advance()
            right = operand()
            node = self.make(kind(token.position, token.text, node, right), node, right)
        return node

    def comparison(self) -> n.Node:
        node = self.additive()
        token = self.token
        if token.kind == "op" and token.text in ("=", "!=", "<", "<=", ">", ">="):
            self.advance()
            right = self.additive()
            return self.make(n.Binary(token.position, token.text, node, right), node, right)
        if self.at("between"):
            self.advance()
            low = self.additive()
            self.expect("and")
            high = self.additive()
            return self.make(n.Between(token.position, node, low, high), node, low, high)
        if self.at("in"):
            self.advance()
            test = self.in_test()
            return self.make(n.In(token.position, node, test), node, test)
        return node

    def in_test(self) -> n.Node:
        """After `in`: one positive unary test, or a parenthesised list of them."""
        if not self.at("("):
            return self.positive_test()
        saved = (self.index, self.nesting, self.uses_input)
        try:
            return self.positive_test()
        except TooComplex:
            raise
        except FeelError:
            self.index, self.nesting, self.uses_input = saved
            return self.positive_tests(closing=")")

    def additive(self) -> n.Node:
        return self.chain(("+", "-"), self.multiplicative)

    def multiplicative(self) -> n.Node:
        return self.chain(("*", "/"), self.power)

    def power(self) -> n.Node:
        return self.chain(("**",), self.unary)

    def unary(self) -> n.Node:
        signs: list[int] = []
        while self.at("-"):
            signs.append(self.advance().position)
        node = self.postfix()
        for position in reversed(signs):
            node = self.make(n.Negate(position, node), node)
        return node

    def postfix(self) -> n.Node:
        node = self.primary()
        while True:
            if self.at("."):
                position = self.advance().position
                key = self.name_token()
                node = self.make(n.Path(position, node, key), node)
            elif self.at("[") and not self.range_end:
                position = self.advance().position
                condition = self.expression()
                self.expect("]")
                node = self.make(n.Filter(position, node, condition), node, condition)
            else:
                return node

    def name_token(self) -> str:
        token = self.token
        if token.kind != "name":
            raise FeelError(f"expected a name but found {self.describe()}", token.position)
        if "__" in token.text:
            raise FeelError(f"name {token.text!r} is not allowed", token.position)
        self.advance()
        return token.text

    def primary(self) -> n.Node:
        token = self.token
        if token.kind == "number":
            self.advance()
            return self.make(n.Literal(token.position, Decimal(token.text)))
        if token.kind == "string":
            self.advance()
            return self.make(n.Literal(token.position, _unescape(token)))
        if token.kind == "op":
            return self.bracketed(token)
        if token.kind == "name":
            if token.text in ("true", "false"):
                self.advance()
                return self.make(n.Literal(token.position, token.text == "true"))
            if token.text == "null":
                self.advance()
                return self.make(n.Literal(token.position, None))
            function = self.function_name()
            if function is not None:
                return self.call(token.position, function)
            if token.text in KEYWORDS:
                raise FeelError(f"unexpected {token.text!r}", token.position)
            return self.make(n.Name(token.position, self.name_token()))
        raise FeelError(f"unexpected {self.describe()}", token.position)

    def bracketed(self, token: Token) -> n.Node:
        if token.text == "?":
            if not self.allow_input:
                raise FeelError("'?' is only allowed in unary tests", token.position)
            self.advance()
            self.uses_input = True
            return self.make(n.InputValue(token.position))
        if token.text == "(":
            self.advance()
            inner = self.expression()
            self.expect(")")
            return inner
        if token.text == "[":
            self.advance()
            items = self.expressions("]")
            return self.make(n.ListNode(token.position, tuple(items)), *items)
        if token.text == "{":
            self.advance()
            entries: list[tuple[str, n.Node]] = []
            while not self.at("}"):
                if entries:
                    self.expect(",")
                key_token = self.token
                key = _unescape(key_token) if key_token.kind == "string" else None
                if key is None:
                    key = self.name_token()
                else:
                    self.advance()
                self.expect(":")
                entries.append((key, self.expression()))
            self.expect("}")
            values = [value for _, value in entries]
            return self.make(n.ContextNode(token.position, tuple(entries)), *values)
        raise FeelError(f"unexpected {self.describe()}", token.position)

    def expressions(self, closing: str) -> list[n.Node]:
        """Expressions separated by commas, up to `closing` (consumed); none before it at all."""
        items: list[n.Node] = []
        if not self.at(closing):
            items.append(self.expression())
            while self.at(","):
                self.advance()
                items.append(self.expression())
        self.expect(closing)
        return items

    def function_name(self) -> str | None:
        for name in MULTI_WORD_FUNCTIONS:
            words = name.split(" ")
            if (
                all(
                    self.peek(offset).kind == "name" and self.peek(offset).text == word
                    for offset, word in enumerate(words)
                )
                and self.peek(len(words)).text == "("
            ):
                self.index += len(words)
                return name
        if self.token.kind == "name" and self.peek().text == "(" and self.token.text != "in":
            return self.advance().text
        return None

    def call(self, position: int, function: str) -> n.Node:
        from engine.feel.builtins import check_arity

        self.expect("(")
        arguments = self.expressions(")")
        check_arity(function, len(arguments), position)
        return self.make(n.Call(position, function, tuple(arguments)), *arguments)

    # -- unary tests ---------------------------------------------------------------------------
    def unary_tests(self) -> n.Node:
        start = self.token.position
        if self.at("-") and self.peek().kind == "end":
            self.advance()
            return self.make(n.Anything(start))
        if self.at("not") and self.peek().text == "(":
            self.advance()
            self.advance()
            tests = self.positive_tests(closing=")", opened=True)
            self.finish()
            assert isinstance(tests, n.TestList)
            return self.make(n.TestList(start, tests.tests, True), tests)
        tests = self.positive_tests(closing=None)
        self.finish()
        return tests

    def positive_tests(self, closing: str | None, opened: bool = False) -> n.Node:
        start = self.token.position
        if closing is not None and not opened:
            self.expect("(")
        tests = [self.positive_test()]
        while self.at(","):
            self.advance()
            tests.append(self.positive_test())
        if closing is not None:
            self.expect(closing)
        return self.make(n.TestList(start, tuple(tests), False), *tests)

    def positive_test(self) -> n.Node:
        token = self.token
        if token.kind == "op" and token.text in ("<", "<=", ">", ">=", "=", "!="):
            self.advance()
            endpoint = self.additive()
            return self.make(n.Compare(token.position, token.text, endpoint), endpoint)
        if token.kind == "op" and token.text in ("[", "]", "("):
            saved = (self.index, self.nesting, self.uses_input)
            try:
                interval = self.interval()
            except TooComplex:
                raise
            except FeelError:
                interval = None
            if interval is not None:
                return interval
            self.index, self.nesting, self.uses_input = saved
        before = self.uses_input
        self.uses_input = False
        expression = self.expression()
        uses_input = self.uses_input
        self.uses_input = before or uses_input
        return self.make(n.Equals(token.position, expression, uses_input), expression)

    def interval(self) -> n.Node | None:
        opening = self.advance()
        low = self.additive()
        if not self.at(".."):
            return None
        self.advance()
        self.range_end = True
        try:
            high = self.additive()
        finally:
            self.range_end = False
        closing = self.token
        if closing.text not in ("]", "[", ")"):
            raise FeelError(
                f"expected the end of a range but found {self.describe()}", closing.position
            )
        self.advance()
        node = n.Range(opening.position, low, high, opening.text == "[", closing.text == "]")
        return self.make(node, low, high)


def parse_expression(text: str) -> n.Node:
    parser = Parser(text, allow_input=False)
    node = parser.expression()
    parser.finish()
    return node


def parse_unary_tests(text: str) -> n.Node:
    parser = Parser(text, allow_input=True)
    if parser.token.kind == "end":
        raise FeelError("empty unary test", 0)
    return parser.unary_tests()
