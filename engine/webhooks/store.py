"""The SQL of webhooks: subscriptions, the fan-out of outbox rows into deliveries, leases, the
outcome of an attempt, replays of dead letters. Commands (engine/commands/webhooks.py) and reads
(engine/queries/webhooks.py) call these; nothing else writes the two tables."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from engine.db.outbox import OutboxRow
from engine.sql.filters import Where
from engine.states import DeliveryState
from engine.store import outbox

PENDING, DELIVERED, DEAD = DeliveryState.PENDING, DeliveryState.DELIVERED, DeliveryState.DEAD

# What the engine reads of a subscription: everything but its secret.
SUBSCRIPTION_COLUMNS = (
    "id, name, url, event_types, definition_key, enabled, fanned_out_seq, created_at, updated_at"
)


@dataclass(frozen=True)
class SubscriptionRow:
    """A subscription as pages and the API show it: whether a secret is set, never the secret."""

    id: UUID
    name: str
    url: str
    event_types: list[str]
    definition_key: str | None
    enabled: bool
    fanned_out_seq: int
    created_at: datetime
    updated_at: datetime
    has_secret: bool = True


@dataclass(frozen=True)
class LeasedDelivery:
    """A delivery a dispatcher holds the lease of, with what it needs to POST it."""

    id: UUID
    subscription_id: UUID
    seq: int
    instance_id: UUID
    event: str
    payload: dict[str, Any]
    attempts: int
    url: str
    secret: str


def insert_subscription(
    conn: psycopg.Connection[Any],
    *,
    name: str,
    url: str,
    event_types: list[str],
    definition_key: str | None,
    secret: str,
    enabled: bool,
    fanned_out_seq: int,
    now: datetime,
) -> UUID:
    subscription_id = uuid4()
    conn.execute(
        "INSERT INTO webhook_subscription (id, name, url, event_types, definition_key, secret, "
        "enabled, fanned_out_seq, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            subscription_id,
            name,
            url,
            Jsonb(event_types),
            definition_key,
            secret,
            enabled,
            fanned_out_seq,
            now,
            now,
        ),
    )
    return subscription_id


def lock_subscription(
    conn: psycopg.Connection[Any], subscription_id: UUID
) -> SubscriptionRow | None:
    return _subscription(conn, subscription_id, " FOR UPDATE")


def update_subscription(
    conn: psycopg.Connection[Any], subscription_id: UUID, changes: dict[str, Any]
) -> None:
    """Set the columns `changes` names (names from this module's callers, never from input)."""
    allowed = {
        "name",
        "url",
        "event_types",
        "definition_key",
        "secret",
        "enabled",
        "fanned_out_seq",
        "updated_at",
    }
    assert set(changes) <= allowed, set(changes) - allowed
    values = {k: Jsonb(v) if k == "event_types" else v for k, v in changes.items()}
    assignments = ", ".join(f"{name} = %({name})s" for name in values)
    conn.execute(
        f"UPDATE webhook_subscription SET {assignments} WHERE id = %(subscription_id)s",
        {**values, "subscription_id": subscription_id},
    )


def delete_subscription(conn: psycopg.Connection[Any], subscription_id: UUID) -> bool:
    found = conn.execute(
        "DELETE FROM webhook_subscription WHERE id = %s RETURNING id", (subscription_id,)
    ).fetchall()
    return bool(found)


def subscriptions(conn: psycopg.Connection[Any]) -> list[SubscriptionRow]:
    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM webhook_subscription ORDER BY name, id"
    ).fetchall()
    return [SubscriptionRow(**row) for row in rows]


def subscription(conn: psycopg.Connection[Any], subscription_id: UUID) -> SubscriptionRow | None:
    return _subscription(conn, subscription_id, "")


def _subscription(
    conn: psycopg.Connection[Any], subscription_id: UUID, lock: str
) -> SubscriptionRow | None:
    """The subscription `subscription_id`, read with `lock` (" FOR UPDATE", or "")."""
    cur = conn.cursor(row_factory=dict_row)
    row = cur.execute(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM webhook_subscription WHERE id = %s{lock}",
        (subscription_id,),
    ).fetchone()
    return SubscriptionRow(**row) if row else None


def floor(conn: psycopg.Connection[Any]) -> int | None:
    """The lowest cursor of an enabled subscription: the outbox rows above it may still have to
    be fanned out. None when no subscription is enabled."""
    row = conn.execute(
        "SELECT min(fanned_out_seq) FROM webhook_subscription WHERE enabled"
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else None


# -- fan-out ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Behind:
    """An enabled subscription whose cursor is below the bound, locked for the fan-out."""

    id: UUID
    fanned_out_seq: int
    event_types: list[str]
    definition_key: str | None


def lock_behind(conn: psycopg.Connection[Any], bound: int) -> list[Behind]:
    """Enabled subscriptions with outbox rows to fan out up to `bound`, locked; one another
    dispatcher is fanning out right now is skipped (it advances that cursor itself)."""
    rows = conn.execute(
        "SELECT id, fanned_out_seq, event_types, definition_key FROM webhook_subscription "
        "WHERE enabled AND fanned_out_seq < %s ORDER BY id FOR UPDATE SKIP LOCKED",
        (bound,),
    ).fetchall()
    return [Behind(row[0], int(row[1]), list(row[2]), row[3]) for row in rows]


_OUTBOX_ROWS = sql.SQL(
    "SELECT o.seq, o.event, o.instance_id, o.token_id, o.node_id, o.history_id, o.created_at, "
    "i.definition_key, i.definition_id "
    "FROM outbox_event o LEFT JOIN process_instance i ON i.id = o.instance_id"
)


def matching_rows(
    conn: psycopg.Connection[Any], behind: Behind, upto: int, limit: int
) -> list[OutboxRow]:
    """Outbox rows after the subscription's cursor up to `upto` that it wants, in seq order."""
    where = Where()
    outbox.numbered(where, behind.fanned_out_seq, upto)
    where.any_of("o.event", behind.event_types or None)
    where.equals("i.definition_key", behind.definition_key)
    statement = _OUTBOX_ROWS + where.sql() + sql.SQL(" ORDER BY o.seq") + where.limit(limit)
    cur = conn.cursor(row_factory=dict_row)
    return [OutboxRow(**row) for row in cur.execute(statement, where.params()).fetchall()]


def insert_deliveries(
    conn: psycopg.Connection[Any], subscription_id: UUID, rows: list[OutboxRow], now: datetime
) -> None:
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO webhook_delivery (id, subscription_id, seq, instance_id, event, payload, "
            "state, attempts, next_attempt_at, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, 0, %s, %s) "
            "ON CONFLICT (subscription_id, seq) DO NOTHING",
            [
                (
                    uuid4(),
                    subscription_id,
                    row.seq,
                    row.instance_id,
                    row.event,
                    Jsonb(row.to_dict()),
                    PENDING.value,
                    now,
                    now,
                )
                for row in rows
            ],
        )


def advance_cursor(conn: psycopg.Connection[Any], subscription_id: UUID, seq: int) -> None:
    conn.execute(
        "UPDATE webhook_subscription SET fanned_out_seq = greatest(fanned_out_seq, %s) "
        "WHERE id = %s",
        (seq, subscription_id),
    )


# -- leases and attempts ----------------------------------------------------------------------

# Due deliveries, each the first undelivered one of its instance for its subscription: a later
# delivery of the same instance waits while an earlier one is pending (in an attempt or between
# attempts) or dead. A lease that has expired is taken over.
_LEASE = """
WITH due AS (
    SELECT d.id FROM webhook_delivery d
    JOIN webhook_subscription s ON s.id = d.subscription_id AND s.enabled
    WHERE d.state = %(pending)s AND d.next_attempt_at <= %(now)s
      AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= %(now)s)
      AND NOT EXISTS (
          SELECT 1 FROM webhook_delivery e
          WHERE e.subscription_id = d.subscription_id AND e.instance_id = d.instance_id
            AND e.seq < d.seq AND e.state <> %(delivered)s)
    ORDER BY d.next_attempt_at, d.seq
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_delivery d
SET lease_owner = %(owner)s, lease_expires_at = %(expires)s, attempts = d.attempts + 1
FROM due, webhook_subscription s
WHERE d.id = due.id AND s.id = d.subscription_id
RETURNING d.id, d.subscription_id, d.seq, d.instance_id, d.event, d.payload, d.attempts,
          s.url, s.secret
"""


def lease(
    conn: psycopg.Connection[Any], owner: str, limit: int, now: datetime, seconds: float
) -> list[LeasedDelivery]:
    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(
        _LEASE,
        {
            "pending": PENDING.value,
            "delivered": DELIVERED.value,
            "now": now,
            "limit": limit,
            "owner": owner,
            "expires": now + timedelta(seconds=seconds),
        },
    ).fetchall()
    return sorted((LeasedDelivery(**row) for row in rows), key=lambda d: d.seq)


def finish(
    conn: psycopg.Connection[Any],
    delivery_id: UUID,
    owner: str,
    *,
    state: DeliveryState,
    status: str,
    now: datetime,
    next_attempt_at: datetime,
) -> int | None:
    """Record an attempt's outcome on a delivery `owner` still holds; its attempts so far, or
    None when the lease has passed to another dispatcher (or the delivery is gone)."""
    row = conn.execute(
        "UPDATE webhook_delivery SET state = %s, last_status = %s, next_attempt_at = %s, "
        "delivered_at = CASE WHEN %s THEN %s ELSE delivered_at END, "
        "lease_owner = NULL, lease_expires_at = NULL "
        "WHERE id = %s AND lease_owner = %s AND state = %s RETURNING attempts",
        (
            state.value,
            status,
            next_attempt_at,
            state is DELIVERED,
            now,
            delivery_id,
            owner,
            PENDING.value,
        ),
    ).fetchone()
    return int(row[0]) if row else None


def attempts_of(conn: psycopg.Connection[Any], delivery_id: UUID, owner: str) -> int | None:
    row = conn.execute(
        "SELECT attempts FROM webhook_delivery WHERE id = %s AND lease_owner = %s "
        "AND state = %s FOR UPDATE",
        (delivery_id, owner, PENDING.value),
    ).fetchone()
    return int(row[0]) if row else None


def release(conn: psycopg.Connection[Any], owner: str, delivery_ids: list[UUID]) -> int:
    """Give back leases not used: the attempt they counted did not happen."""
    released = conn.execute(
        "UPDATE webhook_delivery SET lease_owner = NULL, lease_expires_at = NULL, "
        "attempts = greatest(attempts - 1, 0) "
        "WHERE id = ANY(%s) AND lease_owner = %s AND state = %s RETURNING id",
        (delivery_ids, owner, PENDING.value),
    ).fetchall()
    return len(released)


def replay(
    conn: psycopg.Connection[Any],
    subscription_id: UUID,
    delivery_id: UUID | None,
    now: datetime,
) -> int:
    """Dead letters of the subscription (one, or all) become pending again, due now, with a
    fresh count of attempts."""
    statement = (
        "UPDATE webhook_delivery SET state = %(pending)s, attempts = 0, next_attempt_at = %(now)s, "
        "lease_owner = NULL, lease_expires_at = NULL "
        "WHERE subscription_id = %(subscription_id)s AND state = %(dead)s"
    )
    params: dict[str, Any] = {
        "pending": PENDING.value,
        "dead": DEAD.value,
        "now": now,
        "subscription_id": subscription_id,
    }
    if delivery_id is not None:
        statement += " AND id = %(delivery_id)s"
        params["delivery_id"] = delivery_id
    return len(conn.execute(statement + " RETURNING id", params).fetchall())


def prune(conn: psycopg.Connection[Any], before: datetime, limit: int) -> int:
    """Delete up to `limit` deliveries delivered before `before`; how many."""
    deleted = conn.execute(
        "DELETE FROM webhook_delivery WHERE id IN (SELECT id FROM webhook_delivery "
        "WHERE state = %s AND delivered_at < %s ORDER BY delivered_at LIMIT %s) RETURNING id",
        (DELIVERED.value, before, limit),
    ).fetchall()
    return len(deleted)


# -- reads for pages --------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryRow:
    id: UUID
    subscription_id: UUID
    seq: int
    instance_id: UUID
    event: str
    state: DeliveryState
    attempts: int
    next_attempt_at: datetime
    last_status: str | None
    created_at: datetime
    delivered_at: datetime | None
    leased: bool


def deliveries(
    conn: psycopg.Connection[Any],
    subscription_id: UUID,
    state: DeliveryState | None,
    limit: int,
    now: datetime,
) -> list[DeliveryRow]:
    """The subscription's deliveries, newest first (optionally of one state)."""
    where = Where()
    leased = sql.SQL("coalesce(lease_expires_at > {}, false) AS leased ").format(where.bind(now))
    where.add("subscription_id = {}", subscription_id)
    where.equals("state", state)
    statement = (
        sql.SQL(
            "SELECT id, subscription_id, seq, instance_id, event, state, attempts, "
            "next_attempt_at, last_status, created_at, delivered_at, "
        )
        + leased
        + sql.SQL("FROM webhook_delivery")
        + where.sql()
        + sql.SQL(" ORDER BY seq DESC")
        + where.limit(limit)
    )
    cur = conn.cursor(row_factory=dict_row)
    rows = cur.execute(statement, where.params()).fetchall()
    return [DeliveryRow(**{**row, "state": DeliveryState(row["state"])}) for row in rows]


def counts(conn: psycopg.Connection[Any], subscription_id: UUID | None) -> dict[str, int]:
    """Deliveries by state (of one subscription, or of all), every state present; `failing`:
    pending ones whose last attempt failed."""
    where = Where()
    where.equals("subscription_id", subscription_id)
    statement = (
        sql.SQL(
            "SELECT state, count(*), count(*) FILTER (WHERE last_status IS NOT NULL) "
            "FROM webhook_delivery"
        )
        + where.sql()
        + sql.SQL(" GROUP BY state")
    )
    found = {state.value: 0 for state in DeliveryState}
    failing = 0
    for state, number, with_status in conn.execute(statement, where.params()).fetchall():
        found[state] = int(number)
        if state == PENDING.value:
            failing = int(with_status)
    return {**found, "failing": failing}
