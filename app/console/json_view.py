"""JSON values as the inspector shows them: a tree of collapsible objects and arrays, rendered by
templates/_json.html (autoescaped, no script builds it). The value itself is open, so its keys
show, unless it has many members; an object or array inside it is open when its pretty-printed
text is short, collapsed with a preview ("{ 3 keys }") when long. A value too large or too deep
for a tree is shown as pretty-printed text instead."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# A nested object or array opens by itself when its pretty-printed form has at most this many
# lines; the value itself when it has at most this many members.
OPEN_LINES = 12
OPEN_MEMBERS_ROOT = 30
# Beyond these the value is shown as text: a tree of that size helps nobody and costs the page.
MAX_NODES = 2_000
MAX_DEPTH = 16


@dataclass
class JsonNode:
    """One value of the tree. `kind`: object, array, string, number, boolean, null, or text (a
    subtree too deep, pretty-printed). A container has `members` (key or None, node)."""

    kind: str
    text: str = ""
    members: list[tuple[str | None, JsonNode]] = field(default_factory=list)
    lines: int = 1
    open: bool = True

    @property
    def container(self) -> bool:
        return self.kind in ("object", "array") and bool(self.members)

    @property
    def brackets(self) -> tuple[str, str]:
        return ("{", "}") if self.kind == "object" else ("[", "]")

    @property
    def preview(self) -> str:
        count = len(self.members)
        noun = ("key" if self.kind == "object" else "item") + ("" if count == 1 else "s")
        return f"{count} {noun}"


class _TooLarge(Exception):
    pass


def _scalar(value: Any) -> JsonNode:
    if value is None:
        return JsonNode("null", "null")
    if isinstance(value, bool):
        return JsonNode("boolean", "true" if value else "false")
    if isinstance(value, int | float):
        return JsonNode("number", json.dumps(value))
    return JsonNode("string", json.dumps(str(value), ensure_ascii=False))


def _build(value: Any, depth: int, budget: list[int]) -> JsonNode:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
        return JsonNode("text", text, lines=text.count("\n") + 1, open=False)
    if isinstance(value, dict):
        members: list[tuple[str | None, JsonNode]] = [
            (json.dumps(str(k), ensure_ascii=False), _build(value[k], depth + 1, budget))
            for k in sorted(value)
        ]
        node = JsonNode("object", "{}", members)
    elif isinstance(value, list):
        members = [(None, _build(item, depth + 1, budget)) for item in value]
        node = JsonNode("array", "[]", members)
    else:
        return _scalar(value)
    if node.members:
        node.lines = 2 + sum(child.lines for _, child in node.members)
        if depth == 0:
            node.open = len(node.members) <= OPEN_MEMBERS_ROOT
        else:
            node.open = node.lines <= OPEN_LINES
    return node


def json_tree(value: Any) -> JsonNode | None:
    """The tree of `value`; None when it is too large for one (the page shows text)."""
    try:
        return _build(value, 0, [MAX_NODES])
    except _TooLarge:
        return None
