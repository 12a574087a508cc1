"""Camunda's filters: saved task queries, kept as saved views of the task inbox (a view saved in
the console is a filter too, its query mapped to Camunda's task query fields, see
engine/language/task_filters.py). Created, changed and deleted by engine/commands/filters.py;
listed narrowed to the filters the caller holds READ on; run with the one task query parser of
POST /task (app/camunda/tasks.py), extended by a posted query as Camunda extends a filter's
query, with `${currentUser()}` and `${currentUserGroups()}` resolved to the caller."""

from __future__ import annotations

import dataclasses
from typing import Any
from uuid import UUID

from starlette.datastructures import QueryParams
from starlette.responses import Response

from app.auth import principal_of
from app.camunda.dto import Json
from app.camunda.errors import CamundaError, invalid_request, translate
from app.camunda.http import Call, Endpoint, json_response, listed, no_content, run_found
from app.camunda.tasks import posted_tasks, shown_tasks, task_query
from app.console.tasks import default_show
from app.params import NO_MATCH, as_uuid
from engine.commands.filters import CreateFilter, DeleteFilter, UpdateFilter
from engine.core import actors, permits
from engine.core.permits import CREATE_FILTER, DELETE_FILTER, READ_FILTER, UPDATE_FILTER
from engine.errors import BadRequest
from engine.language import task_filters
from engine.language.task_filters import Caller
from engine.queries import identity
from engine.queries.camunda import filters as reads
from engine.queries.camunda import tasks as task_reads
from engine.queries.camunda.filters import SavedViewRow

TASK = "Task"


# -- the filter resource --------------------------------------------------------------------


def _missing(filter_id: str) -> CamundaError:
    return invalid_request(f"Filter with id '{filter_id}' does not exist.", 404)


def _filter_id(call: Call) -> UUID:
    """The path's filter id; one Interlock never issues names no filter (404)."""
    found = as_uuid(call.path["id"])
    if found == NO_MATCH:
        raise _missing(call.path["id"])
    return found


def _readable(call: Call) -> SavedViewRow:
    """The path's filter, which the caller must hold READ on: 404 when there is none, 403 when
    they may not read it."""
    view_id = _filter_id(call)
    row = reads.filter_by_id(call.engine, view_id)
    if row is None:
        raise _missing(call.path["id"])
    permits.demand(actors.current(), READ_FILTER, permits.facts_of(filter=view_id))
    return row


def _caller(call: Call) -> Caller:
    me = principal_of(call.request).name
    return Caller(me, identity.group_ids_of(call.engine, me))


def _saved_query(call: Call, row: SavedViewRow) -> task_filters.ConsoleView:
    """The filter's task query: as saved over REST, or its console view's mapped."""
    if row.task_query is not None:
        return task_filters.ConsoleView(dict(row.task_query), inbox=False)
    me = principal_of(call.request).name
    return task_filters.from_console(row.query, default_show(call.engine, me))


def _dto(call: Call, row: SavedViewRow, *, item_count: bool) -> Json:
    shown: Json = {
        "id": str(row.id),
        "resourceType": TASK,
        "name": row.name,
        "owner": row.owner,
        "query": _saved_query(call, row).query,
        "properties": row.properties if row.properties is not None else {},
    }
    if item_count:
        shown["itemCount"] = _run(call, row, None, count=True)
    return shown


def _listed(call: Call, *, count: bool) -> list[SavedViewRow] | int:
    resource_type = call.text("resourceType")
    return reads.filters(
        call.engine,
        call.page(reads.FILTER_SORT),
        filter_id=call.uuid("filterId"),
        other_resource_type=resource_type is not None and resource_type != TASK,
        name=call.text("name"),
        name_like=call.text("nameLike"),
        owner=call.text("owner"),
        count=count,
    )


def list_filters(call: Call) -> Response:
    item_count = bool(call.flag("itemCount"))
    rows = listed(_listed(call, count=False))
    return json_response([_dto(call, row, item_count=item_count) for row in rows])


def count_filters(call: Call) -> Response:
    return json_response({"count": _listed(call, count=True)})


def get_filter(call: Call) -> Response:
    return json_response(_dto(call, _readable(call), item_count=bool(call.flag("itemCount"))))


def _body(call: Call) -> tuple[str, str | None, dict[str, Any], dict[str, Any] | None]:
    """A filter's name, owner, query and properties from the body; the query checked by the one
    task query parser, a refusal worded as Camunda's."""
    name = call.body_text("name") or ""
    owner = call.body_text("owner")
    query = call.field("query")
    if not isinstance(query, dict):
        raise invalid_request(
            "Unable to save filter with invalid content: 'query' must be a task query"
        )
    properties = call.field("properties")
    if properties is not None and not isinstance(properties, dict):
        raise invalid_request(
            "Unable to save filter with invalid content: 'properties' must be an object"
        )
    try:
        checked = task_filters.checked(query)
        _check_parses(call, checked)
    except (BadRequest, CamundaError) as exc:
        message = translate(exc).message
        raise invalid_request(f"Unable to save filter with invalid content: {message}") from exc
    return name, owner, checked, properties


def _check_parses(call: Call, query: dict[str, Any]) -> None:
    """Read `query` with POST /task's parser as it would run (for a made-up caller), fetching no
    row: a field it refuses is refused here, naming the field."""
    sample = task_filters.resolved(query, Caller("-", ["-"]))
    probe = dataclasses.replace(call, body=sample, query=QueryParams("maxResults=0"), extra={})
    task_query(posted_tasks(probe))


def create_filter(call: Call) -> Response:
    resource_type = call.body_text("resourceType")
    if resource_type != TASK:
        raise invalid_request(
            f"Unable to create filter with invalid resource type '{resource_type}'"
        )
    name, owner, query, properties = _body(call)
    result = call.engine.run(CreateFilter(owner, name, query, properties))
    row = reads.filter_by_id(call.engine, UUID(result.view_id))
    assert row is not None
    return json_response(_dto(call, row, item_count=False))


def update_filter(call: Call) -> Response:
    view_id = _filter_id(call)
    if reads.filter_by_id(call.engine, view_id) is None:
        raise _missing(call.path["id"])
    resource_type = call.body_text("resourceType")
    if resource_type is not None and resource_type != TASK:
        raise invalid_request(
            f"Unable to update filter from resource type '{TASK}' to '{resource_type}'"
        )
    name, owner, query, properties = _body(call)
    command = UpdateFilter(view_id, owner, name, query, properties)
    return run_found(call, command, f"Filter with id '{call.path['id']}' does not exist.")


def delete_filter(call: Call) -> Response:
    view_id = _filter_id(call)
    return run_found(
        call, DeleteFilter(view_id), f"Filter with id '{call.path['id']}' does not exist."
    )


def _links(call: Call, path: str, rels: list[tuple[str, str, str]]) -> Response:
    """Camunda's resource options: the operations the caller may use, as links."""
    links = [
        {"method": method, "href": f"{call.base}/filter{path}{suffix}", "rel": rel}
        for method, suffix, rel in rels
    ]
    return json_response({"links": links})


def filters_options(call: Call) -> Response:
    rels = [("GET", "", "list"), ("GET", "/count", "count")]
    if permits.holds(actors.current(), CREATE_FILTER):
        rels.append(("POST", "/create", "create"))
    return _links(call, "", rels)


def filter_options(call: Call) -> Response:
    filter_id = call.path["id"]
    view_id = as_uuid(filter_id)
    may = {
        name: view_id != NO_MATCH and permits.holds(actors.current(), permit, filter=view_id)
        for name, permit in (
            ("read", READ_FILTER),
            ("update", UPDATE_FILTER),
            ("delete", DELETE_FILTER),
        )
    }
    rels: list[tuple[str, str, str]] = []
    if may["read"]:
        rels += [
            ("GET", "", "self"),
            ("GET", "/singleResult", "singleResult"),
            ("POST", "/singleResult", "singleResult"),
            ("GET", "/list", "list"),
            ("POST", "/list", "list"),
            ("GET", "/count", "count"),
            ("POST", "/count", "count"),
        ]
    if may["delete"]:
        rels.append(("DELETE", "", "delete"))
    if may["update"]:
        rels.append(("PUT", "", "update"))
    return _links(call, f"/{filter_id}", rels)


# -- running a filter ---------------------------------------------------------------------------


def _extending(call: Call) -> dict[str, Any] | None:
    """The posted query that extends the filter's (None: none, or an empty object)."""
    if call.request.method != "POST" or not isinstance(call.body, dict) or not call.body:
        return None
    try:
        return task_filters.checked(call.body, "body")
    except BadRequest as exc:
        message = f"Filter cannot be extended by an invalid query: {exc.message}"
        raise invalid_request(message) from exc


def _run(call: Call, row: SavedViewRow, extending: dict[str, Any] | None, *, count: bool) -> Any:
    """The tasks the filter's query, extended by `extending`, finds for the caller (the page the
    call's firstResult and maxResults ask), or their number."""
    saved = _saved_query(call, row)
    caller = _caller(call)
    query = task_filters.resolved(task_filters.merged(saved.query, extending or {}), caller)
    if query.get("candidateGroups") == []:
        # `${currentUserGroups()}` of a caller in no group: no task is offered to their groups.
        return 0 if count else []
    paging = [(k, v) for k, v in call.query.multi_items() if k in ("firstResult", "maxResults")]
    extra = {"held_or_candidate": caller.user if saved.inbox else None}
    running = dataclasses.replace(call, body=query, query=QueryParams(paging), extra=extra)
    try:
        return task_query(posted_tasks(running), count=count)
    except (BadRequest, CamundaError) as exc:
        refused = translate(exc)
        if extending is None or refused.status != 400:
            raise
        message = f"Filter cannot be extended by an invalid query: {refused.message}"
        raise invalid_request(message) from exc


def execute_list(call: Call) -> Response:
    row = _readable(call)
    rows: list[task_reads.TaskRow] = listed(_run(call, row, _extending(call), count=False))
    return json_response(shown_tasks(call, rows))


def execute_count(call: Call) -> Response:
    row = _readable(call)
    return json_response({"count": _run(call, row, _extending(call), count=True)})


def execute_single(call: Call) -> Response:
    row = _readable(call)
    limited = dataclasses.replace(call, query=QueryParams("maxResults=2"))
    rows: list[task_reads.TaskRow] = listed(_run(limited, row, _extending(call), count=False))
    if not rows:
        return no_content()
    if len(rows) > 1:
        raise invalid_request("Filter does not returns a valid single result")
    return json_response(shown_tasks(call, rows)[0])


endpoints = [
    Endpoint("/filter", "GET", list_filters),
    Endpoint("/filter", "OPTIONS", filters_options),
    Endpoint("/filter/count", "GET", count_filters),
    Endpoint("/filter/create", "POST", create_filter, body="json"),
    Endpoint("/filter/{id}", "GET", get_filter),
    Endpoint("/filter/{id}", "PUT", update_filter, body="json"),
    Endpoint("/filter/{id}", "DELETE", delete_filter),
    Endpoint("/filter/{id}", "OPTIONS", filter_options),
    Endpoint("/filter/{id}/list", "GET", execute_list),
    Endpoint("/filter/{id}/list", "POST", execute_list, body="json"),
    Endpoint("/filter/{id}/count", "GET", execute_count),
    Endpoint("/filter/{id}/count", "POST", execute_count, body="json"),
    Endpoint("/filter/{id}/singleResult", "GET", execute_single),
    Endpoint("/filter/{id}/singleResult", "POST", execute_single, body="json"),
]
