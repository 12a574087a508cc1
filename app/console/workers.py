"""External-task workers: topics, tasks locked now with their owners, and expired leases (the
LEASES_SHOWN whose locks expire, or expired, first)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.params import Query
from engine.api import Engine
from engine.queries import console

# How many leases each list shows at most.
LEASES_SHOWN = 100


def _workers(engine: Engine) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "now": now,
        "topics": console.topics(engine, now),
        "locked": console.leases(engine, now, expired=False, limit=LEASES_SHOWN),
        "expired": console.leases(engine, now, expired=True, limit=LEASES_SHOWN),
        "leases_shown": LEASES_SHOWN,
    }


async def workers_page(request: Request) -> Response:
    context = await read(request, _workers, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_workers.html", context)
    return render(request, "workers.html", {"page": "workers", **context})


routes = [Route("/workers", workers_page, methods=["GET"])]
