"""The graph a diagram is laid out from (engine/bpmn/layout.py, engine/bpmn/layers.py): the flow
nodes of a scope as items with a shape, the flows between them as links, expanded subprocesses as
scopes of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Shape(StrEnum):
    EVENT = "event"
    GATEWAY = "gateway"
    TASK = "task"
    CONTAINER = "container"


@dataclass
class Item:
    """A flow node of a scope. `inner` is the content of an expanded subprocess; `attached_to`
    names the host of a boundary event; `event_subprocess` puts it under its scope's graph."""

    id: str
    shape: Shape
    name: str | None = None
    inner: Scope | None = None
    attached_to: str | None = None
    event_subprocess: bool = False


@dataclass
class Link:
    """A sequence flow (or an association drawn like one) between two items of one scope."""

    id: str
    source: str
    target: str
    name: str | None = None


@dataclass
class Scope:
    items: list[Item] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
