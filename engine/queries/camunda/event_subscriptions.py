"""Camunda's event subscriptions: message, signal and conditional waits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows


@dataclass(frozen=True)
class EventSubscriptionRow:
    """A message, signal or conditional wait (no instance: a definition's start event); the
    execution is the waiting token, else the instance whose scope waits."""

    id: UUID
    kind: str
    name: str
    instance_id: UUID | None
    execution_id: UUID | None
    node_id: str
    created_at: datetime


EVENT_SUBSCRIPTION_SORT: dict[str, LiteralString] = {"created": "s.created_at", "tenantId": "s.id"}


@query
def event_subscriptions(
    conn: Connection,
    page: CamundaPage,
    *,
    subscription_id: UUID | None = None,
    event_name: str | None = None,
    event_type: str | None = None,
    execution_id: UUID | None = None,
    instance_id: UUID | None = None,
    node_id: str | None = None,
    count: bool = False,
) -> list[EventSubscriptionRow] | int:
    where = Where()
    where.equals("s.id", subscription_id)
    where.equals("s.name", event_name)
    where.equals("s.kind", event_type)
    where.equals("coalesce(s.token_id, s.instance_id)", execution_id)
    where.equals("s.instance_id", instance_id)
    where.equals("s.node_id", node_id)
    source = sql.SQL("FROM event_subscription s")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(
            "SELECT s.id, s.kind, s.name, s.instance_id, "
            "coalesce(s.token_id, s.instance_id) AS execution_id, s.node_id, s.created_at "
        )
        + source
        + where.sql()
        + order_by(page.sort, EVENT_SUBSCRIPTION_SORT, "s.created_at, s.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, EventSubscriptionRow, statement, where.params())
