"""`GET /metrics`: this process's metrics in the Prometheus text format (engine/observe/metrics.py).

Any role may read them (viewer and above), as it may read the rest of the API: a scraper sends a
Bearer token or HTTP Basic, a console session works too, and anyone else gets a 401. The
database is read for the scrape under a short timeout; when it does not answer,
`interlock_database_up` is 0 and the scrape still answers 200.
"""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.auth import require
from engine.api import Engine
from engine.identity.accounts import Role
from engine.queries.metrics import exposition

PATH = "/metrics"


async def metrics(request: Request) -> Response:
    require(request, Role.VIEWER)
    engine: Engine = request.app.state.engine
    body: bytes = await run_in_threadpool(exposition, engine)
    return Response(body, media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


routes = [Route(PATH, metrics, methods=["GET"])]
