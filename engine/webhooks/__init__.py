"""Webhooks: subscriptions to the outbox's committed events, delivered at least once, in order
per instance, signed, by dispatchers in any number of processes (see `dispatcher`).

Tables: `webhook_subscription` (where, what, the secret, and the cursor up to which the outbox
has been fanned out for it) and `webhook_delivery` (one row per outbox row and subscription,
with its payload, state, attempts and lease). Commands: engine/commands/webhooks.py; reads:
engine/queries/webhooks.py.
"""

from __future__ import annotations

from typing import Any

import psycopg

from engine.webhooks import store


def outbox_floor(conn: psycopg.Connection[Any]) -> int | None:
    """The lowest outbox seq an enabled subscription still needs: every outbox row with a
    larger seq may yet be fanned out, so none of them may be deleted. None when no subscription
    is enabled (a disabled one starts after the high-water mark when it is enabled again).
    Deliveries carry their payload, so rows at or below the floor are not needed by webhooks."""
    return store.floor(conn)


__all__ = ["outbox_floor"]
