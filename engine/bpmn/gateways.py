"""The gateway readers: exclusive and inclusive (which may name a default flow), parallel and
event-based gateways."""

from __future__ import annotations

from collections.abc import Callable

from engine.bpmn.nodes import common_fields
from engine.bpmn.reading import (
    Context,
    Element,
    check_children,
)
from engine.model import (
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    Node,
    ParallelGateway,
)


def _gateway_with_default(
    kind: type[ExclusiveGateway] | type[InclusiveGateway],
) -> Callable[[Element, Context], Node]:
    """The parser of a gateway that may name a default flow (a reference like any other)."""

    def parse(element: Element, ctx: Context) -> Node:
        common = common_fields(element, ctx)
        check_children(element, ctx)
        return kind(**common, default_flow=ctx.ref(element, "default"))

    return parse


exclusive_gateway = _gateway_with_default(ExclusiveGateway)


inclusive_gateway = _gateway_with_default(InclusiveGateway)


def parallel_gateway(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    return ParallelGateway(**common)


def event_based_gateway(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    # An instantiating gateway starts the process by its events: not executable here.
    if ctx.boolean(element, "instantiate"):
        message = 'eventBasedGateway with instantiate="true" is not supported by this engine'
        raise ctx.error(message, element)
    kind = (element.get("eventGatewayType") or "Exclusive").strip()
    if kind != "Exclusive":
        message = (
            f'eventBasedGateway with eventGatewayType="{kind}" is not supported by this engine'
        )
        raise ctx.error(message, element)
    return EventBasedGateway(**common)
