"""The user-task inbox: open tasks to claim and complete, a page at a time (oldest first,
continuing after a cursor)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.auth import principal_of
from app.console.common import engine_of, read, render
from app.console.exports import Column, check_format, export
from app.console.forms import task_forms
from app.console.views import saved_views
from app.guard import raw_file_headers
from app.params import Query
from engine.api import Engine
from engine.errors import InterlockError
from engine.identity.permissions import BUILTIN_ROLES
from engine.queries import console, identity, lists
from engine.queries.camunda import task_notes as note_reads
from engine.queries.lists import FILTERS, TaskFilter
from engine.states import ListPage

# The inbox's views: "inbox", the tasks I hold and the unassigned ones I am a candidate for
# (directly or through my groups), is the default of a user in a group other than the built-in
# role groups; "all" is the others' default (every role may read every task for now).
SHOW = ("all", "mine", "unassigned", "groups", "inbox")
SHOWN = {
    "all": "all open tasks",
    "mine": "my tasks (assigned to me)",
    "unassigned": "unassigned",
    "groups": "my groups' tasks (unassigned)",
    "inbox": "my tasks and my groups' tasks",
}
FILTER_FIELDS = FILTERS[ListPage.TASKS]
COLUMNS: list[Column] = [
    ("id", lambda t: t.id),
    ("name", lambda t: t.name),
    ("node_id", lambda t: t.node_id),
    ("instance_id", lambda t: t.instance_id),
    ("definition_key", lambda t: t.definition_key),
    ("business_key", lambda t: t.business_key),
    ("assignee", lambda t: t.assignee),
    ("candidate_users", lambda t: t.candidate_users),
    ("candidate_groups", lambda t: t.candidate_groups),
    ("priority", lambda t: t.priority),
    ("due_at", lambda t: t.due_at),
    ("created_at", lambda t: t.created_at),
]


def default_show(engine: Engine, me: str) -> str:
    """The view shown when the URL names none: "inbox" for a member of a work group (one that
    is not a built-in role's), else "all"."""
    groups = identity.group_ids_of(engine, me)
    return "inbox" if any(g not in BUILTIN_ROLES for g in groups) else "all"


def filter_of(parameters: Query, me: str, default: str = "all") -> TaskFilter:
    """The filter the page's URL names (`mine`: assigned to `me`; `groups`: unassigned, `me` a
    candidate; `inbox`: either), `default` when it names none: the page and its export read it
    this one way."""
    show = parameters.one_of("show", SHOW) or default
    return TaskFilter(
        definition_key=parameters.text("definition", strip=True),
        assignee=me if show == "mine" else None,
        unassigned=show in ("unassigned", "groups"),
        candidate=me if show == "groups" else None,
        held_or_candidate=me if show == "inbox" else None,
    )


def _tasks(engine: Engine, where: TaskFilter, after: str | None) -> dict[str, Any]:
    page = lists.task_page(engine, where, after)
    # A task's form shows only to who may complete it (`_task_rows.html` asks WORK_ON_TASK).
    forms = task_forms(engine, page.items)
    return {
        "tasks": page.items,
        "forms": forms,
        "next_cursor": page.next,
        **_notes(engine, page.items),
    }


def _notes(engine: Engine, tasks: Sequence[Any]) -> dict[str, Any]:
    """The comments and attachments of the page's tasks, by task id (two statements)."""
    ids = [t.id for t in tasks]
    comments: dict[UUID, list[Any]] = {}
    attachments: dict[UUID, list[Any]] = {}
    if ids:
        for comment in note_reads.comments(engine, ids):
            comments.setdefault(comment.task_id, []).append(comment)
        for attachment in note_reads.attachments(engine, ids):
            attachments.setdefault(attachment.task_id, []).append(attachment)
    return {"comments": comments, "attachments": attachments}


async def attachment_download(request: Request) -> Response:
    """An attachment's bytes, always as a download with the raw-file headers (never shown
    inline, never sniffed)."""
    task_id, attachment_id = request.path_params["task_id"], request.path_params["attachment_id"]
    found = await read(
        request, note_reads.attachment_content, engine_of(request), task_id, attachment_id
    )
    if found is None or found.content is None:
        return Response("No such attachment", status_code=404, media_type="text/plain")
    headers = raw_file_headers(found.name or f"attachment-{attachment_id}")
    return Response(found.content, media_type="application/octet-stream", headers=headers)


async def tasks_page(request: Request) -> Response:
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    me = principal_of(request).name
    default = await read(request, default_show, engine_of(request), me)
    show = params.get("show") or default
    key = params.get("definition")
    after = parameters.text("after")
    context: dict[str, Any] = {
        "tasks": [],
        "forms": {},
        "comments": {},
        "attachments": {},
        "next_cursor": None,
        "error": None,
    }
    try:
        where = filter_of(parameters, me, default)
        context = await read(request, _tasks, engine_of(request), where, after)
    except InterlockError as exc:
        context["error"] = exc.message
    query = urlencode({"show": show, **({"definition": key} if key else {})})
    page = f"&{urlencode({'after': after})}" if after else ""
    rows_url = f"/tasks?{query}&fragment=rows{page}"
    context.update(
        show=show,
        key=key,
        query=query,
        after=after,
        page_size=lists.PAGE_SIZE,
        rows_url=rows_url,
    )
    if parameters.text("fragment") == "rows":
        status = 400 if context.get("error") else 200
        return render(request, "_task_rows.html", context, status_code=status)
    keys = await read(request, console.definition_keys, engine_of(request))
    context.update(await saved_views(request, ListPage.TASKS, query))
    return render(
        request,
        "tasks.html",
        {"page": "tasks", "shows": SHOW, "shown": SHOWN, "keys": keys, **context},
    )


async def tasks_export(request: Request) -> Response:
    """Every open task the inbox's filters match, oldest first: CSV or JSON, streamed."""
    format = check_format(request.path_params["format"])
    me = principal_of(request).name
    default = await read(request, default_show, engine_of(request), me)
    where = filter_of(Query(request.query_params), me, default)
    return await export("tasks", format, COLUMNS, lists.tasks(engine_of(request), where))


routes = [
    Route("/tasks", tasks_page, methods=["GET"]),
    Route("/tasks/export.{format}", tasks_export, methods=["GET"]),
    Route(
        "/tasks/{task_id:uuid}/attachments/{attachment_id:uuid}",
        attachment_download,
        methods=["GET"],
    ),
]
