"""Where compensation leads in a model: the scope a throw event compensates, a subprocess's
compensation event subprocess, an activity's compensation boundary event. The semantics follow
them; `engine.model.validation` checks the rules they rely on."""

from __future__ import annotations

from engine.model import (
    BoundaryEvent,
    Node,
    ProcessModel,
    StartEvent,
    SubProcess,
)


def compensated_scope(model: ProcessModel, node: Node) -> str | None:
    """The scope whose activities a compensation throw event at `node` compensates: its own;
    inside an event subprocess, the scope around it (as in Camunda 7: an error event subprocess
    compensates its parent's activities, a compensation event subprocess its subprocess's)."""
    scope = node.parent
    if scope is None:
        return None
    container = model.node(scope)
    if isinstance(container, SubProcess) and container.triggered_by_event:
        return container.parent
    return scope


def compensation_start(model: ProcessModel, sub: SubProcess) -> StartEvent | None:
    """The compensation start event of the compensation event subprocess directly inside the
    embedded subprocess `sub`, if it has one."""
    for inner in model.event_subprocesses(sub.id):
        for node in model.children(inner.id):
            if isinstance(node, StartEvent) and node.is_compensation:
                return node
    return None


def compensation_boundary(model: ProcessModel, activity_id: str) -> BoundaryEvent | None:
    for boundary in model.boundary_events(activity_id):
        if boundary.is_compensation:
            return boundary
    return None
