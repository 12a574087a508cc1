"""Gateway nodes: exclusive, parallel, inclusive and event-based."""

from __future__ import annotations

from dataclasses import dataclass

from engine.model.node import Node, NodeKind


class Joins:
    """A gateway that joins the flows coming in when there is more than one."""

    incoming: tuple[str, ...]

    @property
    def is_join(self) -> bool:
        return len(self.incoming) > 1


@dataclass(frozen=True, kw_only=True)
class ExclusiveGateway(Node):
    default_flow: str | None = None

    _kind = NodeKind.EXCLUSIVE_GATEWAY


@dataclass(frozen=True, kw_only=True)
class ParallelGateway(Joins, Node):
    _kind = NodeKind.PARALLEL_GATEWAY


@dataclass(frozen=True, kw_only=True)
class InclusiveGateway(Joins, Node):
    """Diverging: every outgoing flow whose condition is true, the default flow when none is.
    Converging (more than one incoming flow): the tokens that arrived wait until no other live
    token of their scope can still reach the gateway, then one token leaves."""

    default_flow: str | None = None

    _kind = NodeKind.INCLUSIVE_GATEWAY


@dataclass(frozen=True, kw_only=True)
class EventBasedGateway(Node):
    """The token waits here for every catch event its outgoing flows lead to at once; the first
    to occur wins, the others' waits are retired, and the token goes on through the winner."""

    _kind = NodeKind.EVENT_BASED_GATEWAY
