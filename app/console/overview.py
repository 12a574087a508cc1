"""The overview: instances by state, open incidents, the last hour, jobs and workers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console import alerts
from app.console.common import engine_of, read, render
from engine.api import Engine
from engine.queries import console
from engine.queries.console import Activity


def _activity(engine: Engine) -> dict[str, Any]:
    activity: Activity = console.activity(engine, datetime.now(UTC))
    return {"a": activity, "alert_total": alerts.overview_count(engine)}


async def overview(request: Request) -> Response:
    activity = await read(request, _activity, engine_of(request))
    return render(request, "overview.html", {**activity, "page": "overview"})


async def overview_fragment(request: Request) -> Response:
    activity = await read(request, _activity, engine_of(request))
    return render(request, "_overview.html", activity)


routes = [
    Route("/", overview, methods=["GET"]),
    Route("/overview/body", overview_fragment, methods=["GET"]),
]
