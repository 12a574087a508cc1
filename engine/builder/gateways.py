"""Gateways: exclusive, inclusive, parallel and event-based."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, Unpack

from engine.builder.base import BuilderBase, NodeOptions
from engine.model import EventBasedGateway, ExclusiveGateway, InclusiveGateway, ParallelGateway


class Choosing(NodeOptions, total=False):
    """What an exclusive or inclusive gateway takes besides: `default`, the outgoing flow taken
    when no condition is true."""

    default: str | None


class Gateways(BuilderBase):
    def exclusive_gateway(
        self, id: str, name: str | None = None, **options: Unpack[Choosing]
    ) -> Self:
        """The first outgoing flow whose condition is true, else `default`."""
        return self._choosing(ExclusiveGateway, id, name, options)

    def inclusive_gateway(
        self, id: str, name: str | None = None, **options: Unpack[Choosing]
    ) -> Self:
        """Diverging: every outgoing flow whose condition is true, else `default`. Converging
        (several flows in): waits until no other live token of its scope can reach it."""
        return self._choosing(InclusiveGateway, id, name, options)

    def _choosing(
        self,
        kind: type[ExclusiveGateway | InclusiveGateway],
        id: str,
        name: str | None,
        options: Mapping[str, Any],
    ) -> Self:
        rest = {key: value for key, value in options.items() if key != "default"}
        return self._node(kind, id, name, rest, default_flow=options.get("default"))

    def parallel_gateway(
        self, id: str, name: str | None = None, **options: Unpack[NodeOptions]
    ) -> Self:
        return self._node(ParallelGateway, id, name, options)

    def event_based_gateway(
        self, id: str, name: str | None = None, **options: Unpack[NodeOptions]
    ) -> Self:
        """Waits for the intermediate catch events its flows lead to; the first to occur wins."""
        return self._node(EventBasedGateway, id, name, options)
