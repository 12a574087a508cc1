"""Who a command is done for: the `Actor` the web layer binds around a request (`acting`), which
the executor hands to the command's transaction (`Tx.actor`, read with `current`). The audit log
(engine/core/audit.py) records it. The actor also carries what its principal may do (`grants`):
reads narrow their rows by it (`engine/sql/filters.Where.authorized`, through `scope`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from uuid import UUID

from engine.identity.grants import EVERYTHING, Grants, Scope
from engine.identity.permissions import ResourceType
from engine.states import AuditChannel


@dataclass(frozen=True)
class Actor:
    """The operator a mutation is done for, and the channel it came through."""

    user: str
    channel: AuditChannel
    # The batch whose item this is.
    batch_id: UUID | None = None
    # What the principal may do; None: not narrowed (the engine's own work, the command line).
    grants: Grants | None = None
    # The tenants whose rows the principal sees, besides those of no tenant (the tenants of the
    # user and of their groups); None: not narrowed.
    tenant_ids: frozenset[str] | None = None


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


def tenant_ids() -> frozenset[str] | None:
    """The tenants the current actor sees (besides rows of no tenant); None: every tenant."""
    actor = _ACTOR.get()
    return None if actor is None else actor.tenant_ids


def scope(permission: int, resource: ResourceType) -> Scope:
    """Which resources of `resource` the current actor holds `permission` on: every one when no
    actor, or one without grants, is bound."""
    actor = _ACTOR.get()
    if actor is None or actor.grants is None:
        return EVERYTHING
    return actor.grants.scope(permission, resource)
