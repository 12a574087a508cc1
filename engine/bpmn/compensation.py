"""Compensation in BPMN files: compensateEventDefinition on boundary, start, intermediate throw and
end events, and the associations that lead compensation boundary events to their handlers.

A catching compensation event (boundary or start) ignores `activityRef` and `waitForCompletion`,
as Camunda 7 does; a throwing one reads both (`waitForCompletion` is true unless written false).
Each compensation boundary event takes its handler from the one bpmn:association whose sourceRef
it is, wherever in the process the association is drawn.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.bpmn.reading import BPMN_NS, Context, Element, definition_children, local_name
from engine.model import BoundaryEvent, CompensateThrow, Node

COMPENSATE = "compensateEventDefinition"
_CATCHING = ("boundaryEvent", "startEvent")


def compensate_trigger(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """The model fields of the compensateEventDefinition `definition` of the event `event_id`."""
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    if local_name(definition.getparent()) in _CATCHING:
        return {"is_compensation": True}
    return {
        "compensation": CompensateThrow(
            activity_ref=ctx.ref(definition, "activityRef", event_id),
            wait_for_completion=ctx.boolean(definition, "waitForCompletion", default=True),
        )
    }


def link_handlers(
    process: Element, ctx: Context, nodes: list[tuple[Node, Element]]
) -> list[tuple[Node, Element]]:
    """`nodes` with each compensation boundary event's handler filled in from the associations
    of `process` (at any depth). An association from a compensation boundary event must lead to
    a flow node; a boundary event with several associations is refused."""
    by_id = {node.id: node for node, _ in nodes}
    handlers: dict[str, str] = {}
    for association in process.iter(f"{{{BPMN_NS}}}association"):
        source = ctx.ref(association, "sourceRef")
        boundary = by_id.get(source or "")
        if not isinstance(boundary, BoundaryEvent) or not boundary.is_compensation:
            continue
        target = ctx.ref(association, "targetRef")
        if target is None or target not in by_id:
            written = association.get("targetRef")
            message = f"association targetRef '{written}' names no activity of this process"
            raise ctx.error(message, association, boundary.id)
        if boundary.id in handlers:
            message = "a compensation boundary event has more than one association"
            raise ctx.error(message, association, boundary.id)
        handlers[boundary.id] = target
    linked: list[tuple[Node, Element]] = []
    for node, element in nodes:
        if isinstance(node, BoundaryEvent) and node.id in handlers:
            node = replace(node, compensate_handler=handlers[node.id])
        linked.append((node, element))
    return linked
