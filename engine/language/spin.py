"""JSON access as Camunda Spin gives it to expressions: `S(value)`, `JSON(value)` and the nodes.

`S(order).prop("amount").numberValue()` reads a JSON value: a `Json` variable (a dict or a list
here), a JSON text (a string), or a node again. A node is a small immutable value
(`SpinJsonNode`) whose methods are listed in `METHODS`, called by the expression evaluator
through the same allowlist by exact type as every other method (never a Python attribute):

- reading: `prop(name)` (a missing property is an error, as in Spin), `hasProp(name)`,
  `elements()` (a `SpinList` of nodes, with `size()`, `get(i)`, `isEmpty()` and `[i]`),
  `fieldNames()`, `contains(value)`, `indexOf(value)`;
- values: `stringValue()`, `numberValue()`, `boolValue()` (each refuses a node of another
  type), `value()` (a string, number, boolean or null node's value);
- tests: `isNull()`, `isString()`, `isNumber()`, `isBoolean()`, `isArray()`, `isObject()`,
  `isValue()`;
- `toString()`: the node as compact JSON text.

Nodes are read-only: Spin's setters (`prop(name, value)`, `deleteProp`, `append`...) are refused.
XML is not supported: `XML(...)`, `S` of a text starting with `<`, and XML methods such as
`xPath` are refused with a message naming Spin XML (at deployment when the expression says so
literally, else when it runs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import BadRequest
from engine.language.json_input import JsonSyntaxError, loads

SPIN_XML = (
    "Spin XML is not supported by this engine; only JSON values can be read with S() or JSON()"
)
# Spin's XML API: a call to one of these is refused as Spin XML.
XML_METHODS = frozenset(
    {
        "xPath",
        "childElement",
        "childElements",
        "attr",
        "attrs",
        "attrNames",
        "hasAttr",
        "textContent",
        "element",
        "elementList",
    }  # fmt: skip
)
# Spin's setters of JSON nodes: nodes are read-only here.
SETTERS = frozenset(
    {
        "deleteProp",
        "append",
        "insertAt",
        "insertBefore",
        "insertAfter",
        "remove",
        "removeLast",
        "removeAt",
        "propList",
    }  # fmt: skip
)
JSON_FORMAT = "application/json"
XML_FORMAT = "application/xml"


class SpinFailure(Exception):
    """A Spin call that cannot be done; the evaluator names the expression."""


def _kind(value: Any) -> str:
    """The node's type as Spin names it (Jackson's node types)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, (int, float)):
        return "NUMBER"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, (list, tuple)):
        return "ARRAY"
    return "OBJECT"


@dataclass(frozen=True)
class SpinJsonNode:
    """One JSON value (a dict, a list, a string, a number, a boolean or None), read-only."""

    value: Any

    def text(self) -> str:
        return json.dumps(self.value, separators=(",", ":"), ensure_ascii=False, default=str)


class SpinList(tuple[SpinJsonNode, ...]):
    """What `elements()` gives: the array's nodes, in order."""

    __slots__ = ()


def is_xml_text(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip().startswith("<")


def read(value: Any, function: str = "S", data_format: Any = None) -> SpinJsonNode:
    """`S(value)` / `JSON(value)`: a node over a JSON value, a JSON text or a node."""
    if data_format is not None:
        if not isinstance(data_format, str):
            raise SpinFailure("takes a data format name as its second argument")
        if data_format.strip().lower() == XML_FORMAT:
            raise SpinFailure(SPIN_XML)
        if data_format.strip().lower() != JSON_FORMAT:
            raise SpinFailure(f"unknown data format '{data_format}'; only '{JSON_FORMAT}' is")
    if isinstance(value, SpinJsonNode):
        return value
    if value is None:
        raise SpinFailure("needs a value, got null")
    if isinstance(value, str):
        if function == "S" and is_xml_text(value):
            raise SpinFailure(SPIN_XML)
        try:
            return SpinJsonNode(loads(value))
        except (JsonSyntaxError, BadRequest) as error:
            raise SpinFailure(f"cannot read the text as JSON: {error}") from None
    if isinstance(value, SpinList):
        return SpinJsonNode([node.value for node in value])
    if isinstance(value, (bool, int, float, dict, list, tuple)):
        return SpinJsonNode(value)
    raise SpinFailure(f"cannot read a {type(value).__name__} as JSON")


def plain(value: Any) -> Any:
    """A node (or a list of nodes) as the JSON value it holds; any other value as it is."""
    if isinstance(value, SpinJsonNode):
        return value.value
    if isinstance(value, SpinList):
        return [node.value for node in value]
    return value


def _expected(node: SpinJsonNode, wanted: str) -> SpinFailure:
    return SpinFailure(f"expected a {wanted} node, got {_kind(node.value)}")


def _name(name: Any, method: str) -> str:
    if not isinstance(name, str):
        raise SpinFailure(f"{method}() needs a property name (a string)")
    return name


def _prop(node: SpinJsonNode, name: Any, *new: Any) -> SpinJsonNode:
    if new:
        raise SpinFailure("prop(name, value) changes a JSON node; nodes are read-only here")
    key = _name(name, "prop")
    if not isinstance(node.value, Mapping):
        raise SpinFailure(f"cannot read property '{key}' of a {_kind(node.value)} node")
    if key not in node.value:
        raise SpinFailure(f"unable to find property '{key}'")
    return SpinJsonNode(node.value[key])


def _has_prop(node: SpinJsonNode, name: Any) -> bool:
    return isinstance(node.value, Mapping) and _name(name, "hasProp") in node.value


def _elements(node: SpinJsonNode) -> SpinList:
    if not isinstance(node.value, (list, tuple)):
        raise _expected(node, "ARRAY")
    return SpinList(SpinJsonNode(item) for item in node.value)


def _field_names(node: SpinJsonNode) -> list[str]:
    if isinstance(node.value, Mapping):
        return [str(key) for key in node.value]
    if isinstance(node.value, (list, tuple)):
        return []
    raise _expected(node, "ARRAY or OBJECT")


def _same(left: Any, right: Any) -> bool:
    """JSON equality: a boolean never equals a number."""
    if isinstance(left, bool) != isinstance(right, bool):
        return False
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(_same, left, right))
    return bool(left == right)


def _index_of(node: SpinJsonNode, wanted: Any) -> int:
    if not isinstance(node.value, (list, tuple)):
        raise _expected(node, "ARRAY")
    target = plain(wanted)
    for index, item in enumerate(node.value):
        if _same(item, target):
            return index
    raise SpinFailure(f"unable to find {json.dumps(target, default=str)} in the array")


def _contains(node: SpinJsonNode, wanted: Any) -> bool:
    if not isinstance(node.value, (list, tuple)):
        raise _expected(node, "ARRAY")
    target = plain(wanted)
    return any(_same(item, target) for item in node.value)


def _typed(test: Callable[[Any], bool], wanted: str) -> Callable[[SpinJsonNode], Any]:
    def value_of(node: SpinJsonNode) -> Any:
        if not test(node.value):
            raise _expected(node, wanted)
        return node.value

    return value_of


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_value(value: Any) -> bool:
    return not isinstance(value, (Mapping, list, tuple))


def _list_get(items: SpinList, index: Any) -> SpinJsonNode:
    if not isinstance(index, int) or isinstance(index, bool):
        raise SpinFailure("get() needs an integer index")
    if not 0 <= index < len(items):
        raise SpinFailure(f"index {index} is out of range for a list of {len(items)}")
    return items[index]


# A method: (the fewest arguments, the most, the function of the node and the arguments).
Method = tuple[int, int, Callable[..., Any]]

NODE_METHODS: dict[str, Method] = {
    "prop": (1, 2, _prop),
    "hasProp": (1, 1, _has_prop),
    "elements": (0, 0, _elements),
    "fieldNames": (0, 0, _field_names),
    "contains": (1, 1, _contains),
    "indexOf": (1, 1, _index_of),
    "stringValue": (0, 0, _typed(lambda v: isinstance(v, str), "STRING")),
    "numberValue": (0, 0, _typed(_is_number, "NUMBER")),
    "boolValue": (0, 0, _typed(lambda v: isinstance(v, bool), "BOOLEAN")),
    "value": (0, 0, _typed(_is_value, "STRING, NUMBER, BOOLEAN or NULL")),
    "isNull": (0, 0, lambda node: node.value is None),
    "isString": (0, 0, lambda node: isinstance(node.value, str)),
    "isNumber": (0, 0, lambda node: _is_number(node.value)),
    "isBoolean": (0, 0, lambda node: isinstance(node.value, bool)),
    "isArray": (0, 0, lambda node: isinstance(node.value, (list, tuple))),
    "isObject": (0, 0, lambda node: isinstance(node.value, Mapping)),
    "isValue": (0, 0, lambda node: _is_value(node.value)),
    "toString": (0, 0, SpinJsonNode.text),
}
LIST_METHODS: dict[str, Method] = {
    "size": (0, 0, len),
    "get": (1, 1, _list_get),
    "isEmpty": (0, 0, lambda items: not items),
}


def _on_plain(method: Method) -> Method:
    """A node's method called on the JSON value itself (a `Json` variable, as Camunda gives it
    to expressions already as a node: `order.prop('amount')`)."""
    fewest, most, function = method
    return fewest, most, lambda value, *arguments: function(SpinJsonNode(value), *arguments)


# Node methods callable on a JSON object or array value directly. `contains` and `isEmpty` are
# left out: they are not Spin's on a list or a map in Camunda either.
PLAIN_METHODS: dict[str, Method] = {
    name: _on_plain(method)
    for name, method in NODE_METHODS.items()
    if name not in ("contains", "indexOf")
}
