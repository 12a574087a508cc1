"""Multi-instance and standard loop bodies as the console shows them: each live host with its
counters (completed of total, active) and its iterations, for the tokens panel and the diagram."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from engine.model import MultiInstance, ProcessModel
from engine.queries.instances import TokenRow, VariableRow
from engine.states import TokenState


@dataclass(frozen=True)
class Iteration:
    token: TokenRow
    counter: int | None  # its loopCounter while it runs (it goes with the iteration)


@dataclass(frozen=True)
class LoopLine:
    """A live body: its host token, what kind of loop, its counters and its iterations."""

    host: TokenRow
    multi_instance: bool
    completed: int
    total: int | None  # None: a standard loop without loopMaximum
    active: int
    iterations: list[Iteration]


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def loop_lines(
    model: ProcessModel, tokens: list[TokenRow], variables: list[VariableRow]
) -> list[LoopLine]:
    """Every live body of the instance, in the order its host was created."""
    by_id = {token.id: token for token in tokens}
    locals_of: dict[str, dict[str, Any]] = {}
    for row in variables:
        if row.scope_key:
            locals_of.setdefault(row.scope_key, {})[row.name] = row.value
    iterations: dict[UUID, list[TokenRow]] = {}
    hosts: list[TokenRow] = []
    for token in tokens:
        if not model.has_node(token.node_id) or model.node(token.node_id).loop is None:
            continue
        scope = by_id.get(token.scope_id) if token.scope_id is not None else None
        if scope is not None and scope.node_id == token.node_id:
            iterations.setdefault(scope.id, []).append(token)
        elif not TokenState(token.state).is_final:
            hosts.append(token)
    lines: list[LoopLine] = []
    for host in hosts:
        loop = model.node(host.node_id).loop
        counters = locals_of.get(str(host.id), {})
        mine = iterations.get(host.id, [])
        active = len([t for t in mine if not TokenState(t.state).is_final])
        shown = [
            Iteration(t, _number(locals_of.get(str(t.id), {}).get("loopCounter"))) for t in mine
        ]
        if isinstance(loop, MultiInstance):
            completed = _number(counters.get("nrOfCompletedInstances")) or 0
            total = _number(counters.get("nrOfInstances"))
            active = _number(counters.get("nrOfActiveInstances")) or active
        else:
            completed = _number(counters.get("loopCounter")) or 0
            total = getattr(loop, "maximum", None)
        lines.append(
            LoopLine(host, isinstance(loop, MultiInstance), completed, total, active, shown)
        )
    return lines


def loop_badges(lines: list[LoopLine]) -> dict[str, dict[str, int | None]]:
    """Per node, its bodies' counters added up (a node inside a multi-instance subprocess has
    one body per subprocess iteration)."""
    badges: dict[str, dict[str, int | None]] = {}
    for line in lines:
        badge = badges.setdefault(line.host.node_id, {"completed": 0, "total": 0, "active": 0})
        badge["completed"] = (badge["completed"] or 0) + line.completed
        badge["active"] = (badge["active"] or 0) + line.active
        total = badge["total"]
        badge["total"] = None if total is None or line.total is None else total + line.total
    return badges
