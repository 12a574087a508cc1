"""The executed path of one instance in the inspector: the sequence flows taken (drawn on the
diagram, with a count when taken more than once) and visits and durations per node. Running
instances show the path so far."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from engine.model import ProcessModel
from engine.queries.instances import VisitRow
from engine.states import VisitState


@dataclass(frozen=True)
class NodeLine:
    """One visited node: how often, and how long its ended visits took."""

    node_id: str
    label: str
    visits: int
    ended: int
    average_seconds: float | None
    max_seconds: float | None


@dataclass(frozen=True)
class FlowLine:
    """One sequence flow taken, from which node to which, and how often."""

    flow_id: str
    source: str
    target: str
    count: int


def _label(model: ProcessModel, node_id: str) -> str:
    return model.node(node_id).label if model.has_node(node_id) else node_id


def _node_lines(model: ProcessModel, visits: list[VisitRow]) -> list[NodeLine]:
    """Per visited node, its visits, those ended, and their average and longest durations."""
    counts = Counter(visit.node_id for visit in visits)
    ended: dict[str, list[float]] = {}
    for visit in visits:
        if visit.ended_at is not None:
            seconds = (visit.ended_at - visit.started_at).total_seconds()
            ended.setdefault(visit.node_id, []).append(seconds)
    lines = []
    for node_id, count in counts.items():
        durations = ended.get(node_id, [])
        average = sum(durations) / len(durations) if durations else None
        lines.append(
            NodeLine(
                node_id,
                _label(model, node_id),
                count,
                len(durations),
                average,
                max(durations, default=None),
            )
        )
    return lines


def path_panel(
    model: ProcessModel,
    visits: list[VisitRow],
    taken: dict[str, int],
    node: str | None = None,
) -> dict[str, Any]:
    """What the history panel shows of the path: nodes by visits, flows by count (those into
    or out of `node` only, when the panel shows one node), from the instance's `visits` and the
    flows `taken`."""
    nodes = [line for line in _node_lines(model, visits) if node is None or line.node_id == node]
    flows = []
    for flow_id, count in taken.items():
        flow = model.flow(flow_id) if model.has_flow(flow_id) else None
        if node is not None and (flow is None or node not in (flow.source, flow.target)):
            continue
        source = _label(model, flow.source) if flow is not None else "?"
        target = _label(model, flow.target) if flow is not None else "?"
        flows.append(FlowLine(flow_id, source, target, count))
    nodes.sort(key=lambda line: (-line.visits, line.label.lower()))
    flows.sort(key=lambda line: (-line.count, line.flow_id))
    return {"path_nodes": nodes, "path_flows": flows}


def diagram_path(
    model: ProcessModel, visits: list[VisitRow], taken: dict[str, int]
) -> dict[str, Any]:
    """The diagram's part of the path: every flow taken, and the counts of those taken more
    than once (a label on the flow). An instance whose visits recorded no flow (it ran before
    visits did) shows, as before, the flows from a completed node to a visited one, uncounted."""
    if not taken and any(v.node_id != visits[0].node_id for v in visits[1:]):
        completed = {v.node_id for v in visits if v.state == VisitState.COMPLETED}
        entered = {v.node_id for v in visits}
        flows = [f.id for f in model.flows if f.source in completed and f.target in entered]
        return {"flows": flows, "flow_counts": {}}
    return {
        "flows": sorted(taken),
        "flow_counts": {flow_id: count for flow_id, count in taken.items() if count > 1},
    }
