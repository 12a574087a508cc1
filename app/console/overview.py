"""The overview: instances by state, open incidents, the last hour, jobs and workers."""

from __future__ import annotations

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from engine.api import Engine
from engine.queries import console
from engine.queries.console import Activity


def _activity(engine: Engine) -> Activity:
    return console.activity(engine, datetime.now(UTC))


async def overview(request: Request) -> Response:
    activity = await read(request, _activity, engine_of(request))
    return render(request, "overview.html", {"a": activity, "page": "overview"})


async def overview_fragment(request: Request) -> Response:
    activity = await read(request, _activity, engine_of(request))
    return render(request, "_overview.html", {"a": activity})


routes = [
    Route("/", overview, methods=["GET"]),
    Route("/overview/body", overview_fragment, methods=["GET"]),
]
