"""The layered graph of one scope: columns, the order within each column, and heights.

Columns come from the longest path from the sources once the back edges a depth-first search
finds are set aside; long edges pass through one dummy vertex per column. Barycenter sweeps order
each column (the order with the fewest crossings seen is kept); each column's centres are then
placed as close to the mean of their neighbours' as order and spacing allow.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass

from engine.bpmn.graph import Item, Link

# Between columns, and between neighbours in a column.
H_GAP = 60.0
V_GAP = 40.0
# How far under its host a boundary event pulls the target of its flow.
BOUNDARY_DROP = 36.0
SWEEPS = 4
MAX_DUMMIES = 100_000


class LayoutTooLarge(ValueError):
    """The graph's long edges would need more dummy points than MAX_DUMMIES."""


@dataclass
class Vertex:
    """A node of the layered graph: an item (with its size) or a dummy point of a long edge."""

    key: str
    w: float
    h: float
    # How far the node's footprint reaches above and below its centre (labels, boundary events).
    up: float
    down: float
    item: Item | None = None
    layer: int = 0
    y: float = 0.0


@dataclass
class Chain:
    link: Link
    vertices: list[str]
    # The link leaves from a boundary event of the chain's first vertex.
    from_boundary: bool


def anchor(node: str, host_of: dict[str, str]) -> str:
    """The vertex whose place a node's flows leave from: a boundary event's host, else itself."""
    return host_of.get(node, node)


# --- layering ----------------------------------------------------------------------------------


def split_back_edges(
    items: list[Item], links: list[Link], host_of: dict[str, str]
) -> tuple[list[Link], list[Link]]:
    """The links that keep the graph acyclic, and the back edges a depth-first search finds (from
    the nodes without incoming links first, in document order)."""
    outgoing: dict[str, list[Link]] = {i.id: [] for i in items}
    has_incoming: set[str] = set()
    for link in links:
        outgoing[anchor(link.source, host_of)].append(link)
        if anchor(link.source, host_of) != link.target:
            has_incoming.add(link.target)
    roots = [i.id for i in items if i.id not in has_incoming] + [i.id for i in items]
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    back: set[str] = set()
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, index = stack[-1]
            if index < len(outgoing[node]):
                stack[-1] = (node, index + 1)
                link = outgoing[node][index]
                seen = state.get(link.target)
                if seen == 1:
                    back.add(link.id)
                elif seen is None:
                    state[link.target] = 1
                    stack.append((link.target, 0))
            else:
                state[node] = 2
                stack.pop()
    return [lk for lk in links if lk.id not in back], [lk for lk in links if lk.id in back]


def assign_layers(
    vertices: dict[str, Vertex], forward: list[Link], host_of: dict[str, str]
) -> None:
    """Longest path from the sources; a source feeding only later columns moves up to them."""
    preds: dict[str, list[str]] = {key: [] for key in vertices}
    succs: dict[str, list[str]] = {key: [] for key in vertices}
    for link in forward:
        source = anchor(link.source, host_of)
        preds[link.target].append(source)
        succs[source].append(link.target)
    remaining = {key: len(p) for key, p in preds.items()}
    ready = deque(key for key in vertices if remaining[key] == 0)
    order: list[str] = []
    while ready:
        key = ready.popleft()
        order.append(key)
        for nxt in succs[key]:
            vertices[nxt].layer = max(vertices[nxt].layer, vertices[key].layer + 1)
            remaining[nxt] -= 1
            if remaining[nxt] == 0:
                ready.append(nxt)
    for key in order:
        if not preds[key] and succs[key]:
            vertices[key].layer = max(0, min(vertices[s].layer for s in succs[key]) - 1)


def add_dummies(
    vertices: dict[str, Vertex], forward: list[Link], host_of: dict[str, str]
) -> tuple[list[list[str]], list[Chain]]:
    chains: list[Chain] = []
    dummies = 0
    for link in forward:
        source = anchor(link.source, host_of)
        path = [source]
        first, last = vertices[source].layer, vertices[link.target].layer
        for layer in range(first + 1, last):
            key = f"\0{link.id}\0{layer}"
            vertices[key] = Vertex(key, 0, 0, 0, 0, None, layer)
            path.append(key)
            dummies += 1
        if dummies > MAX_DUMMIES:
            raise LayoutTooLarge(f"more than {MAX_DUMMIES} bends")
        path.append(link.target)
        chains.append(Chain(link, path, link.source != source))
    count = 1 + max((v.layer for v in vertices.values()), default=0)
    layers: list[list[str]] = [[] for _ in range(count)]
    for key, vertex in vertices.items():
        layers[vertex.layer].append(key)
    return layers, chains


# --- ordering ----------------------------------------------------------------------------------


def _neighbours(
    chains: list[Chain],
) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[tuple[str, float]]]]:
    """Per vertex, its neighbours in the column before and after, each with a bias (flows of a
    boundary event count as leaving from under their host)."""
    up: dict[str, list[tuple[str, float]]] = {}
    down: dict[str, list[tuple[str, float]]] = {}
    for chain in chains:
        path = chain.vertices
        for index, (a, b) in enumerate(zip(path, path[1:], strict=False)):
            bias = 0.5 if index == 0 and chain.from_boundary else 0.0
            up.setdefault(b, []).append((a, bias))
            down.setdefault(a, []).append((b, -bias))
    return up, down


def order(layers: list[list[str]], chains: list[Chain], vertices: dict[str, Vertex]) -> None:
    up, down = _neighbours(chains)
    _initial_order(layers, chains)
    best = [list(layer) for layer in layers]
    fewest = _crossings(layers, down)
    for sweep in range(SWEEPS * 2):
        forward = sweep % 2 == 0
        indices = range(1, len(layers)) if forward else range(len(layers) - 2, -1, -1)
        for index in indices:
            if len(layers[index]) < 2:
                continue
            fixed = layers[index - 1] if forward else layers[index + 1]
            position = {key: i for i, key in enumerate(fixed)}
            neighbours = up if forward else down
            keyed = [
                (_barycentre(neighbours.get(key, []), position, at), at, key)
                for at, key in enumerate(layers[index])
            ]
            layers[index] = [key for _, _, key in sorted(keyed)]
        count = _crossings(layers, down)
        if count <= fewest:
            fewest, best = count, [list(layer) for layer in layers]
    layers[:] = best


def _barycentre(neighbours: list[tuple[str, float]], position: dict[str, int], at: int) -> float:
    found = [position[n] + bias for n, bias in neighbours]
    return sum(found) / len(found) if found else float(at)


def _initial_order(layers: list[list[str]], chains: list[Chain]) -> None:
    """Depth-first from the first column, following links in document order."""
    succs: dict[str, list[str]] = {}
    # Flows of boundary events after the others: their targets go under the host's.
    for chain in sorted(chains, key=lambda chain: chain.from_boundary):
        for a, b in zip(chain.vertices, chain.vertices[1:], strict=False):
            succs.setdefault(a, []).append(b)
    seen: dict[str, int] = {}
    for layer in layers:
        for root in layer:
            stack = [root]
            while stack:
                key = stack.pop()
                if key in seen:
                    continue
                seen[key] = len(seen)
                stack.extend(reversed(succs.get(key, [])))
    for layer in layers:
        layer.sort(key=lambda key: seen[key])


def _crossings(layers: list[list[str]], down: dict[str, list[tuple[str, float]]]) -> int:
    total = 0
    for upper, lower in zip(layers, layers[1:], strict=False):
        if len(upper) < 2 or len(lower) < 2:
            continue
        position = {key: i for i, key in enumerate(lower)}
        ends = [
            position[b]
            for a in upper
            for b, _ in sorted(down.get(a, []), key=lambda n: position[n[0]])
        ]
        seen: list[int] = []
        for end in ends:
            total += len(seen) - bisect_right(seen, end)
            seen.insert(bisect_right(seen, end), end)
    return total


# --- coordinates -------------------------------------------------------------------------------


def column_bounds(
    layers: list[list[str]], vertices: dict[str, Vertex]
) -> list[tuple[float, float]]:
    """Each column's left edge and width."""
    columns: list[tuple[float, float]] = []
    x = 0.0
    for layer in layers:
        width = max((vertices[key].w for key in layer), default=0.0)
        columns.append((x, width))
        x += width + H_GAP
    return columns


def place(
    layers: list[list[str]],
    chains: list[Chain],
    vertices: dict[str, Vertex],
    host_of: dict[str, str],
) -> None:
    up, down = _neighbours(chains)
    for layer in layers:
        _settle(layer, [0.0] * len(layer), vertices)

    def wanted(key: str, neighbours: dict[str, list[tuple[str, float]]]) -> float:
        found = [vertices[n].y + _drop(vertices[n], bias) for n, bias in neighbours.get(key, [])]
        return sum(found) / len(found) if found else vertices[key].y

    for _ in range(SWEEPS):
        for layer in layers[1:]:
            _settle(layer, [wanted(key, up) for key in layer], vertices)
        for layer in reversed(layers[:-1]):
            _settle(layer, [wanted(key, down) for key in layer], vertices)
    for layer in layers[1:]:
        _settle(layer, [wanted(key, up) for key in layer], vertices)
    _straighten(layers[1:], up, down, vertices)
    _straighten(layers[-2::-1], down, up, vertices)


def _straighten(
    layers: list[list[str]],
    before: dict[str, list[tuple[str, float]]],
    after: dict[str, list[tuple[str, float]]],
    vertices: dict[str, Vertex],
) -> None:
    """Put a vertex level with its one neighbour in the column before when it is that
    neighbour's one plain neighbour the other way (flows of boundary events aside) and its own
    neighbours in the column leave room; `layers` in the order to visit them."""
    for layer in layers:
        for index, key in enumerate(layer):
            linked = [n for n, bias in before.get(key, []) if bias == 0]
            if len(linked) != 1:
                continue
            source = linked[0]
            if [n for n, bias in after.get(source, []) if bias == 0] != [key]:
                continue
            vertex, y = vertices[key], vertices[source].y
            if index > 0:
                above = vertices[layer[index - 1]]
                if y - vertex.up < above.y + above.down + _gap(above, vertex):
                    continue
            if index + 1 < len(layer):
                below = vertices[layer[index + 1]]
                if y + vertex.down > below.y - below.up - _gap(vertex, below):
                    continue
            vertex.y = y


def _drop(vertex: Vertex, bias: float) -> float:
    """How far below (or, negative, above) a neighbour's centre a boundary flow pulls."""
    if bias == 0:
        return 0.0
    return math.copysign(vertex.h / 2 + V_GAP + BOUNDARY_DROP, bias)


def _settle(layer: list[str], desired: list[float], vertices: dict[str, Vertex]) -> None:
    """Centres as close to `desired` (least squares) as the order and spacing allow: an
    isotonic regression over the centres less their minimal offsets (pool adjacent violators)."""
    if len(layer) == 1:
        vertices[layer[0]].y = desired[0]
        return
    offsets: list[float] = []
    offset = 0.0
    for index, key in enumerate(layer):
        if index:
            before = vertices[layer[index - 1]]
            offset += before.down + _gap(before, vertices[key]) + vertices[key].up
        offsets.append(offset)
    blocks: list[list[float]] = []  # [sum, count]
    for target, off in zip(desired, offsets, strict=True):
        blocks.append([target - off, 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    index = 0
    for total, count in blocks:
        for _ in range(int(count)):
            key = layer[index]
            vertices[key].y = total / count + offsets[index]
            index += 1


def _gap(a: Vertex, b: Vertex) -> float:
    return V_GAP if a.item is not None and b.item is not None else V_GAP / 2
