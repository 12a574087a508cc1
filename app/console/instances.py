"""The instance list: filters, keyset pagination (newest first), rows refreshed live."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.params import Query
from engine.api import Engine
from engine.errors import InterlockError
from engine.queries import console
from engine.queries.instances import InstanceFilter, InstanceInfo

PAGE_SIZE = 50
STATES = ("Active", "Suspended", "Completed", "Terminated")
FILTER_FIELDS = (
    "definition",
    "version",
    "state",
    "business_key",
    "incident",
    "started_from",
    "started_to",
    "var_name",
    "var_value",
    "root",
    "called_by",
)


@dataclass(frozen=True)
class Row:
    info: InstanceInfo
    version: int | None
    incidents: int


def _value(raw: str) -> Any:
    """What the operator typed: JSON when it parses (42, true, "text"), else the text itself."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_filter(parameters: Query) -> InstanceFilter:
    variables: tuple[tuple[str, Any], ...] = ()
    variable = parameters.text("var_name")
    if variable is not None:
        variables = ((variable, _value(parameters.text("var_value") or "")),)
    return InstanceFilter(
        definition_key=parameters.text("definition"),
        version=parameters.integer("version"),
        state=parameters.text("state"),
        business_key=parameters.text("business_key"),
        has_incident={"yes": True, "no": False}.get(parameters.text("incident") or ""),
        started_after=parameters.date("started_from"),
        started_before=parameters.date("started_to"),
        variables=variables,
        root_only=parameters.flag("root") or None,
        super_instance_id=parameters.uuid("called_by"),
    )


def _page(engine: Engine, where: InstanceFilter, after: str | None) -> tuple[list[Row], str | None]:
    page = engine.list_instances(where, limit=PAGE_SIZE, after=after)
    versions = console.definition_versions(engine, sorted({i.definition_id for i in page.items}))
    incidents = console.open_incident_counts(engine, [i.id for i in page.items])
    rows = [Row(i, versions.get(i.definition_id), incidents.get(i.id, 0)) for i in page.items]
    return rows, page.next


def _keys(engine: Engine) -> list[str]:
    return console.definition_keys(engine)


async def instances_page(request: Request) -> Response:
    engine = engine_of(request)
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    after = parameters.text("after")
    error: str | None = None
    rows: list[Row] = []
    next_cursor: str | None = None
    try:
        where = parse_filter(Query(QueryParams(params)))
        rows, next_cursor = await read(request, _page, engine, where, after)
    except InterlockError as exc:
        error = exc.message
    query = urlencode({k: v for k, v in params.items() if v})
    context = {
        "rows": rows,
        "next_cursor": next_cursor,
        "after": after,
        "query": query,
        "params": params,
        "error": error,
        "rows_url": "/instances?"
        + urlencode(
            {
                **{k: v for k, v in params.items() if v},
                "fragment": "rows",
                **({"after": after} if after else {}),
            }
        ),
    }
    if parameters.text("fragment") == "rows":
        return render(request, "_instance_rows.html", context, status_code=400 if error else 200)
    keys = await read(request, _keys, engine)
    return render(
        request,
        "instances.html",
        {"page": "instances", "keys": keys, "states": STATES, **context},
    )


routes = [Route("/instances", instances_page, methods=["GET"])]
