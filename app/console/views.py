"""Saved views and exports on the list pages (instances, incidents, tasks).

Who passes VIEWS_GATE keeps views (operators and admins): a view is a row written. Saving and
deleting are POSTs (with the session's CSRF token, as every console mutation) that run the
engine's commands for the user who is logged in, on that user's views only; opening a view is a
link to the page with the view's query. The section answers with itself, re-rendered with the
outcome. Everybody exports (a read, narrowed by their grants)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import gates
from app.auth import principal_of, require
from app.console.common import engine_of, form_text, read, refusal, render
from app.errors import status_of
from app.gates import Gate
from engine.api import Engine
from engine.commands.views import DeleteView, SaveView
from engine.core import actors
from engine.errors import InterlockError
from engine.queries import views as reads
from engine.states import ListPage

# Who keeps saved views in the console: operators' work that Camunda has no permission of its own
# for (app/gates.py).
VIEWS_GATE = Gate.OPERATE


async def saved_views(request: Request, page: ListPage, query: str) -> dict[str, Any]:
    """What `_saved_views.html` shows on a list page: the user's views of it, and the page's
    current query (to save, and for the export links)."""
    principal = principal_of(request)
    keeps = gates.passes(actors.current(), VIEWS_GATE)
    views = []
    if keeps:
        views = await read(request, reads.of_owner, engine_of(request), principal.name, page)
    return {
        "list_page": page.value,
        "views": views,
        "list_query": query,
        # The filters again as fields, for the instance export's form (which adds variables).
        "list_fields": parse_qsl(query),
        "keeps_views": keeps,
    }


Work = Callable[[Engine, str, FormData], str]


async def _change(request: Request, work: Work) -> Response:
    outcome: dict[str, Any]
    status = 200
    form = await request.form()
    page = ListPage(form_text(form, "page")) if form_text(form, "page") in set(ListPage) else None
    try:
        owner = require(request, VIEWS_GATE).name
        message = await run_in_threadpool(work, engine_of(request), owner, form)
        outcome = {"ok": True, "message": message}
    except InterlockError as error:
        outcome, status = refusal(error), status_of(error)
    context: dict[str, Any] = {"list_page": None, "views": [], "list_query": ""}
    if page is not None:
        context = await saved_views(request, page, form_text(form, "query"))
    return render(request, "_saved_views.html", {**context, "outcome": outcome}, status_code=status)


async def save(request: Request) -> Response:
    def work(engine: Engine, owner: str, form: FormData) -> str:
        title, page = form_text(form, "name"), form_text(form, "page")
        result = engine.run(SaveView(owner, page, title, form_text(form, "query")))
        verb = "replaced" if result.replaced else "saved"
        return f"View '{title.strip()}' {verb}."

    return await _change(request, work)


async def delete(request: Request) -> Response:
    view_id: UUID = request.path_params["view_id"]

    def work(engine: Engine, owner: str, form: FormData) -> str:
        engine.run(DeleteView(owner, view_id))
        return "View deleted."

    return await _change(request, work)


routes = [
    Route("/views", save, methods=["POST"]),
    Route("/views/{view_id:uuid}/delete", delete, methods=["POST"]),
]
