"""Who a command is done for: the `Actor` the web layer binds around a request (`acting`), which
the executor hands to the command's transaction (`Tx.actor`, read with `current`). The audit log
(engine/core/audit.py) records it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from uuid import UUID

from engine.states import AuditChannel


@dataclass(frozen=True)
class Actor:
    """The operator a mutation is done for, and the channel it came through."""

    user: str
    channel: AuditChannel
    # The batch whose item this is.
    batch_id: UUID | None = None


_ACTOR: ContextVar[Actor | None] = ContextVar("interlock_actor", default=None)


def current() -> Actor | None:
    return _ACTOR.get()


@contextmanager
def acting(actor: Actor | None) -> Iterator[None]:
    """Commands run in this context are done for `actor` (None: for nobody, not audited)."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)
