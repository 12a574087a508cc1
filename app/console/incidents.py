"""The open incidents, with filters, a page at a time (oldest first, continuing after a cursor),
or grouped by node and message with their counts (`group=node`), a group's incidents shown when
it is unfolded; retry one, many with visible progress, or a group as a batch. Nodes are shown by
their names, their ids on hover."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.console.exports import Column, check_format, export
from app.console.views import saved_views
from app.params import Query
from engine.api import Engine
from engine.errors import InterlockError, NotFound
from engine.queries import console, lists
from engine.queries import definitions as definition_reads
from engine.queries.lists import FILTERS, IncidentFilter
from engine.states import ListPage

FILTER_FIELDS = FILTERS[ListPage.INCIDENTS]
# How the page shows its incidents besides one by one: grouped by node and message.
GROUPINGS = ("node",)
COLUMNS: list[Column] = [
    ("id", lambda i: i.id),
    ("type", lambda i: i.type),
    ("message", lambda i: i.message),
    ("instance_id", lambda i: i.instance_id),
    ("definition_key", lambda i: i.definition_key),
    ("business_key", lambda i: i.business_key),
    ("definition_id", lambda i: i.definition_id),
    ("node_id", lambda i: i.node_id),
    ("token_id", lambda i: i.token_id),
    ("job_id", lambda i: i.job_id),
    ("external_task_id", lambda i: i.external_task_id),
    ("created_at", lambda i: i.created_at),
]


def filter_of(params: dict[str, str]) -> IncidentFilter:
    """The filter the page's URL names: the page and its export read it this one way."""
    return IncidentFilter(
        definition_key=params.get("definition"),
        incident_type=params.get("type"),
        node_id=params.get("node"),
        text=params.get("text"),
        message=params.get("message"),
    )


def node_names(engine: Engine, nodes: set[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """The name of each (definition id, key, node id) of `nodes` that has one, by (definition
    id, node id), from the definitions' parsed models (cached)."""
    names: dict[tuple[str, str], str] = {}
    for definition_id, key, node_id in nodes:
        try:
            model = definition_reads.model(engine, engine.definition_cache, definition_id, key)
            name = model.node(node_id).name
        except (NotFound, KeyError):
            continue
        if name:
            names[definition_id, node_id] = name
    return names


def _incidents(
    engine: Engine, where: IncidentFilter, after: str | None, grouped: bool
) -> dict[str, Any]:
    if grouped:
        groups = lists.incident_groups(engine, where)
        nodes = {(g.definition_id, g.definition_key, g.node_id) for g in groups}
        return {
            "groups": groups,
            "node_names": node_names(engine, nodes),
            "incidents": [],
            "next_cursor": None,
        }
    page = lists.incident_page(engine, where, after)
    nodes = {(i.definition_id, i.definition_key, i.node_id) for i in page.items}
    return {
        "incidents": page.items,
        "next_cursor": page.next,
        "node_names": node_names(engine, nodes),
    }


def _choices(engine: Engine) -> dict[str, Any]:
    return {"keys": console.definition_keys(engine), "types": console.incident_types(engine)}


async def incidents_page(request: Request) -> Response:
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    after = parameters.text("after")
    fragment = parameters.text("fragment")
    context: dict[str, Any] = {"incidents": [], "groups": [], "next_cursor": None, "error": None}
    grouped = False
    try:
        # A group's incidents (fragment=group) are a list, whatever the page shows.
        grouped = parameters.one_of("group", GROUPINGS) == "node" and fragment != "group"
        context = await read(
            request, _incidents, engine_of(request), filter_of(params), after, grouped
        )
    except InterlockError as exc:
        context["error"] = exc.message
    filters = {k: v for k, v in params.items() if v}
    query = urlencode(filters)
    listed = {k: v for k, v in filters.items() if k != "group"}
    context.update(
        params=params,
        query=query,
        after=after,
        grouped=grouped,
        nested=fragment == "group",
        list_url="/incidents" + ("?" + urlencode(listed) if listed else ""),
        groups_url="/incidents?" + urlencode({**listed, "group": "node"}),
        page_size=lists.PAGE_SIZE,
        rows_url="/incidents?"
        + urlencode({**filters, "fragment": "rows", **({"after": after} if after else {})}),
    )
    if fragment in ("rows", "group"):
        status = 400 if context.get("error") else 200
        return render(request, "_incident_rows.html", context, status_code=status)
    context.update(await read(request, _choices, engine_of(request)))
    context.update(await saved_views(request, ListPage.INCIDENTS, query))
    return render(request, "incidents.html", {"page": "incidents", **context})


async def incidents_export(request: Request) -> Response:
    """Every open incident the list's filters match, oldest first: CSV or JSON, streamed."""
    format = check_format(request.path_params["format"])
    where = filter_of(Query(request.query_params).fields(FILTER_FIELDS))
    return await export("incidents", format, COLUMNS, lists.incidents(engine_of(request), where))


routes = [
    Route("/incidents", incidents_page, methods=["GET"]),
    Route("/incidents/export.{format}", incidents_export, methods=["GET"]),
]
