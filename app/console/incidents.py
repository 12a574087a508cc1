"""Every open incident, with filters; retry one, or many with visible progress."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.params import Query
from engine.api import Engine
from engine.queries import console

FILTER_FIELDS = ("definition", "type", "node", "text")


def _incidents(engine: Engine, params: dict[str, str]) -> dict[str, Any]:
    incidents = console.open_incidents(
        engine,
        definition_key=params.get("definition") or None,
        incident_type=params.get("type") or None,
        node_id=params.get("node") or None,
        text=params.get("text") or None,
    )
    keys = console.definition_keys(engine)
    types = console.incident_types(engine)
    return {"incidents": incidents, "keys": keys, "types": types}


async def incidents_page(request: Request) -> Response:
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    context = await read(request, _incidents, engine_of(request), params)
    query = urlencode({k: v for k, v in params.items() if v})
    context.update(
        params=params, rows_url="/incidents?" + (query + "&" if query else "") + "fragment=rows"
    )
    if parameters.text("fragment") == "rows":
        return render(request, "_incident_rows.html", context)
    return render(request, "incidents.html", {"page": "incidents", **context})


routes = [Route("/incidents", incidents_page, methods=["GET"])]
