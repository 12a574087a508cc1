"""Gateways: the exclusive choice, the inclusive choice, the parallel join."""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator
from typing import Protocol, TypeVar
from uuid import UUID

from engine.core.runtime import Join, Token
from engine.errors import InvariantViolation, InvariantViolationKind, NoMatchingFlow
from engine.model import (
    ExclusiveGateway,
    InclusiveGateway,
    Node,
    ParallelGateway,
    ProcessModel,
    SequenceFlow,
)
from engine.semantics.base import Moves
from engine.states import TokenState, VisitState


class GatewayMoves(Moves):
    def _choose(self, token: Token, gateway: ExclusiveGateway) -> SequenceFlow:
        values = self.run.values_for(token)
        for flow_id in gateway.outgoing:
            if flow_id == gateway.default_flow:
                continue
            flow = self.model.flow(flow_id)
            if flow.condition is None or self._holds(flow, values, token):
                return flow
        if gateway.default_flow is not None:
            return self.model.flow(gateway.default_flow)
        raise NoMatchingFlow(
            f"exclusive gateway '{gateway.id}' has no outgoing flow whose condition is true "
            "and no default flow",
            node_id=gateway.id,
        )

    def _inclusive_flows(self, token: Token, gateway: InclusiveGateway) -> list[SequenceFlow]:
        """Every outgoing flow whose condition is true (a flow without one always is); the
        default flow when none is."""
        outgoing = [self.model.flow(f) for f in gateway.outgoing if f != gateway.default_flow]
        values = self.run.values_for(token) if any(f.condition for f in outgoing) else {}
        taken = [f for f in outgoing if f.condition is None or self._holds(f, values, token)]
        if taken:
            return taken
        if gateway.default_flow is not None:
            return [self.model.flow(gateway.default_flow)]
        raise NoMatchingFlow(
            f"inclusive gateway '{gateway.id}' has no outgoing flow whose condition is true "
            "and no default flow",
            node_id=gateway.id,
        )

    def _join(self, token: Token, gateway: ParallelGateway, via: str | None) -> None:
        key = (gateway.id, token.scope_key)
        join = self._arrival(token, gateway, via)
        arrived = join.arrived_flows  # not a set of the incoming flows at every arrival
        if len(arrived) < len(gateway.incoming) or not arrived.issuperset(gateway.incoming):
            return
        # Every incoming flow has a token: the first arrival on each is merged, the last one
        # (this token) survives and continues. Later arrivals on a flow wait for the next round.
        merged: dict[str, str] = {}
        for arrival in join.arrivals:
            merged.setdefault(arrival["flow"], arrival["token"])
        if len(merged) != len(gateway.incoming) or str(token.id) not in merged.values():
            raise InvariantViolation(
                InvariantViolationKind.JOIN_INCOMPLETE,
                f"join '{gateway.id}' would fire without one token on each incoming flow",
                gateway_id=gateway.id,
            )
        absorbed_ids = set(merged.values())
        remaining = [a for a in join.arrivals if a["token"] not in absorbed_ids]
        if remaining:
            join.arrivals = remaining
        else:
            self._delete_join(key)
        self._merge(token, [self.run.tokens[UUID(token_id)] for token_id in merged.values()])
        self._leave(token, gateway)

    def _inclusive_arrive(self, token: Token, gateway: InclusiveGateway, via: str | None) -> None:
        """The token waits at the join; whether the join fires is decided once no token is
        moving any more (`_fire_inclusive_joins`), since tokens elsewhere decide it."""
        self._arrival(token, gateway, via)

    def _fire_inclusive_joins(self) -> bool:
        """Fire one converging inclusive gateway that may fire: every incoming flow has a token,
        or no live token of its scope other than those waiting there can still reach it. True
        when one fired (its token is on its way; the caller runs it, then asks again)."""
        run = self.run
        if not self.model.has_inclusive_joins:
            return False
        for key, join in list(run.joins.items()):
            gateway = self.model.node(join.gateway_id)
            if not isinstance(gateway, InclusiveGateway):
                continue
            if not self._inclusive_ready(join, gateway):
                continue
            waiting = [run.tokens[UUID(a["token"])] for a in join.arrivals]
            self._delete_join(key)
            survivor = waiting[-1]
            self._merge(survivor, waiting)
            self._leave(survivor, gateway, self._inclusive_flows(survivor, gateway))
            return True
        return False

    def _inclusive_ready(self, join: Join, gateway: InclusiveGateway) -> bool:
        if join.arrived_flows.issuperset(gateway.incoming):
            return True
        scope_id = UUID(join.scope_key) if join.scope_key else None
        waiting = {a["token"] for a in join.arrivals}
        live = self.run.live_in_scope(scope_id)
        return next(inclusive_blockers(self.model, gateway.id, waiting, live), None) is None

    def _arrival(self, token: Token, gateway: Node, via: str | None) -> Join:
        """Record the token's arrival at the join (one row per gateway and scope) and park it."""
        run = self.run
        key = (gateway.id, token.scope_key)
        join = run.joins.get(key)
        if join is None:
            # A join that fired earlier in this command keeps its row: updated, not re-inserted.
            join = Join(gateway.id, token.scope_key, [], run.deleted_joins.pop(key, None))
            run.put_join(join)
        join.arrivals.append({"token": str(token.id), "flow": via or ""})
        self._wait(token)
        return join

    def _merge(self, survivor: Token, tokens: list[Token]) -> None:
        """The tokens that met at a join end merged into `survivor`, which goes on."""
        run = self.run
        groups: list[str] = []
        for absorbed in tokens:
            groups.append(absorbed.parallel_group or "")
            if absorbed is survivor:
                continue
            self._close_visit(absorbed, VisitState.COMPLETED)
            absorbed.merged_into = survivor.id
            absorbed.move_to(TokenState.COMPLETED, run.now)
            run.emit("token.merged", absorbed)
        if len(tokens) > 1:
            survivor.parallel_group = _joined_group(groups)
        survivor.move_to(TokenState.EXECUTING, run.now)


class _Placed(Protocol):
    @property
    def id(self) -> UUID: ...

    @property
    def node_id(self) -> str: ...


_P = TypeVar("_P", bound=_Placed)


def inclusive_blockers(
    model: ProcessModel, gateway_id: str, waiting: Container[str], live: Iterable[_P]
) -> Iterator[_P]:
    """The tokens that keep the converging inclusive gateway `gateway_id` from firing, of
    `live` (the live tokens of the join's scope), `waiting` being the ids of the tokens that
    arrived there: each token that can still reach the gateway, and each one parked before it
    (asynchronous continuation) that has yet to arrive. The join fires once every incoming
    flow has a token or none is left."""
    upstream = model.upstream_of(gateway_id)
    for token in live:
        # Parked before the gateway (asynchronous continuation): it has yet to arrive.
        parked = token.node_id == gateway_id and str(token.id) not in waiting
        if parked or token.node_id in upstream:
            yield token


def _joined_group(groups: list[str]) -> str | None:
    """The group a token continues in after a join: the merged tokens' common group path,
    one level up when they all came from the same fork."""
    paths = [g.split(".") if g else [] for g in groups]
    common: list[str] = []
    for parts in zip(*paths, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    if all(len(p) == len(common) for p in paths) and common:
        common.pop()
    return ".".join(common) or None
