"""Camunda's event subscriptions: message, signal and conditional waits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, filters_of
from engine.store.columns import select_list


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


_EXECUTION: LiteralString = "coalesce(s.token_id, s.instance_id)"


class EventSubscriptionFilters(TypedDict, total=False):
    """Camunda's filters of event subscriptions (None: not filtered)."""

    subscription_id: Annotated[UUID | None, Filter.equals("s.id")]
    event_name: Annotated[str | None, Filter.equals("s.name")]
    event_type: Annotated[str | None, Filter.equals("s.kind")]
    execution_id: Annotated[UUID | None, Filter.equals(_EXECUTION)]
    instance_id: Annotated[UUID | None, Filter.equals("s.instance_id")]
    node_id: Annotated[str | None, Filter.equals("s.node_id")]


_EVENT_SUBSCRIPTIONS = CamundaList(
    EventSubscriptionRow,
    select_list(EventSubscriptionRow, [("s", "event_subscription")], {"execution_id": _EXECUTION}),
    "event_subscription s",
    EVENT_SUBSCRIPTION_SORT,
    "s.created_at, s.id",
    filters_of(EventSubscriptionFilters),
    covers=covers.instance(
        covers.key_of("s.instance_id"), "s.instance_id", tenant=covers.tenant_of("s.instance_id")
    ),
)


@query
def event_subscriptions(
    conn: Connection,
    page: CamundaPage,
    *,
    count: bool = False,
    **filters: Unpack[EventSubscriptionFilters],
) -> list[EventSubscriptionRow] | int:
    return _EVENT_SUBSCRIPTIONS.read(conn, page, filters, count=count)
