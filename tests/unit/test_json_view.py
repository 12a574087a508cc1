"""JSON variables as the inspector's tree: what opens, what folds, and what is shown as text."""

from __future__ import annotations

from typing import Any

from app.console.json_view import MAX_DEPTH, MAX_NODES, JsonNode, json_tree


def tree(value: Any) -> JsonNode:
    node = json_tree(value)
    assert node is not None
    return node


def test_short_values_open_long_ones_fold_with_a_preview() -> None:
    value = {"b": [1, 2], "a": {"x": None, "y": True}, "long": list(range(11)), "s": "<t>"}
    root = tree(value)
    assert root.kind == "object" and root.open
    assert [key for key, _ in root.members] == ['"a"', '"b"', '"long"', '"s"']  # sorted keys
    members = dict(root.members)
    assert members['"a"'].open and members['"a"'].lines == 4
    assert members['"b"'].open
    assert not members['"long"'].open and members['"long"'].lines == 13
    assert members['"long"'].preview == "11 items"
    assert members['"a"'].preview == "2 keys"
    assert [(n.kind, n.text) for _, n in members['"a"'].members] == [
        ("null", "null"),
        ("boolean", "true"),
    ]
    assert (members['"s"'].kind, members['"s"'].text) == ("string", '"<t>"')
    # The value itself stays open however long, unless it has very many members.
    assert tree({"k": list(range(100))}).open
    assert not tree(list(range(31))).open
    assert tree(list(range(30))).open
    # Empty containers are leaves.
    assert not tree({}).container and tree({}).text == "{}"
    assert not tree([]).container and tree([]).text == "[]"


def test_too_large_or_too_deep_values_become_text() -> None:
    assert json_tree(list(range(MAX_NODES))) is None
    assert json_tree(list(range(MAX_NODES - 2))) is not None
    deep: Any = "end"
    for _ in range(MAX_DEPTH + 5):
        deep = {"d": deep}
    node = tree(deep)
    for _ in range(MAX_DEPTH):
        node = node.members[0][1]
    assert node.kind == "text" and '"end"' in node.text
