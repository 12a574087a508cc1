"""Reads of webhook subscriptions (never their secrets) and their deliveries."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from engine.errors import NotFound
from engine.queries import Connection, query
from engine.states import DeliveryState
from engine.webhooks import store
from engine.webhooks.store import DeliveryRow, SubscriptionRow

__all__ = [
    "DeliveryRow",
    "SubscriptionRow",
    "counts",
    "deliveries",
    "subscription",
    "subscriptions",
]

subscriptions = query(store.subscriptions)
counts = query(store.counts)


@query
def subscription(conn: Connection, subscription_id: UUID) -> SubscriptionRow:
    found = store.subscription(conn, subscription_id)
    if found is None:
        raise NotFound(f"webhook subscription {subscription_id} does not exist")
    return found


@query
def deliveries(
    conn: Connection,
    subscription_id: UUID,
    state: DeliveryState | None = None,
    limit: int = 50,
) -> list[DeliveryRow]:
    """The subscription's deliveries, newest first (of one state, or all)."""
    return store.deliveries(conn, subscription_id, state, limit, datetime.now(UTC))
