"""A BPMN document's diagram layout (BPMN DI), generated when the document has none.

`generated_diagram` reads every process of the document (and its collaboration's pools and
message flows), lays each out with engine/bpmn/layout.py and returns the document with a
`bpmndi:BPMNDiagram` added: a shape per flow node (expanded subprocesses with
`isExpanded="true"`), an edge per sequence flow, external labels for events, gateways and named
flows. The document is otherwise as deployed, except that flow nodes and flows without an id get
the ids the parser gives them, so the diagram's elements carry the ids the engine reports.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.graph import Item, Link, Scope, Shape
from engine.bpmn.layout import MARGIN, Box, Layout, Point, layout
from engine.bpmn.parser import generate_ids
from engine.bpmn.reading import BPMN_NS, load_document

BPMNDI_NS = "http://www.omg.org/spec/BPMN/20100524/DI"
DC_NS = "http://www.omg.org/spec/DD/20100524/DC"
DI_NS = "http://www.omg.org/spec/DD/20100524/DI"
_DI_NSMAP = {"bpmndi": BPMNDI_NS, "dc": DC_NS, "di": DI_NS}

_EVENTS = frozenset(
    {"startEvent", "endEvent", "intermediateThrowEvent", "intermediateCatchEvent", "boundaryEvent"}
)
_GATEWAYS = frozenset(
    {
        "exclusiveGateway",
        "parallelGateway",
        "inclusiveGateway",
        "eventBasedGateway",
        "complexGateway",
    }
)
_TASKS = frozenset(
    {
        "task",
        "serviceTask",
        "userTask",
        "manualTask",
        "scriptTask",
        "sendTask",
        "receiveTask",
        "businessRuleTask",
        "callActivity",
    }
)
_CONTAINERS = frozenset({"subProcess", "transaction", "adHocSubProcess"})
# A pool's title band on its left, and the gap between pools.
POOL_BAND = 30.0
POOL_GAP = 40.0

Element = Any
log = logging.getLogger(__name__)


def _bpmn(local: str) -> str:
    return f"{{{BPMN_NS}}}{local}"


def _local(element: Element) -> str:
    return str(etree.QName(element).localname)


def _ref(value: str | None) -> str:
    return (value or "").strip().rpartition(":")[2]


def has_diagram(root: Element) -> bool:
    return root.find(f".//{{{BPMNDI_NS}}}BPMNShape") is not None


def generated_diagram(
    data: bytes | str, file: str = "<string>", first: str | None = None
) -> str | None:
    """The document with a generated diagram, or None when it has a diagram of its own (or no
    process to draw). With no collaboration each process gets a diagram of its own, process
    `first` first (a viewer shows the first)."""
    root = load_document(data, file)
    if root.tag != _bpmn("definitions") or has_diagram(root) or root.find(_bpmn("process")) is None:
        return None
    for empty in root.findall(f"{{{BPMNDI_NS}}}BPMNDiagram"):
        root.remove(empty)
    generate_ids(root)
    taken = {element.get("id") for element in root.iter(etree.Element) if element.get("id")}
    writer = _Writer(root, taken)
    processes = {p.get("id"): p for p in root.findall(_bpmn("process")) if p.get("id")}
    collaboration = root.find(_bpmn("collaboration"))
    if collaboration is not None and collaboration.get("id"):
        writer.collaboration(collaboration, processes)
    else:
        keys = sorted(processes, key=lambda key: key != first)
        for key in keys:
            plane = writer.plane(key)
            writer.write(plane, layout(read_scope(processes[key])))
    for diagram in root.findall(f"{{{BPMNDI_NS}}}BPMNDiagram"):
        etree.indent(diagram, space="  ", level=1)
        diagram.tail = "\n"
    return str(etree.tostring(root, encoding="unicode"))


def diagram_for_deployment(data: bytes | str, file: str, key: str) -> str | None:
    """`generated_diagram` for a definition being deployed; a document that cannot be laid out
    is deployed without a generated diagram (and the failure is logged)."""
    try:
        return generated_diagram(data, file, first=key)
    except Exception:
        log.warning("no diagram layout could be generated for %s (%s)", key, file, exc_info=True)
        return None


def read_scope(element: Element) -> Scope:
    """The flow nodes and sequence flows of a process or subprocess, with the associations that
    tie compensation boundary events to their handlers."""
    scope = Scope()
    nodes: set[str] = set()
    for child in element:
        if not isinstance(child.tag, str) or etree.QName(child).namespace != BPMN_NS:
            continue
        local = _local(child)
        node_id = child.get("id")
        if not node_id:
            continue
        if local in _EVENTS:
            attached = _ref(child.get("attachedToRef")) if local == "boundaryEvent" else None
            scope.items.append(Item(node_id, Shape.EVENT, child.get("name"), attached_to=attached))
        elif local in _GATEWAYS:
            scope.items.append(Item(node_id, Shape.GATEWAY, child.get("name")))
        elif local in _TASKS:
            scope.items.append(Item(node_id, Shape.TASK, child.get("name")))
        elif local in _CONTAINERS:
            by_event = (child.get("triggeredByEvent") or "").strip().lower() == "true"
            scope.items.append(
                Item(
                    node_id,
                    Shape.CONTAINER,
                    child.get("name"),
                    inner=read_scope(child),
                    event_subprocess=by_event,
                )
            )
        else:
            continue
        nodes.add(node_id)
    for child in element:
        if not isinstance(child.tag, str) or etree.QName(child).namespace != BPMN_NS:
            continue
        if _local(child) not in ("sequenceFlow", "association") or not child.get("id"):
            continue
        source, target = _ref(child.get("sourceRef")), _ref(child.get("targetRef"))
        if source in nodes and target in nodes:
            scope.links.append(Link(child.get("id"), source, target, child.get("name")))
    return scope


@dataclass
class _Pool:
    id: str
    process: str | None
    name: str | None
    content: Layout | None


class _Writer:
    def __init__(self, root: Element, taken: set[str]) -> None:
        self.root = root
        self.taken = taken

    def fresh(self, base: str) -> str:
        candidate, suffix = base, 1
        while candidate in self.taken:
            suffix += 1
            candidate = f"{base}_{suffix}"
        self.taken.add(candidate)
        return candidate

    def plane(self, element_id: str) -> Element:
        diagram = etree.SubElement(self.root, f"{{{BPMNDI_NS}}}BPMNDiagram", nsmap=_DI_NSMAP)
        diagram.set("id", self.fresh(f"BPMNDiagram_{element_id}"))
        plane = etree.SubElement(diagram, f"{{{BPMNDI_NS}}}BPMNPlane")
        plane.set("id", self.fresh(f"BPMNPlane_{element_id}"))
        plane.set("bpmnElement", element_id)
        return plane

    def shape(self, plane: Element, element_id: str, box: Box, label: Box | None = None) -> Element:
        shape = etree.SubElement(plane, f"{{{BPMNDI_NS}}}BPMNShape")
        shape.set("id", self.fresh(f"{element_id}_di"))
        shape.set("bpmnElement", element_id)
        _bounds(shape, box)
        if label is not None:
            _bounds(etree.SubElement(shape, f"{{{BPMNDI_NS}}}BPMNLabel"), label)
        return shape

    def edge(self, plane: Element, element_id: str, points: list[Point], label: Box | None) -> None:
        edge = etree.SubElement(plane, f"{{{BPMNDI_NS}}}BPMNEdge")
        edge.set("id", self.fresh(f"{element_id}_di"))
        edge.set("bpmnElement", element_id)
        for x, y in points:
            waypoint = etree.SubElement(edge, f"{{{DI_NS}}}waypoint")
            waypoint.set("x", _number(x))
            waypoint.set("y", _number(y))
        if label is not None:
            _bounds(etree.SubElement(edge, f"{{{BPMNDI_NS}}}BPMNLabel"), label)

    def write(self, plane: Element, result: Layout) -> None:
        expanded = set(result.expanded)
        for element_id, box in result.shapes.items():
            shape = self.shape(plane, element_id, box, result.labels.get(element_id))
            if element_id in expanded:
                shape.set("isExpanded", "true")
        for element_id, points in result.edges.items():
            self.edge(plane, element_id, points, result.labels.get(element_id))

    def collaboration(self, collaboration: Element, processes: dict[str, Element]) -> None:
        """Pools stacked top to bottom, equally wide, each around its process's layout; then the
        message flows, from the bottom or top of one shape to the other."""
        pools: list[_Pool] = []
        drawn: set[str] = set()
        for participant in collaboration.findall(_bpmn("participant")):
            if not participant.get("id"):
                continue
            ref = _ref(participant.get("processRef")) or None
            process = processes.get(ref) if ref else None
            content = layout(read_scope(process)) if process is not None else None
            if ref:
                drawn.add(ref)
            pools.append(_Pool(participant.get("id"), ref, participant.get("name"), content))
        width = max(
            [pool.content.bounds().right + MARGIN + POOL_BAND for pool in pools if pool.content]
            + [600.0]
        )
        plane = self.plane(collaboration.get("id"))
        boxes: dict[str, Box] = {}
        pool_of: dict[str, Box] = {}
        y = 0.0
        for pool in pools:
            height = pool.content.bounds().bottom + MARGIN if pool.content else 100.0
            box = Box(0, y, width, height)
            self.shape(plane, pool.id, box).set("isHorizontal", "true")
            boxes[pool.id] = box
            pool_of[pool.id] = box
            if pool.content is not None:
                moved = pool.content.moved(POOL_BAND, y)
                self.write(plane, moved)
                boxes.update(moved.shapes)
                pool_of.update(dict.fromkeys(moved.shapes, box))
            y += height + POOL_GAP
        for flow in collaboration.findall(_bpmn("messageFlow")):
            source_id, target_id = _ref(flow.get("sourceRef")), _ref(flow.get("targetRef"))
            source, target = boxes.get(source_id), boxes.get(target_id)
            if flow.get("id") and source is not None and target is not None:
                route = _message_route(source, target, pool_of[source_id])
                self.edge(plane, flow.get("id"), route, None)
        for key, process in processes.items():
            if key not in drawn:
                self.write(self.plane(key), layout(read_scope(process)))


def _message_route(source: Box, target: Box, pool: Box) -> list[Point]:
    """Out of the source's bottom (top), across in the gap under (over) the source's pool, into
    the target's top (bottom)."""
    if target.y >= source.bottom:
        start, end = (source.cx, source.bottom), (target.cx, target.y)
        below = target.y >= pool.bottom
        middle = pool.bottom + POOL_GAP / 2 if below else (start[1] + end[1]) / 2
    else:
        start, end = (source.cx, source.y), (target.cx, target.bottom)
        above = target.bottom <= pool.y
        middle = pool.y - POOL_GAP / 2 if above else (start[1] + end[1]) / 2
    return [start, (start[0], middle), (end[0], middle), end]


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _bounds(parent: Element, box: Box) -> None:
    bounds = etree.SubElement(parent, f"{{{DC_NS}}}Bounds")
    bounds.set("x", _number(box.x))
    bounds.set("y", _number(box.y))
    bounds.set("width", _number(box.w))
    bounds.set("height", _number(box.h))
