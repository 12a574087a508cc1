"""Webhooks in the console: the subscriptions (everyone reads; admins create, change and delete
them), and a subscription's page with its recent deliveries, failures and dead letters, where an
operator replays one dead letter or all of them. The secret is write-only: a form may set it,
no page shows it. URLs are shown whole to admins only; others see them masked
(`engine.webhooks.urls.masked`: the userinfo and every query value as `***`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import gates
from app.auth import require
from app.console.common import engine_of, flash, form_text, read, render
from app.gates import Gate
from app.params import Query
from engine.api import Engine
from engine.commands.webhooks import (
    CreateSubscription,
    DeleteSubscription,
    ReplayDeadLetters,
    UpdateSubscription,
)
from engine.core import actors
from engine.errors import InterlockError
from engine.identity.accounts import Principal
from engine.queries import webhooks as reads
from engine.states import DeliveryState, OutboxEvent
from engine.webhooks.urls import masked

EVENTS = [event.value for event in OutboxEvent]


def _shown(row: reads.SubscriptionRow, whole_url: bool) -> reads.SubscriptionRow:
    """The row as a page shows it: its URL whole only for admins."""
    return row if whole_url else replace(row, url=masked(row.url))


def _listing(engine: Engine, whole_url: bool) -> dict[str, Any]:
    rows = reads.subscriptions(engine)
    return {
        "subscriptions": [(_shown(row, whole_url), reads.counts(engine, row.id)) for row in rows]
    }


def _details(engine: Engine, subscription_id: UUID, whole_url: bool) -> dict[str, Any]:
    pending = reads.deliveries(engine, subscription_id, DeliveryState.PENDING, 200)
    return {
        "subscription": _shown(reads.subscription(engine, subscription_id), whole_url),
        "counts": reads.counts(engine, subscription_id),
        "recent": reads.deliveries(engine, subscription_id, None, 50),
        "failing": [d for d in pending if d.last_status is not None],
        "dead": reads.deliveries(engine, subscription_id, DeliveryState.DEAD, 200),
    }


def _page_context(request: Request) -> dict[str, Any]:
    require(request, Gate.APPLICATION)
    return {"events": EVENTS, "can_admin": gates.passes(actors.current(), Gate.ADMINISTER)}


async def webhooks_page(request: Request) -> Response:
    context = _page_context(request)
    context |= await read(request, _listing, engine_of(request), context["can_admin"])
    if Query(request.query_params).text("fragment"):
        return render(request, "_webhook_rows.html", context)
    return render(request, "webhooks.html", {"page": "webhooks", **context})


async def webhook_page(request: Request) -> Response:
    subscription_id: UUID = request.path_params["subscription_id"]
    context = _page_context(request)
    context |= await read(
        request, _details, engine_of(request), subscription_id, context["can_admin"]
    )
    if Query(request.query_params).text("fragment"):
        return render(request, "_webhook_deliveries.html", context)
    return render(request, "webhook.html", {"page": "webhooks", **context})


Work = Callable[[Engine, Principal, FormData], str]


async def _mutate(request: Request, work: Work) -> Response:
    try:
        principal = require(request)
        form = await request.form()
        message = await run_in_threadpool(work, engine_of(request), principal, form)
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=message)


def _events(form: FormData) -> tuple[str, ...]:
    return tuple(v for v in form.getlist("event_types") if isinstance(v, str))


async def create(request: Request) -> Response:
    def work(engine: Engine, who: Principal, form: FormData) -> str:
        engine.run(
            CreateSubscription(
                form_text(form, "name"),
                form_text(form, "url"),
                form_text(form, "secret"),
                event_types=_events(form),
                definition_key=form_text(form, "definition_key") or None,
                enabled=form_text(form, "enabled") == "on",
            )
        )
        return f"Subscription '{form_text(form, 'name').strip()}' created."

    return await _mutate(request, work)


async def update(request: Request) -> Response:
    subscription_id: UUID = request.path_params["subscription_id"]

    def work(engine: Engine, who: Principal, form: FormData) -> str:
        engine.run(
            UpdateSubscription(
                subscription_id,
                title=form_text(form, "name"),
                url=form_text(form, "url"),
                # Empty: keep the secret that is set.
                secret=form_text(form, "secret") or None,
                event_types=_events(form),
                definition_key=form_text(form, "definition_key"),
                enabled=form_text(form, "enabled") == "on",
            )
        )
        return "Subscription saved."

    return await _mutate(request, work)


async def delete(request: Request) -> Response:
    subscription_id: UUID = request.path_params["subscription_id"]

    def work(engine: Engine, who: Principal, form: FormData) -> str:
        engine.run(DeleteSubscription(subscription_id))
        return "Subscription deleted with its deliveries."

    return await _mutate(request, work)


async def replay_all(request: Request) -> Response:
    subscription_id: UUID = request.path_params["subscription_id"]

    def work(engine: Engine, who: Principal, form: FormData) -> str:
        replayed = engine.run(ReplayDeadLetters(subscription_id)).replayed
        return f"Replaying {replayed} dead letter{'s' if replayed != 1 else ''}."

    return await _mutate(request, work)


async def replay_one(request: Request) -> Response:
    subscription_id: UUID = request.path_params["subscription_id"]
    delivery_id: UUID = request.path_params["delivery_id"]

    def work(engine: Engine, who: Principal, form: FormData) -> str:
        engine.run(ReplayDeadLetters(subscription_id, delivery_id))
        return "Replaying the dead letter."

    return await _mutate(request, work)


routes = [
    Route("/webhooks", webhooks_page, methods=["GET"]),
    Route("/webhooks", create, methods=["POST"]),
    Route("/webhooks/{subscription_id:uuid}", webhook_page, methods=["GET"]),
    Route("/webhooks/{subscription_id:uuid}", update, methods=["POST"]),
    Route("/webhooks/{subscription_id:uuid}/delete", delete, methods=["POST"]),
    Route("/webhooks/{subscription_id:uuid}/replay", replay_all, methods=["POST"]),
    Route(
        "/webhooks/{subscription_id:uuid}/deliveries/{delivery_id:uuid}/replay",
        replay_one,
        methods=["POST"],
    ),
]
