"""What every Camunda list read shares: firstResult, maxResults and sortBy, and the states of a
running instance."""

from __future__ import annotations

from dataclasses import dataclass

from engine.sql.filters import like_matches as like_matches  # app/camunda reads it here
from engine.states import InstanceState

RUNNING_STATES: tuple[str, ...] = (
    InstanceState.CREATED,
    InstanceState.ACTIVE,
    InstanceState.SUSPENDED,
    InstanceState.TERMINATING,
)


@dataclass(frozen=True)
class CamundaPage:
    """`first`/`max`: Camunda's firstResult/maxResults; `sort`: (sortBy, descending) pairs."""

    first: int = 0
    max: int | None = None
    sort: tuple[tuple[str, bool], ...] = ()
