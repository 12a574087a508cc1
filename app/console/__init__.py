"""Routes of the operations console."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from app.templating import templates
from engine.api import Engine


async def status_page(request: Request) -> Response:
    engine: Engine = request.app.state.engine
    definitions = await run_in_threadpool(engine.definitions)
    counts = await run_in_threadpool(engine.instance_counts)
    return templates.TemplateResponse(
        request, "status.html", {"definitions": definitions, "counts": counts}
    )


routes: list[BaseRoute] = [Route("/", status_page)]
