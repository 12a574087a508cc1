"""The instance list: filters, a sort by column (newest first by default), keyset pagination,
rows refreshed live."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.console.exports import Column, check_format, export
from app.console.views import saved_views
from app.params import Query
from engine.api import Engine
from engine.errors import BadRequest, InterlockError
from engine.queries import console, lists
from engine.queries import instances as instance_reads
from engine.queries import variables as variable_reads
from engine.queries.instances import InstanceFilter, InstanceSort, Sort
from engine.queries.lists import FILTERS, InstanceRow
from engine.states import ListPage

PAGE_SIZE = 50
# How many variables an export takes as columns, and how long a name may be.
MAX_VARIABLE_COLUMNS = 50
MAX_VARIABLE_NAME = 200
STATES = ("Active", "Suspended", "Completed", "Terminated")
YES_NO = {"yes": True, "no": False}
FILTER_FIELDS = FILTERS[ListPage.INSTANCES]
COLUMNS: list[Column] = [
    ("id", lambda r: r.info.id),
    ("definition_key", lambda r: r.info.definition_key),
    ("version", lambda r: r.version),
    ("business_key", lambda r: r.info.business_key),
    ("state", lambda r: r.info.state),
    ("open_incidents", lambda r: r.incidents),
    ("started_at", lambda r: r.info.started_at),
    ("ended_at", lambda r: r.info.ended_at),
    ("super_instance_id", lambda r: r.info.super_instance_id),
    ("root_instance_id", lambda r: r.info.root_instance_id),
]


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
        has_incident=YES_NO.get(parameters.text("incident") or ""),
        retrying=YES_NO.get(parameters.one_of("retrying", YES_NO) or ""),
        started_after=parameters.date("started_from"),
        started_before=parameters.date("started_to"),
        variables=variables,
        root_only=parameters.flag("root") or None,
        super_instance_id=parameters.uuid("called_by"),
    )


# The columns the list sorts by, as its header names them, and the direction a first click asks
# for: times newest first, text A to Z.
SORTABLE: dict[str, tuple[InstanceSort, str]] = {
    "Definition": (InstanceSort.DEFINITION, "asc"),
    "Business key": (InstanceSort.BUSINESS_KEY, "asc"),
    "State": (InstanceSort.STATE, "asc"),
    "Started (UTC)": (InstanceSort.STARTED, "desc"),
    "Ended (UTC)": (InstanceSort.ENDED, "desc"),
}
ORDERS = ("asc", "desc")


def sort_of(parameters: Query) -> Sort:
    """The sort the URL names (`sort`, `order`); none: newest first. Another value is a 400
    naming the parameter."""
    by = InstanceSort(parameters.one_of("sort", [s.value for s in InstanceSort]) or "started")
    order = parameters.one_of("order", ORDERS)
    default = next(first for column, first in SORTABLE.values() if column is by)
    return Sort(by, (order or default) == "desc")


def sort_links(params: dict[str, str], sort: Sort) -> list[dict[str, Any]]:
    """The header's sortable columns: each a link to the list sorted by it (the current one in
    the other direction), and how the list is sorted by it now (None: not)."""
    filters = {k: v for k, v in params.items() if v and k not in ("sort", "order")}
    links = []
    for label, (by, first) in SORTABLE.items():
        current = by is sort.by
        order = ("asc" if sort.descending else "desc") if current else first
        links.append(
            {
                "label": label,
                "key": by.value,
                "href": "/instances?" + urlencode({**filters, "sort": by.value, "order": order}),
                "current": ("descending" if sort.descending else "ascending") if current else None,
            }
        )
    return links


def filter_of(parameters: Query) -> InstanceFilter:
    """The filter the page's URL names: the page and its export read it this one way."""
    return parse_filter(Query(QueryParams(parameters.fields(FILTER_FIELDS))))


def _page(
    engine: Engine, where: InstanceFilter, after: str | None, sort: Sort
) -> tuple[list[InstanceRow], str | None]:
    page = instance_reads.page(engine, where, limit=PAGE_SIZE, after=after, sort=sort)
    return lists.instance_rows(engine, page.items), page.next


def _keys(engine: Engine) -> list[str]:
    return console.definition_keys(engine)


async def instances_page(request: Request) -> Response:
    engine = engine_of(request)
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    after = parameters.text("after")
    error: str | None = None
    rows: list[InstanceRow] = []
    next_cursor: str | None = None
    sort = Sort()
    try:
        sort = sort_of(parameters)
        where = filter_of(parameters)
        rows, next_cursor = await read(request, _page, engine, where, after, sort)
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
        "sort_links": sort_links(params, sort),
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
    context.update(await saved_views(request, ListPage.INSTANCES, query))
    return render(
        request,
        "instances.html",
        {"page": "instances", "keys": keys, "states": STATES, **context},
    )


def variable_names(parameters: Query) -> list[str]:
    """The variables an export adds as columns (`variables=amount,customer`), each once, in
    the order given; at most `MAX_VARIABLE_COLUMNS`."""
    names = list(dict.fromkeys(name.strip() for name in parameters.csv("variables") or []))
    names = [name for name in names if name]
    if len(names) > MAX_VARIABLE_COLUMNS:
        raise BadRequest(
            f"variables: at most {MAX_VARIABLE_COLUMNS} can be exported as columns",
            field="variables",
        )
    for name in names:
        if len(name) > MAX_VARIABLE_NAME:
            raise BadRequest(
                f"variables: a name must be at most {MAX_VARIABLE_NAME} characters",
                field="variables",
            )
    return names


def _cell(value: Any, format: str) -> Any:
    """A variable's value as a cell: JSON values (objects, lists) as JSON text in CSV."""
    if format == "csv" and isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _variable_columns(names: list[str], format: str) -> list[Column]:
    if format == "json":
        return [("variables", lambda r: {n: r[1][n] for n in names if n in r[1]})]
    return [(f"variables.{name}", _variable_cell(name, format)) for name in names]


def _variable_cell(name: str, format: str) -> Callable[[Any], Any]:
    return lambda row: _cell(row[1].get(name), format)


def _of_instance(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda row: read(row[0])


def _with_variables(
    engine: Engine, batches: Iterator[list[InstanceRow]], names: list[str]
) -> Iterator[list[tuple[InstanceRow, dict[str, Any]]]]:
    """Each batch's rows with the values of `names` (one more statement per batch)."""
    for batch in batches:
        values = variable_reads.root_values(engine, [r.info.id for r in batch], names)
        yield [(r, values.get(r.info.id, {})) for r in batch]


async def instances_export(request: Request) -> Response:
    """Every instance the list's filters match, in the list's sort: CSV or JSON, streamed;
    with `variables`, the values of those instance variables as more columns (CSV:
    `variables.NAME`, JSON: a `variables` object of those the instance has). A filter that
    does not read is a 400 naming it."""
    format = check_format(request.path_params["format"])
    parameters = Query(request.query_params)
    where, sort = filter_of(parameters), sort_of(parameters)
    names = variable_names(parameters)
    batches = lists.instances(engine_of(request), where, sort)
    if not names:
        return await export("instances", format, COLUMNS, batches)
    columns: list[Column] = [(name, _of_instance(read)) for name, read in COLUMNS]
    columns += _variable_columns(names, format)
    rows = _with_variables(engine_of(request), batches, names)
    return await export("instances", format, columns, rows)


routes = [
    Route("/instances", instances_page, methods=["GET"]),
    Route("/instances/export.{format}", instances_export, methods=["GET"]),
]
