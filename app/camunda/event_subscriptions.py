"""Event subscriptions: what instances and start events wait for (messages, signals,
conditions), as Camunda's EventSubscriptionDto."""

from __future__ import annotations

from uuid import UUID

from app.camunda.dto import Json, format_date, text
from app.camunda.http import Call, listing
from engine.queries.camunda import event_subscriptions as subscription_reads
from engine.states import SubscriptionKind


def event_subscription(row: subscription_reads.EventSubscriptionRow) -> Json:
    """A conditional wait has no event name in Camunda (its condition is not one)."""
    return {
        "id": str(row.id),
        "eventType": row.kind,
        "eventName": None if row.kind == SubscriptionKind.CONDITIONAL else row.name,
        "executionId": text(row.execution_id),
        "processInstanceId": text(row.instance_id),
        "activityId": row.node_id,
        "createdDate": format_date(row.created_at),
        "tenantId": None,
    }


def _query(
    call: Call, *, count: bool = False
) -> list[subscription_reads.EventSubscriptionRow] | int:
    subscription_id: UUID | None = call.uuid("eventSubscriptionId")
    return subscription_reads.event_subscriptions(
        call.engine,
        call.page(subscription_reads.EVENT_SUBSCRIPTION_SORT),
        subscription_id=subscription_id,
        event_name=call.text("eventName"),
        event_type=call.text("eventType"),
        execution_id=call.uuid("executionId"),
        instance_id=call.uuid("processInstanceId"),
        node_id=call.text("activityId"),
        count=count,
    )


endpoints = listing("/event-subscription", _query, event_subscription)
