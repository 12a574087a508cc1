"""Stuck-instance alerts in the console: the Alerts page (every instance past a threshold now,
longest over first, live), and a definition's Alerts panel (its count, its thresholds, adding
and removing one: POSTs with the session's CSRF token that run the engine's commands, which
check UPDATE or UPDATE_INSTANCE on the definition and audit the change).

The page and the panel read the alerts as of the engine's clock, so an alert appears when the
time passes: the alert watch's tick records the crossing, and its `alert.raised` event is what
refreshes a page that is open (engine/commands/alerts.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import act, engine_of, read, render
from app.params import Query
from engine.api import Engine
from engine.commands.alerts import RemoveAlertThreshold, SetAlertThreshold
from engine.identity.accounts import Principal
from engine.language.alerts import spoken
from engine.queries import alerts as reads
from engine.states import AlertKind

KINDS = [kind.value for kind in AlertKind]
KIND_WORDS = {AlertKind.WAITING.value: "waiting", AlertKind.INCIDENT.value: "incident open"}


def _filters(request: Request) -> dict[str, str | None]:
    params = Query(request.query_params)
    return {
        "definition": params.text("definition", strip=True) or None,
        "kind": params.one_of("kind", KINDS),
    }


def _listing(engine: Engine, filters: Mapping[str, str | None]) -> dict[str, Any]:
    now = engine.clock()
    kind = AlertKind(filters["kind"]) if filters["kind"] else None
    rows = reads.open_alerts(engine, now, filters["definition"], kind)
    counts = reads.counts(engine, now, filters["definition"])
    return {
        "alerts": rows,
        "alert_total": reads.total(counts),
        "alert_counts": counts,
        "keys": sorted({t.definition_key for t in reads.thresholds(engine)}),
        "params": {k: v or "" for k, v in filters.items()},
        "kinds": KIND_WORDS,
        "spoken": spoken,
    }


async def alerts_page(request: Request) -> Response:
    listing = await read(request, _listing, engine_of(request), _filters(request))
    return render(request, "alerts.html", {"page": "alerts", **listing})


async def alerts_body(request: Request) -> Response:
    listing = await read(request, _listing, engine_of(request), _filters(request))
    return render(request, "_alert_rows.html", listing)


def panel(engine: Engine, key: str) -> dict[str, Any]:
    definition = engine.latest_definition(key)
    model = engine.model(definition.id, definition.key)
    now = engine.clock()
    return {
        "alert_key": definition.key,
        "alert_total": reads.total(reads.counts(engine, now, definition.key)),
        "thresholds": reads.thresholds(engine, definition.key),
        "nodes": sorted(((n.id, n.name or n.id) for n in model.nodes), key=lambda n: n[1].lower()),
        "node_names": {n.id: n.name or n.id for n in model.nodes},
        "kinds": KIND_WORDS,
        "spoken": spoken,
    }


async def definition_alerts(request: Request) -> Response:
    details = await read(request, panel, engine_of(request), request.path_params["key"])
    return render(request, "_alert_panel.html", details)


async def add_threshold(request: Request) -> Response:
    key = request.path_params["key"]

    def work(engine: Engine, principal: Principal, form: Mapping[str, str]) -> str:
        node, kind, duration = (
            form.get("node_id", ""),
            form.get("kind", ""),
            form.get("duration", ""),
        )
        engine.run(SetAlertThreshold(key, node, kind, duration))
        return f"Alert set: {KIND_WORDS.get(kind, kind)} at {node} longer than {duration.strip()}."

    return await act(request, work)


async def remove_threshold(request: Request) -> Response:
    threshold_id: UUID = request.path_params["threshold_id"]

    def work(engine: Engine, principal: Principal, form: Mapping[str, str]) -> str:
        engine.run(RemoveAlertThreshold(threshold_id))
        return "Alert removed."

    return await act(request, work)


def overview_count(engine: Engine) -> int:
    """The overview's count: every instance past a threshold that the reader may see."""
    return reads.total(reads.counts(engine, engine.clock()))


routes = [
    Route("/alerts", alerts_page, methods=["GET"]),
    Route("/alerts/body", alerts_body, methods=["GET"]),
    Route("/definitions/{key}/alerts", definition_alerts, methods=["GET"]),
    Route("/definitions/{key}/alerts", add_threshold, methods=["POST"]),
    Route("/alerts/thresholds/{threshold_id:uuid}/delete", remove_threshold, methods=["POST"]),
]
