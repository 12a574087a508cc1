"""An instance's family of called instances as the inspector shows it: the tree from the root
down, the caller of the instance shown, the instances each of its call activities called, and
the open incidents below each of them (a called instance's incident shows on its caller's call
activity, as Camunda Cockpit shows it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID

from engine.api import Engine
from engine.queries import console
from engine.queries.console import FAMILY_LIMIT, FamilyMember
from engine.states import InstanceState


@dataclass
class FamilyNode:
    """A member and the instances it called; `incidents`: the open incidents of the member and
    of every instance below it."""

    member: FamilyMember
    children: list[FamilyNode] = field(default_factory=list)
    incidents: int = 0

    @property
    def running(self) -> bool:
        return not InstanceState(self.member.state).is_final


@dataclass(frozen=True)
class Family:
    """The family of the instance `current`. `root` is None when the instance does not exist;
    `truncated`: the family has more members than the inspector shows (FAMILY_LIMIT)."""

    current: UUID
    root: FamilyNode | None
    nodes: dict[UUID, FamilyNode]
    truncated: bool

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def caller(self) -> FamilyMember | None:
        """The instance that called the current one, with the call activity (None: a root)."""
        me = self.nodes.get(self.current)
        if me is None or me.member.super_instance_id is None:
            return None
        parent = self.nodes.get(me.member.super_instance_id)
        return parent.member if parent is not None else None

    @property
    def me(self) -> FamilyMember | None:
        node = self.nodes.get(self.current)
        return node.member if node is not None else None

    def called(self) -> list[FamilyNode]:
        """The instances the current one called, in the order they started."""
        node = self.nodes.get(self.current)
        return node.children if node is not None else []

    def called_at(self) -> dict[str, list[FamilyNode]]:
        """The instances the current one called, per call activity."""
        found: dict[str, list[FamilyNode]] = {}
        for child in self.called():
            if child.member.call_node_id is not None:
                found.setdefault(child.member.call_node_id, []).append(child)
        return found

    def running_by_token(self) -> dict[UUID, list[FamilyNode]]:
        """The running instances the current one called, per token waiting for them."""
        found: dict[UUID, list[FamilyNode]] = {}
        for child in self.called():
            if child.running and child.member.super_token_id is not None:
                found.setdefault(child.member.super_token_id, []).append(child)
        return found


def family_of(engine: Engine, instance_id: UUID) -> Family:
    members = console.family_members(engine, instance_id, FAMILY_LIMIT + 1)
    truncated = len(members) > FAMILY_LIMIT
    shown = sorted(members[:FAMILY_LIMIT], key=lambda m: (m.started_at, m.id))
    nodes = {member.id: FamilyNode(member) for member in shown}
    root: FamilyNode | None = None
    for node in nodes.values():
        parent_id = node.member.super_instance_id
        parent = nodes.get(parent_id) if parent_id is not None else None
        if parent is not None:
            parent.children.append(node)
        elif parent_id is None:
            root = node
    # Each node after every node below it (a depth-first order, reversed).
    order: list[FamilyNode] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children)
    for node in reversed(order):
        node.incidents = node.member.open_incidents + sum(c.incidents for c in node.children)
    return Family(instance_id, root, nodes, truncated)


def call_badges(family: Family) -> dict[str, dict[str, object]]:
    """Per call activity of the current instance: the instances it called (id, state, open
    incidents below) and the open incidents of all of them together."""
    return {
        node_id: {
            "instances": [
                {"id": str(c.member.id), "state": c.member.state, "incidents": c.incidents}
                for c in children
            ],
            "incidents": sum(c.incidents for c in children),
        }
        for node_id, children in family.called_at().items()
    }
