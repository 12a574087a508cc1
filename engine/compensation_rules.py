"""The structural rules of compensation, checked with the rest of `engine.model.validate`.

A compensation boundary event leads (by its association) to one isForCompensation activity of its
own scope; a compensation handler has no sequence flows; a compensation event subprocess lives in
an embedded subprocess (one per subprocess, and not beside a compensation boundary event on that
subprocess); a throw event's activityRef names an activity of the scope it compensates.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.errors import ModelError
from engine.model import (
    ACTIVITY_TYPES,
    BoundaryEvent,
    EndEvent,
    IntermediateThrowEvent,
    Node,
    ProcessModel,
    StartEvent,
    SubProcess,
)

_Fail = Callable[[str, str, "int | None"], ModelError]


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


def validate_compensation(model: ProcessModel, fail: _Fail) -> None:
    for node in model.nodes:
        if node.is_for_compensation:
            _handler(node, fail)
        if isinstance(node, BoundaryEvent) and node.is_compensation:
            _boundary(model, node, fail)
        if isinstance(node, StartEvent) and node.is_compensation:
            _start(model, node, fail)
        if isinstance(node, IntermediateThrowEvent | EndEvent) and node.compensation is not None:
            _throw(model, node, fail)


def _handler(node: Node, fail: _Fail) -> None:
    if not isinstance(node, ACTIVITY_TYPES) or (
        isinstance(node, SubProcess) and node.triggered_by_event
    ):
        message = "only a task or an embedded subprocess can be for compensation"
        raise fail(message, node.id, node.line)
    if node.incoming or node.outgoing:
        message = "a compensation handler (isForCompensation) cannot have sequence flows"
        raise fail(message, node.id, node.line)


def _boundary(model: ProcessModel, node: BoundaryEvent, fail: _Fail) -> None:
    if node.outgoing:
        raise fail("a compensation boundary event cannot have outgoing flows", node.id, node.line)
    others = [b for b in model.boundary_events(node.attached_to) if b.is_compensation]
    if len(others) > 1:
        message = "an activity can have at most one compensation boundary event"
        raise fail(message, others[1].id, others[1].line)
    if node.compensate_handler is None:
        message = (
            "a compensation boundary event needs an association to its compensation handler "
            '(an activity with isForCompensation="true")'
        )
        raise fail(message, node.id, node.line)
    handler = model._nodes_by_id.get(node.compensate_handler)
    if handler is None or not handler.is_for_compensation:
        message = (
            f"the compensation handler '{node.compensate_handler}' must be an activity with "
            'isForCompensation="true"'
        )
        raise fail(message, node.id, node.line)
    if handler.parent != node.parent:
        message = "a compensation handler must be in the same scope as its boundary event"
        raise fail(message, node.id, node.line)


def _start(model: ProcessModel, node: StartEvent, fail: _Fail) -> None:
    scope = model.node(node.parent) if node.parent is not None else None
    if not isinstance(scope, SubProcess) or not scope.triggered_by_event:
        message = "a compensation start event belongs in an event subprocess"
        raise fail(message, node.id, node.line)
    outer = model.node(scope.parent) if scope.parent is not None else None
    if not isinstance(outer, SubProcess) or outer.triggered_by_event:
        message = (
            "a compensation event subprocess belongs in an embedded subprocess, not at process "
            "level or in another event subprocess"
        )
        raise fail(message, scope.id, scope.line)
    if compensation_start(model, outer) is not node:
        message = "a subprocess can have at most one compensation event subprocess"
        raise fail(message, scope.id, scope.line)
    if compensation_boundary(model, outer.id) is not None:
        message = (
            f"subprocess '{outer.id}' cannot have both a compensation event subprocess and a "
            "compensation boundary event"
        )
        raise fail(message, scope.id, scope.line)


def _throw(model: ProcessModel, node: IntermediateThrowEvent | EndEvent, fail: _Fail) -> None:
    assert node.compensation is not None
    ref = node.compensation.activity_ref
    if ref is None:
        return
    scope = compensated_scope(model, node)
    target = model._nodes_by_id.get(ref)
    if (
        target is None
        or target.parent != scope
        or not isinstance(target, ACTIVITY_TYPES)
        or target.is_for_compensation
    ):
        where = "the process" if scope is None else f"scope '{scope}'"
        message = f"activityRef '{ref}' names no activity in {where}"
        raise fail(message, node.id, node.line)
