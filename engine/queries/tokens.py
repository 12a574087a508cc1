"""Where an instance's tokens are and the path each of its tracks took, with fork/merge lineage:
what `InstanceHandle.tokens()` and `InstanceHandle.history()` answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from engine.errors import NotFound
from engine.queries import Connection, query
from engine.states import TokenMode, TokenState, TokenView, view_of
from engine.store import instance_reads as store
from engine.store.instance_reads import StepVisit

if TYPE_CHECKING:
    from engine.core.definitions import DefinitionCache

__all__ = ["StepVisit", "TokenPath", "TokenPosition", "paths", "positions"]


@dataclass(frozen=True)
class TokenPosition:
    """Where a live token is: `InstanceHandle.tokens()`."""

    token_id: UUID
    node_id: str
    node_name: str | None
    state: TokenView
    version: int
    # Forward, or Compensation for a token that runs a compensation handler.
    mode: TokenMode = TokenMode.FORWARD


@dataclass(frozen=True)
class TokenPath:
    """One track's recorded path with its fork/merge lineage: `InstanceHandle.history()`."""

    track_id: UUID
    parent_id: UUID | None
    merged_into: UUID | None
    terminal: TokenView
    steps: list[StepVisit]
    # Compensation for the track of a compensation handler: every visit of it is in that mode.
    mode: TokenMode = TokenMode.FORWARD


@query
def positions(conn: Connection, cache: DefinitionCache, instance_id: UUID) -> list[TokenPosition]:
    """Every token of the instance that has not finished, named by its node in the instance's
    definition (parsed once, then from `cache`)."""
    rows = store.tokens(conn, instance_id)
    info = store.instance(conn, instance_id)
    if info is None:
        raise NotFound(f"process instance {instance_id} does not exist")
    model = cache.get(conn, info.definition_id, info.definition_key)
    return [
        TokenPosition(
            r.id,
            r.node_id,
            model.node(r.node_id).name if model.has_node(r.node_id) else None,
            view_of(TokenState(r.state)),
            r.version,
            TokenMode(r.mode),
        )
        for r in rows
        if not TokenState(r.state).is_final
    ]


@query
def paths(conn: Connection, instance_id: UUID) -> list[TokenPath]:
    """Every track's recorded path, finished ones included, in the order of its tokens."""
    tokens = store.tokens(conn, instance_id)
    visits = store.visits(conn, instance_id)
    steps: dict[UUID, list[StepVisit]] = {t.id: [] for t in tokens}
    for v in visits:
        steps.setdefault(v.token_id, []).append(
            StepVisit(v.node_id, v.node_name, v.node_type, v.state, v.started_at, v.ended_at)
        )
    return [
        TokenPath(
            t.id,
            t.parent_id,
            t.merged_into,
            view_of(TokenState(t.state)),
            steps[t.id],
            TokenMode(t.mode),
        )
        for t in tokens
    ]
