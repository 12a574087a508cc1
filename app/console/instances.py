"""The instance list: filters, keyset pagination (newest first), rows refreshed live."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from engine.api import Engine
from engine.errors import BadRequest, InterlockError
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
)


@dataclass(frozen=True)
class Row:
    info: InstanceInfo
    version: int | None
    incidents: int


def _moment(raw: str, what: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise BadRequest(f"{what}: '{raw}' is not a date and time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _value(raw: str) -> Any:
    """What the operator typed: JSON when it parses (42, true, "text"), else the text itself."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def parse_filter(params: dict[str, str]) -> InstanceFilter:
    version = params.get("version")
    incident = params.get("incident")
    variables: tuple[tuple[str, Any], ...] = ()
    if params.get("var_name"):
        variables = ((params["var_name"], _value(params.get("var_value", ""))),)
    try:
        version_number = int(version) if version else None
    except ValueError as exc:
        raise BadRequest(f"version must be a number, not '{version}'") from exc
    return InstanceFilter(
        definition_key=params.get("definition") or None,
        version=version_number,
        state=params.get("state") or None,
        business_key=params.get("business_key") or None,
        has_incident={"yes": True, "no": False}.get(incident or ""),
        started_after=_moment(params["started_from"], "started from")
        if params.get("started_from")
        else None,
        started_before=_moment(params["started_to"], "started until")
        if params.get("started_to")
        else None,
        variables=variables,
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
    params = {k: v.strip() for k, v in request.query_params.items() if k in FILTER_FIELDS}
    after = request.query_params.get("after") or None
    error: str | None = None
    rows: list[Row] = []
    next_cursor: str | None = None
    try:
        where = parse_filter(params)
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
    if request.query_params.get("fragment") == "rows":
        return render(request, "_instance_rows.html", context, status_code=400 if error else 200)
    keys = await read(request, _keys, engine)
    return render(
        request,
        "instances.html",
        {"page": "instances", "keys": keys, "states": STATES, **context},
    )


routes = [Route("/instances", instances_page, methods=["GET"])]
