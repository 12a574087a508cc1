"""The decision requirements graph: which decisions run, and in which order, to evaluate one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.dmn.model import Decision, DmnDefinitions


def find_cycle(requirements: Mapping[str, Sequence[str]]) -> list[str] | None:
    """A cycle of requirements as the list of decision ids around it (first id repeated last), or
    None. Requirements naming unknown decisions are not followed."""
    done: set[str] = set()
    for start in requirements:
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            current, index = stack.pop()
            if index == 0:
                path.append(current)
                on_path.add(current)
            required = [r for r in requirements.get(current, ()) if r in requirements]
            if index < len(required):
                stack.append((current, index + 1))
                child = required[index]
                if child in on_path:
                    return [*path[path.index(child) :], child]
                if child not in done:
                    stack.append((child, 0))
                continue
            path.pop()
            on_path.discard(current)
            done.add(current)
    return None


def evaluation_order(definitions: DmnDefinitions, decision_id: str) -> list[Decision]:
    """The decisions to evaluate for `decision_id`, each once, every required decision before the
    decisions that require it, `decision_id` last. Requirements are visited in the order written.
    Raises KeyError for an unknown decision (the parser refuses unknown requirements and cycles)."""
    by_id = {decision.id: decision for decision in definitions.decisions}
    order: list[Decision] = []
    placed: set[str] = set()
    stack: list[tuple[Decision, int]] = [(by_id[decision_id], 0)]
    entered = {decision_id}
    while stack:
        decision, index = stack.pop()
        if index < len(decision.requirements):
            stack.append((decision, index + 1))
            required = by_id[decision.requirements[index]]
            if required.id not in placed and required.id not in entered:
                entered.add(required.id)
                stack.append((required, 0))
            continue
        placed.add(decision.id)
        order.append(decision)
    return order
