"""Gateways: the exclusive choice, the inclusive choice, the parallel join."""

from __future__ import annotations

from uuid import UUID

from engine.errors import InvariantViolation, InvariantViolationKind, NoMatchingFlow
from engine.model import ExclusiveGateway, InclusiveGateway, ParallelGateway, SequenceFlow
from engine.runtime import Join, Token
from engine.semantics.base import Moves
from engine.states import TokenState, VisitState


class GatewayMoves(Moves):
    def _choose(self, gateway: ExclusiveGateway) -> SequenceFlow:
        values = self.run.variable_values()
        for flow_id in gateway.outgoing:
            if flow_id == gateway.default_flow:
                continue
            flow = self.model.flow(flow_id)
            if flow.condition is None or self._holds(flow, values):
                return flow
        if gateway.default_flow is not None:
            return self.model.flow(gateway.default_flow)
        raise NoMatchingFlow(
            f"exclusive gateway '{gateway.id}' has no outgoing flow whose condition is true "
            "and no default flow",
            node_id=gateway.id,
        )

    def _inclusive_flows(self, gateway: InclusiveGateway) -> list[SequenceFlow]:
        """Every outgoing flow whose condition is true (a flow without one always is); the
        default flow when none is."""
        outgoing = [self.model.flow(f) for f in gateway.outgoing if f != gateway.default_flow]
        values = self.run.variable_values() if any(f.condition for f in outgoing) else {}
        taken = [f for f in outgoing if f.condition is None or self._holds(f, values)]
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
        run = self.run
        key = (gateway.id, token.scope_key)
        join = run.joins.get(key)
        if join is None:
            # A join that fired earlier in this command keeps its row: updated, not re-inserted.
            join = Join(gateway.id, token.scope_key, [], run.deleted_joins.pop(key, None))
            run.put_join(join)
        join.arrivals.append({"token": str(token.id), "flow": via or ""})
        self._wait(token)
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
        groups: list[str] = []
        absorbed_ids = set(merged.values())
        for token_id in merged.values():
            absorbed = run.tokens[UUID(token_id)]
            groups.append(absorbed.parallel_group or "")
            if absorbed is token:
                continue
            self._close_visit(absorbed, VisitState.COMPLETED)
            absorbed.merged_into = token.id
            absorbed.move_to(TokenState.COMPLETED, run.now)
            run.emit("token.merged", absorbed)
        remaining = [a for a in join.arrivals if a["token"] not in absorbed_ids]
        if remaining:
            join.arrivals = remaining
        else:
            self._delete_join(key)
        token.parallel_group = _joined_group(groups)
        token.move_to(TokenState.EXECUTING, run.now)
        self._leave(token, gateway)


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
