"""The FEEL syntax tree: plain frozen records the interpreter walks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Node:
    position: int


@dataclass(frozen=True)
class Literal(Node):
    value: Any


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class InputValue(Node):
    """The `?` of a unary test: the value under test."""


@dataclass(frozen=True)
class Negate(Node):
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    operator: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Logical(Node):
    operator: str  # "and" | "or"
    left: Node
    right: Node


@dataclass(frozen=True)
class If(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True)
class Path(Node):
    target: Node
    key: str


@dataclass(frozen=True)
class Filter(Node):
    target: Node
    condition: Node


@dataclass(frozen=True)
class ListNode(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class ContextNode(Node):
    entries: tuple[tuple[str, Node], ...]


@dataclass(frozen=True)
class Call(Node):
    function: str
    arguments: tuple[Node, ...]


@dataclass(frozen=True)
class Between(Node):
    value: Node
    low: Node
    high: Node


@dataclass(frozen=True)
class Range(Node):
    low: Node
    high: Node
    low_closed: bool
    high_closed: bool


@dataclass(frozen=True)
class Compare(Node):
    """A unary comparison such as `< 10`, applied to the value under test."""

    operator: str
    endpoint: Node


@dataclass(frozen=True)
class Equals(Node):
    """A unary test that is a plain expression: equality, list membership, or a `?` predicate."""

    expression: Node
    uses_input: bool


@dataclass(frozen=True)
class Anything(Node):
    pass


@dataclass(frozen=True)
class TestList(Node):
    tests: tuple[Node, ...]
    negated: bool


@dataclass(frozen=True)
class In(Node):
    value: Node
    test: Node
