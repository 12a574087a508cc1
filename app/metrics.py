"""`GET /metrics`: this process's metrics in the Prometheus text format (engine/observe/metrics.py).

Any signed-in principal may ask for them, as for the rest of the API: a scraper sends a
Bearer token or HTTP Basic, a console session works too, and anyone else gets a 401. No metric
is labelled by definition or instance, but some count over every instance (open incidents, job
lag): a principal whose grants do not read every process instance (READ_INSTANCE on every
definition) gets a 403. The
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
from app.errors import Forbidden
from engine.api import Engine
from engine.core import actors
from engine.identity.permissions import PD, permission_bits
from engine.queries.metrics import exposition

PATH = "/metrics"


async def metrics(request: Request) -> Response:
    require(request)
    if not actors.scope(permission_bits(PD, ["READ_INSTANCE"]), PD).unrestricted:
        raise Forbidden("the metrics count every process instance: they need READ_INSTANCE on *")
    engine: Engine = request.app.state.engine
    body: bytes = await run_in_threadpool(exposition, engine)
    return Response(body, media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


routes = [Route(PATH, metrics, methods=["GET"])]
