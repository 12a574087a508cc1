"""Webhook subscriptions and their deliveries. Viewers read; admins create, change and delete
subscriptions (each one sends the engine's events to a URL of their choosing); operators replay
dead letters. A subscription's secret is write-only: no answer carries it, only `has_secret`.
Only admins see a URL whole; others see it masked (`engine.webhooks.urls.masked`: the userinfo
and every query value as `***`)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app import gates
from app.api import views
from app.api.body import Body
from app.api.http import Op, Param, Reply, call, engine_of, path_id, reply, run, same_target
from app.api.schemas import BOOLEAN, INTEGER, STRING, TIME, Schema, array, nullable, record, request
from app.api.schemas import UUID as UUID_SCHEMA
from app.gates import Gate
from app.params import Query
from engine.commands.webhooks import (
    CreateSubscription,
    DeleteSubscription,
    ReplayDeadLetters,
    UpdateSubscription,
)
from engine.core import actors
from engine.queries import webhooks as reads
from engine.states import DeliveryState, OutboxEvent
from engine.webhooks.urls import masked

EVENT = {**STRING, "enum": [event.value for event in OutboxEvent]}
_FIELDS: dict[str, Schema] = {
    "name": STRING,
    "url": {**STRING, "description": "http:// or https:// URL the events are POSTed to"},
    "event_types": {**array(EVENT), "description": "events to deliver; empty or absent: all"},
    "definition_key": {
        **nullable(STRING),
        "description": "only events of instances of this process key; null or empty: all",
    },
    "secret": {
        **STRING,
        "description": "signs every body (X-Interlock-Signature: sha256=HMAC-SHA256 hex); "
        "16 to 1000 characters; never shown back",
    },
    "enabled": BOOLEAN,
}
CREATE_BODY = request(_FIELDS, required=("name", "url", "secret"))
UPDATE_BODY = request(_FIELDS)
NO_BODY = request({})
COUNTS = record(
    {
        "pending": INTEGER,
        "delivered": INTEGER,
        "dead": INTEGER,
        "failing": INTEGER,
    },
    "Deliveries by state; `failing`: pending ones whose last attempt failed.",
)
SUBSCRIPTION = record(
    {
        "id": UUID_SCHEMA,
        "name": STRING,
        "url": {
            **STRING,
            "description": "in full for admins; for others with its user, password, every "
            "query value and fragment as ***",
        },
        "event_types": array(EVENT),
        "definition_key": nullable(STRING),
        "enabled": BOOLEAN,
        "has_secret": BOOLEAN,
        "created_at": TIME,
        "updated_at": TIME,
        "deliveries": COUNTS,
    },
    "A webhook subscription. The secret is never shown: `has_secret` says one is set.",
)
DELIVERY = record(
    {
        "id": UUID_SCHEMA,
        "subscription_id": UUID_SCHEMA,
        "seq": INTEGER,
        "instance_id": UUID_SCHEMA,
        "event": STRING,
        "state": {**STRING, "enum": [state.value for state in DeliveryState]},
        "attempts": INTEGER,
        "next_attempt_at": TIME,
        "last_status": nullable(STRING),
        "created_at": TIME,
        "delivered_at": nullable(TIME),
        "leased": BOOLEAN,
    },
    "One outbox event for one subscription. `id` is the X-Interlock-Delivery header of every "
    "attempt; `last_status` is an HTTP status or a short reason such as 'connection refused'.",
)
SUBSCRIPTIONS = record({"items": array(SUBSCRIPTION), "next": {"type": "null"}})
DELIVERIES = record({"items": array(DELIVERY), "next": {"type": "null"}})
REPLAYED = record({"subscription_id": UUID_SCHEMA, "replayed": INTEGER})


def subscription_view(
    row: reads.SubscriptionRow, counts: dict[str, int], whole_url: bool
) -> dict[str, Any]:
    """A subscription as answers show it; its URL whole only when `whole_url` (admins)."""
    return {
        "id": str(row.id),
        "name": row.name,
        "url": row.url if whole_url else masked(row.url),
        "event_types": list(row.event_types),
        "definition_key": row.definition_key,
        "enabled": row.enabled,
        "has_secret": row.has_secret,
        "created_at": views.iso(row.created_at),
        "updated_at": views.iso(row.updated_at),
        "deliveries": {
            key: counts.get(key, 0) for key in ("pending", "delivered", "dead", "failing")
        },
    }


def delivery_view(row: reads.DeliveryRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "subscription_id": str(row.subscription_id),
        "seq": row.seq,
        "instance_id": str(row.instance_id),
        "event": row.event,
        "state": row.state.value,
        "attempts": row.attempts,
        "next_attempt_at": views.iso(row.next_attempt_at),
        "last_status": row.last_status,
        "created_at": views.iso(row.created_at),
        "delivered_at": views.iso(row.delivered_at),
        "leased": row.leased,
    }


def _one(engine: Any, subscription_id: UUID, whole_url: bool) -> dict[str, Any]:
    row = reads.subscription(engine, subscription_id)
    return subscription_view(row, reads.counts(engine, subscription_id), whole_url)


def _all(engine: Any, whole_url: bool) -> list[dict[str, Any]]:
    return [
        subscription_view(row, reads.counts(engine, row.id), whole_url)
        for row in reads.subscriptions(engine)
    ]


def _whole_url(request: Request) -> bool:
    """Whether the caller may see URLs whole: who manages subscriptions (Gate.ADMINISTER)."""
    return gates.passes(actors.current(), Gate.ADMINISTER)


def _events(body: Body) -> tuple[str, ...] | None:
    return body.strings("event_types")


async def list_subscriptions(request: Request) -> Response:
    return reply(views.items(await call(_all, engine_of(request), _whole_url(request))))


async def get_subscription(request: Request) -> Response:
    return reply(await call(_one, engine_of(request), path_id(request), _whole_url(request)))


async def create_subscription(request: Request) -> Response:
    body = await Body.read(request, CREATE_BODY)
    command = CreateSubscription(
        body.required_text("name"),
        body.required_text("url"),
        body.required_text("secret"),
        event_types=_events(body) or (),
        definition_key=body.text("definition_key"),
        enabled=body.boolean("enabled", True),
    )
    made = await run(request, command)
    shown = await call(_one, engine_of(request), UUID(made.subscription_id), _whole_url(request))
    return reply(shown, 201)


async def update_subscription(request: Request) -> Response:
    body = await Body.read(request, UPDATE_BODY)
    subscription_id = path_id(request)
    key = body.text("definition_key")
    command = UpdateSubscription(
        subscription_id,
        title=body.text("name"),
        url=body.text("url"),
        secret=body.text("secret"),
        event_types=_events(body),
        # null clears the filter, as "" does; absent keeps it.
        definition_key=("" if key is None else key) if "definition_key" in body.data else None,
        enabled=None if body.data.get("enabled") is None else body.boolean("enabled", True),
    )
    done = await run(request, command)
    same_target(request, str(subscription_id), done.subscription_id)
    return reply(await call(_one, engine_of(request), subscription_id, _whole_url(request)))


async def delete_subscription(request: Request) -> Response:
    subscription_id = path_id(request)
    done = await run(request, DeleteSubscription(subscription_id))
    same_target(request, str(subscription_id), done.subscription_id)
    return Response(status_code=204)


async def list_deliveries(request: Request) -> Response:
    query = Query(request.query_params)
    state = query.one_of("state", [s.value for s in DeliveryState])
    limit = query.integer("limit", 50, minimum=1, maximum=500)
    subscription_id = path_id(request)
    engine = engine_of(request)
    await call(reads.subscription, engine, subscription_id)  # 404 for an unknown one
    found = await call(
        reads.deliveries, engine, subscription_id, DeliveryState(state) if state else None, limit
    )
    return reply(views.items([delivery_view(d) for d in found]))


async def replay_all(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    subscription_id = path_id(request)
    done = await run(request, ReplayDeadLetters(subscription_id))
    same_target(request, str(subscription_id), done.subscription_id)
    return reply({"subscription_id": done.subscription_id, "replayed": done.replayed})


async def replay_one(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    subscription_id = path_id(request)
    done = await run(request, ReplayDeadLetters(subscription_id, path_id(request, "delivery_id")))
    same_target(request, str(subscription_id), done.subscription_id)
    return reply({"subscription_id": done.subscription_id, "replayed": done.replayed})


operations = [
    Op(
        "GET",
        "/webhooks",
        list_subscriptions,
        "List webhook subscriptions (never their secrets)",
        replies={200: Reply("Subscriptions", SUBSCRIPTIONS)},
        gate=Gate.APPLICATION,
    ),
    Op(
        "POST",
        "/webhooks",
        create_subscription,
        "Create a webhook subscription; it receives the events committed from now on",
        body=CREATE_BODY,
        body_required=True,
        replies={201: Reply("Created", SUBSCRIPTION)},
    ),
    Op(
        "GET",
        "/webhooks/{id}",
        get_subscription,
        "A webhook subscription with its deliveries by state",
        replies={200: Reply("Subscription", SUBSCRIPTION)},
        gate=Gate.APPLICATION,
    ),
    Op(
        "POST",
        "/webhooks/{id}",
        update_subscription,
        "Change the fields given; enabling a disabled subscription starts it from now",
        body=UPDATE_BODY,
        replies={200: Reply("Changed", SUBSCRIPTION)},
    ),
    Op(
        "DELETE",
        "/webhooks/{id}",
        delete_subscription,
        "Delete a webhook subscription with its deliveries",
        replies={204: Reply("Deleted", None)},
    ),
    Op(
        "GET",
        "/webhooks/{id}/deliveries",
        list_deliveries,
        "A subscription's deliveries, newest first",
        query=(
            Param("state", {**STRING, "enum": [s.value for s in DeliveryState]}),
            Param("limit", INTEGER, "at most this many (1 to 500, default 50)"),
        ),
        replies={200: Reply("Deliveries", DELIVERIES)},
        gate=Gate.APPLICATION,
    ),
    Op(
        "POST",
        "/webhooks/{id}/replay",
        replay_all,
        "Attempt every dead letter of the subscription again, in order per instance",
        body=NO_BODY,
        replies={200: Reply("Replayed", REPLAYED)},
    ),
    Op(
        "POST",
        "/webhooks/{id}/deliveries/{delivery_id}/replay",
        replay_one,
        "Attempt one dead letter again",
        body=NO_BODY,
        replies={200: Reply("Replayed", REPLAYED)},
    ),
]
