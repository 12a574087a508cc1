"""The history cleanup: its settings, its job, the run in progress and the latest runs, and a
button (operators) that starts a run now."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.auth import require
from app.console.common import act, engine_of, read, render
from app.gates import Gate
from app.params import Query
from engine.api import Engine
from engine.commands.cleanup import StartHistoryCleanup
from engine.identity.accounts import Principal
from engine.queries import cleanup


def _cleanup(engine: Engine) -> dict[str, Any]:
    return {
        "now": datetime.now(UTC),
        "settings": engine.executor.settings.retention,
        "status": cleanup.status(engine),
    }


async def cleanup_page(request: Request) -> Response:
    require(request, Gate.APPLICATION)
    context = await read(request, _cleanup, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_cleanup.html", context)
    return render(request, "cleanup.html", {"page": "cleanup", **context})


def _start(engine: Engine, who: Principal, form: Mapping[str, str]) -> str:
    engine.run(StartHistoryCleanup())
    return "History cleanup started: it runs batch after batch until nothing is left past its time."


async def start_cleanup(request: Request) -> Response:
    return await act(request, _start)


routes = [
    Route("/cleanup", cleanup_page, methods=["GET"]),
    Route("/cleanup/start", start_cleanup, methods=["POST"]),
]
