"""Waiting joins as the inspector shows them: what each one still waits for, judged by the rule
the engine fires them by (`engine.semantics.gateways.inclusive_blockers`)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.model import InclusiveGateway, ProcessModel
from engine.queries.console import JoinState
from engine.semantics.gateways import inclusive_blockers
from engine.states import TokenState
from engine.store.instance_reads import TokenRow


@dataclass(frozen=True)
class JoinLine:
    """A waiting join: the tokens arrived, and what it waits for. A parallel join expects one
    token per incoming flow; an inclusive join waits for the live tokens that can still reach it
    (`upstream`), which is not a number of branches known in advance."""

    join: JoinState
    expected: int | None
    upstream: int | None


def join_lines(
    model: ProcessModel, joins: list[JoinState], tokens: list[TokenRow]
) -> list[JoinLine]:
    """Each of an instance's waiting joins (`console.join_states`) with what it waits for, over
    the instance's tokens (`instances.tokens`)."""
    lines = []
    for join in joins:
        gateway = model.node(join.gateway_id) if model.has_node(join.gateway_id) else None
        if not isinstance(gateway, InclusiveGateway):
            expected = len(gateway.incoming) if gateway is not None else None
            lines.append(JoinLine(join, expected, None))
            continue
        scope = join.scope_key or None
        live = [
            t
            for t in tokens
            if not TokenState(t.state).is_final
            and (str(t.scope_id) if t.scope_id else None) == scope
        ]
        waiting = {str(token_id) for token_id in join.arrived}
        blockers = list(inclusive_blockers(model, gateway.id, waiting, live))
        lines.append(JoinLine(join, None, len(blockers)))
    return lines
