"""A layered, left-to-right layout of a process graph: where each shape, label and edge goes.

The columns, the order within them and the heights come from engine/bpmn/layers.py (columns by
longest path once loops are set aside, barycenter sweeps against crossings, each column placed as
close to its neighbours' heights as order and spacing allow). Expanded subprocesses are laid out
first, recursively, and sized to fit their content; event subprocesses go in a row under the
graph of their scope; boundary events sit on their host's bottom edge and their flows leave
downwards. Edges are orthogonal polylines. A task is sized for its name (`task_size`): widened to
wrap a long one in two lines, heightened so that it starts below the task-type icon.

Pure and deterministic: the same graph always gives the same coordinates (integers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.bpmn.graph import Item, Link, Scope, Shape
from engine.bpmn.layers import (
    H_GAP,
    V_GAP,
    Chain,
    Vertex,
    add_dummies,
    anchor,
    assign_layers,
    column_bounds,
    order,
    place,
    split_back_edges,
)

# Camunda Modeler's sizes (a task's are the least: a long name widens and heightens it).
TASK = (100.0, 80.0)
EVENT = (36.0, 36.0)
GATEWAY = (50.0, 50.0)
# The smallest expanded subprocess, and the padding around its content (its name sits on top).
CONTAINER_MIN = (350.0, 200.0)
PAD_X, PAD_TOP, PAD_BOTTOM = 30.0, 40.0, 30.0
# Around the whole diagram.
MARGIN = 40.0
# External labels of events and gateways; edges' labels.
LABEL_WIDTH = 90.0
GATEWAY_LABEL_WIDTH = 80.0
LABEL_LINE = 14.0
CHAR_WIDTH = 6.5
# A task's name as bpmn-js draws it inside the shape: wrapped at the task's width less TASK_PAD
# each side, in lines TASK_LINE apart, centred vertically. The type icon (user, gear, script...)
# takes the top-left corner down to 24 units, so the first line starts below TASK_ICON_CLEAR and
# the name stays clear of the icon. A task is widened step by step to wrap its name in two lines.
TASK_PAD = 5.0
TASK_LINE = 14.4
TASK_ICON_CLEAR = 26.0
TASK_WIDTHS = (100.0, 120.0, 140.0, 160.0)
# Widths of 12 px Arial's letters, rounded up per class so that a wrap is never under-counted.
_WIDE, _NARROW = frozenset("MW"), frozenset("iljtfrI.,;:'!| ")
# The least and the most room between the centres of boundary events on one host.
BOUNDARY_STEP = 60.0
BOUNDARY_STEP_MAX = 100.0

Point = tuple[float, float]


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    def moved(self, dx: float, dy: float) -> Box:
        return Box(self.x + dx, self.y + dy, self.w, self.h)

    def overlaps(self, other: Box) -> bool:
        return (
            self.x < other.right
            and other.x < self.right
            and self.y < other.bottom
            and other.y < self.bottom
        )

    def contains(self, other: Box) -> bool:
        return (
            self.x <= other.x
            and self.y <= other.y
            and other.right <= self.right
            and other.bottom <= self.bottom
        )


@dataclass
class Layout:
    """Coordinates of every shape, external label and edge; `expanded` lists the containers."""

    shapes: dict[str, Box] = field(default_factory=dict)
    labels: dict[str, Box] = field(default_factory=dict)
    edges: dict[str, list[Point]] = field(default_factory=dict)
    expanded: list[str] = field(default_factory=list)

    def moved(self, dx: float, dy: float) -> Layout:
        return Layout(
            shapes={k: b.moved(dx, dy) for k, b in self.shapes.items()},
            labels={k: b.moved(dx, dy) for k, b in self.labels.items()},
            edges={k: [(x + dx, y + dy) for x, y in ps] for k, ps in self.edges.items()},
            expanded=list(self.expanded),
        )

    def merge(self, other: Layout) -> None:
        self.shapes.update(other.shapes)
        self.labels.update(other.labels)
        self.edges.update(other.edges)
        self.expanded.extend(other.expanded)

    def bounds(self) -> Box:
        boxes = [*self.shapes.values(), *self.labels.values()]
        xs = [x for b in boxes for x in (b.x, b.right)]
        ys = [y for b in boxes for y in (b.y, b.bottom)]
        xs += [x for ps in self.edges.values() for x, _ in ps]
        ys += [y for ps in self.edges.values() for _, y in ps]
        if not xs:
            return Box(0, 0, 0, 0)
        return Box(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))


def label_size(text: str, wrap: float = LABEL_WIDTH) -> tuple[float, float]:
    """The box an external label of `text` needs, wrapped at `wrap`."""
    width = len(text) * CHAR_WIDTH
    lines = max(1, math.ceil(width / wrap))
    return min(wrap, width + 4), lines * LABEL_LINE


def _text_width(text: str) -> float:
    def width(char: str) -> float:
        if char in _WIDE:
            return 11.5
        if char in _NARROW:
            return 4.0
        if char in "mw":
            return 10.0
        return 8.7 if char.isupper() else 6.7

    return sum(width(char) for char in text)


def wrapped_lines(text: str, wrap: float) -> int:
    """How many lines `text` takes wrapped at `wrap` words first (a word too long for a line
    is broken)."""
    lines, line = 0, 0.0
    for word in text.split():
        size = _text_width(word)
        space = _text_width(" ") if line else 0.0
        if line and line + space + size <= wrap:
            line += space + size
            continue
        lines += 1 if line else 0
        while size > wrap:
            lines += 1
            size -= wrap
        line = size
    return lines + (1 if line else 0)


def task_size(name: str | None) -> tuple[float, float]:
    """A task's size: the least of TASK_WIDTHS that wraps `name` in two lines at most (the
    widest when none does), and tall enough for the name's lines to start below the icon."""
    if not name or not name.strip():
        return TASK
    width, lines = TASK_WIDTHS[-1], 1
    for candidate in TASK_WIDTHS:
        width, lines = candidate, wrapped_lines(name, candidate - 2 * TASK_PAD)
        if lines <= 2:
            break
    height = math.ceil((2 * TASK_ICON_CLEAR + lines * TASK_LINE) / 10) * 10.0
    return width, max(TASK[1], height)


def layout(scope: Scope) -> Layout:
    """The layout of a process's top scope, with MARGIN around it, rounded to integers."""
    result = _scope(scope)
    box = result.bounds()
    return _rounded(result.moved(MARGIN - box.x, MARGIN - box.y))


def _rounded(result: Layout) -> Layout:
    def box(b: Box) -> Box:
        return Box(round(b.x), round(b.y), round(b.w), round(b.h))

    edges: dict[str, list[Point]] = {}
    for key, points in result.edges.items():
        kept: list[Point] = []
        for x, y in points:
            point = (float(round(x)), float(round(y)))
            if kept and kept[-1] == point:
                continue
            if len(kept) > 1 and _collinear(kept[-2], kept[-1], point):
                kept[-1] = point
            else:
                kept.append(point)
        edges[key] = kept
    return Layout(
        shapes={k: box(b) for k, b in result.shapes.items()},
        labels={k: box(b) for k, b in result.labels.items()},
        edges=edges,
        expanded=result.expanded,
    )


def _collinear(a: Point, b: Point, c: Point) -> bool:
    return (a[0] == b[0] == c[0] and (a[1] - b[1]) * (b[1] - c[1]) >= 0) or (
        a[1] == b[1] == c[1] and (a[0] - b[0]) * (b[0] - c[0]) >= 0
    )


def _scope(scope: Scope) -> Layout:
    result = Layout()
    inner: dict[str, Layout] = {}
    for item in scope.items:
        if item.inner is not None:
            inner[item.id] = _scope(item.inner)
    main = [i for i in scope.items if i.attached_to is None and not i.event_subprocess]
    ids = {i.id for i in main}
    boundary: dict[str, list[Item]] = {}
    for item in scope.items:
        if item.attached_to is not None and item.attached_to in ids:
            boundary.setdefault(item.attached_to, []).append(item)
        elif item.attached_to is not None:
            main.append(item)
            ids.add(item.id)
    vertices = {
        item.id: _vertex(item, inner.get(item.id), boundary.get(item.id, [])) for item in main
    }
    host_of = {b.id: host for host, events in boundary.items() for b in events}
    links = [lk for lk in scope.links if anchor(lk.source, host_of) in ids and lk.target in ids]
    forward, back = split_back_edges(main, links, host_of)
    assign_layers(vertices, forward, host_of)
    layers, chains = add_dummies(vertices, forward, host_of)
    order(layers, chains, vertices)
    column_x = column_bounds(layers, vertices)
    place(layers, chains, vertices, host_of)
    shapes: dict[str, Box] = {}
    for key, vertex in vertices.items():
        if vertex.item is None:
            continue
        layer_left, layer_width = column_x[vertex.layer]
        x = layer_left + (layer_width - vertex.w) / 2
        box = Box(x, vertex.y - vertex.h / 2, vertex.w, vertex.h)
        shapes[key] = box
        result.shapes[key] = box
        label = _label(vertex.item, box)
        if label is not None:
            result.labels[key] = label
        if key in inner:
            result.expanded.append(key)
            content = inner[key]
            cbox = content.bounds()
            result.merge(content.moved(box.x + PAD_X - cbox.x, box.y + PAD_TOP - cbox.y))
        for index, event in enumerate(boundary.get(key, [])):
            ebox = _on_bottom_edge(box, index, len(boundary[key]))
            shapes[event.id] = ebox
            result.shapes[event.id] = ebox
            label = _boundary_label(event, ebox, box, len(boundary[key]))
            if label is not None:
                result.labels[event.id] = label
    for chain in chains:
        points = _route(chain, vertices, shapes, column_x)
        result.edges[chain.link.id] = points
        label = _edge_label(chain.link, points)
        if label is not None:
            result.labels[chain.link.id] = label
    _route_back_edges(back, vertices, shapes, host_of, column_x, result)
    _event_subprocesses(scope, inner, result)
    return result


def _vertex(item: Item, content: Layout | None, events: list[Item]) -> Vertex:
    w, h = {Shape.EVENT: EVENT, Shape.GATEWAY: GATEWAY}.get(item.shape) or task_size(item.name)
    if content is not None:
        box = content.bounds()
        w = max(CONTAINER_MIN[0], box.w + 2 * PAD_X)
        h = max(CONTAINER_MIN[1], box.h + PAD_TOP + PAD_BOTTOM)
    if len(events) > 1:
        w = max(w, BOUNDARY_STEP * len(events) + 10)
    up = down = h / 2
    if item.name and item.shape == Shape.GATEWAY:
        up += 2 + label_size(item.name, GATEWAY_LABEL_WIDTH)[1]
    elif item.name and item.shape == Shape.EVENT:
        down += 5 + label_size(item.name)[1]
    if events:
        wrap = _boundary_wrap(w, len(events))
        named = [label_size(e.name, wrap)[1] + 2 for e in events if e.name]
        down += EVENT[1] / 2 + max([0.0, *named])
    return Vertex(item.id, w, h, up, down, item)


def _label(item: Item, box: Box) -> Box | None:
    """A gateway's label above it, left of the branches leaving its top corner (the labels of
    flows go right of them); an event's under it."""
    if not item.name or item.shape in (Shape.TASK, Shape.CONTAINER):
        return None
    if item.shape == Shape.GATEWAY:
        w, h = label_size(item.name, GATEWAY_LABEL_WIDTH)
        return Box(box.cx - 4 - w, box.y - 2 - h, w, h)
    w, h = label_size(item.name)
    return Box(box.cx - w / 2, box.bottom + 5, w, h)


def _boundary_label(event: Item, box: Box, host: Box, count: int) -> Box | None:
    """Under the host, left of the flow leaving the event's bottom, narrow enough to stay clear
    of the event to its left."""
    if not event.name:
        return None
    w, h = label_size(event.name, _boundary_wrap(host.w, count))
    return Box(box.cx - 4 - w, box.bottom + 2, w, h)


def _boundary_step(host_width: float, count: int) -> float:
    return max(BOUNDARY_STEP, min(BOUNDARY_STEP_MAX, (host_width - 10) / count))


def _boundary_wrap(host_width: float, count: int) -> float:
    if count == 1:
        return GATEWAY_LABEL_WIDTH
    return min(GATEWAY_LABEL_WIDTH, _boundary_step(host_width, count) - 8)


def _on_bottom_edge(host: Box, index: int, count: int) -> Box:
    """The first event right of the host's middle, the others each a step further left."""
    w, h = EVENT
    step = _boundary_step(host.w, count)
    cx = host.cx + step * (count - 1) / 2 - index * step if count > 1 else host.x + host.w * 0.8
    cx = min(max(cx, host.x + w / 2), host.right - w / 2)
    return Box(cx - w / 2, host.bottom - h / 2, w, h)


def _edge_label(link: Link, points: list[Point]) -> Box | None:
    if not link.name or len(points) < 2:
        return None
    # Above the last horizontal run into the target, no wider than the run; or beside the
    # first segment.
    for (x1, y1), (x2, y2) in reversed(list(zip(points, points[1:], strict=False))):
        if y1 == y2 and abs(x2 - x1) >= 40:
            w, h = label_size(link.name, min(LABEL_WIDTH, abs(x2 - x1) - 10))
            return Box(min(x1, x2) + 5, y1 - h - 3, w, h)
    w, h = label_size(link.name)
    (x1, y1), (x2, y2) = points[0], points[1]
    return Box(x1 + 5, (y1 + y2) / 2 - h / 2, w, h)


# --- edges -------------------------------------------------------------------------------------


def _route(
    chain: Chain,
    vertices: dict[str, Vertex],
    shapes: dict[str, Box],
    columns: list[tuple[float, float]],
) -> list[Point]:
    """An orthogonal polyline through the chain's dummy points; a split gateway sends its
    branches out of its top or bottom corner, a join takes them in the same way."""
    path = chain.vertices
    first, last = vertices[path[0]], vertices[path[-1]]
    source = shapes[chain.link.source] if chain.from_boundary else shapes[path[0]]
    target = shapes[path[-1]]
    next_y = vertices[path[1]].y
    points: list[Point]
    if chain.from_boundary:
        points = [(source.cx, source.bottom)]
        y = max(next_y, source.bottom + V_GAP / 2)
        points.append((source.cx, y))
    elif first.item and first.item.shape == Shape.GATEWAY and not source.y < next_y < source.bottom:
        corner = source.bottom if next_y > first.y else source.y
        points = [(source.cx, corner), (source.cx, next_y)]
    else:
        points = [(source.right, first.y)]
    for index in range(1, len(path)):
        vertex = vertices[path[index]]
        x, y = points[-1]
        left = (
            shapes[path[index]].x
            if vertex.item
            else columns[vertex.layer][0] + columns[vertex.layer][1] / 2
        )
        if (
            index == len(path) - 1
            and last.item
            and last.item.shape == Shape.GATEWAY
            and not target.y < y < target.bottom
        ):
            corner = target.bottom if y > last.y else target.y
            points += [(target.cx, y), (target.cx, corner)]
            return points
        if y != vertex.y:
            before_left, before_width = columns[vertex.layer - 1]
            middle = (before_left + before_width + columns[vertex.layer][0]) / 2
            middle = max(middle, x)
            points += [(middle, y), (middle, vertex.y)]
        points.append((left, vertex.y))
    return points


def _route_back_edges(
    back: list[Link],
    vertices: dict[str, Vertex],
    shapes: dict[str, Box],
    host_of: dict[str, str],
    columns: list[tuple[float, float]],
    result: Layout,
) -> None:
    """A loop goes back under the columns it spans: out of its source's bottom (or right side,
    when something lies under the source), back into its target's bottom (or left side)."""
    lowest: dict[int, float] = {}
    bottom_of_layer: dict[int, float] = {}
    for vertex in vertices.values():
        lowest[vertex.layer] = max(lowest.get(vertex.layer, -math.inf), vertex.y + vertex.down)
        bottom_of_layer[vertex.layer] = max(bottom_of_layer.get(vertex.layer, -math.inf), vertex.y)
    for index, link in enumerate(back):
        host = anchor(link.source, host_of)
        source = shapes[link.source]
        target = shapes[link.target]
        s, t = vertices[host], vertices[link.target]
        span = range(min(s.layer, t.layer), max(s.layer, t.layer) + 1)
        floor = max(lowest[layer] for layer in span) + V_GAP / 2 + 12 * index
        if link.source != host or (host != link.target and s.y >= bottom_of_layer[s.layer]):
            start = [(source.cx, source.bottom), (source.cx, floor)]
        else:
            gx = columns[s.layer][0] + columns[s.layer][1] + H_GAP / 2 - 6 * index
            start = [(source.right, source.cy), (gx, source.cy), (gx, floor)]
        if t.y >= bottom_of_layer[t.layer]:
            end = [(target.cx, floor), (target.cx, target.bottom)]
        else:
            gx = columns[t.layer][0] - H_GAP / 2 + 6 * index
            end = [(gx, floor), (gx, target.cy), (target.x, target.cy)]
        result.edges[link.id] = start + end
        label = _edge_label(link, start + end)
        if label is not None:
            result.labels[link.id] = label


def _event_subprocesses(scope: Scope, inner: dict[str, Layout], result: Layout) -> None:
    """Event subprocesses in a row under the scope's graph."""
    box = result.bounds()
    x = box.x
    y = box.bottom + V_GAP if result.shapes else 0.0
    for item in scope.items:
        if not item.event_subprocess:
            continue
        content = inner.get(item.id, Layout())
        cbox = content.bounds()
        w = max(CONTAINER_MIN[0], cbox.w + 2 * PAD_X)
        h = max(CONTAINER_MIN[1] * 0.7, cbox.h + PAD_TOP + PAD_BOTTOM)
        shape = Box(x, y, w, h)
        result.shapes[item.id] = shape
        if item.id in inner:
            result.expanded.append(item.id)
            result.merge(content.moved(x + PAD_X - cbox.x, y + PAD_TOP - cbox.y))
        x += w + H_GAP
