"""Gateways: exclusive, inclusive, parallel and event-based."""

from __future__ import annotations

from typing import Self, Unpack

from engine.builder.base import BuilderBase, NodeOptions
from engine.model import EventBasedGateway, ExclusiveGateway, InclusiveGateway, ParallelGateway


class Gateways(BuilderBase):
    def exclusive_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        default: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """The first outgoing flow whose condition is true, else `default`."""
        return self._node(ExclusiveGateway, id, name, options, default_flow=default)

    def inclusive_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        default: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """Diverging: every outgoing flow whose condition is true, else `default`. Converging
        (several flows in): waits until no other live token of its scope can reach it."""
        return self._node(InclusiveGateway, id, name, options, default_flow=default)

    def parallel_gateway(
        self, id: str, name: str | None = None, **options: Unpack[NodeOptions]
    ) -> Self:
        return self._node(ParallelGateway, id, name, options)

    def event_based_gateway(
        self, id: str, name: str | None = None, **options: Unpack[NodeOptions]
    ) -> Self:
        """Waits for the intermediate catch events its flows lead to; the first to occur wins."""
        return self._node(EventBasedGateway, id, name, options)
