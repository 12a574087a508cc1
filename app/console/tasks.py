"""The user-task inbox: open tasks to claim and complete."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.auth import principal_of
from app.console.common import can_operate, engine_of, read, render
from app.console.forms import task_forms
from app.params import Query
from engine.api import Engine
from engine.queries import console

SHOW = ("all", "mine", "unassigned")


def _tasks(
    engine: Engine, show: str, me: str, key: str | None, can_complete: bool
) -> dict[str, Any]:
    tasks = engine.user_tasks(definition_key=key, assignee=me if show == "mine" else None)
    if show == "unassigned":
        tasks = [t for t in tasks if t.assignee is None]
    keys = console.definition_keys(engine)
    forms = task_forms(engine, tasks) if can_complete else {}
    return {"tasks": tasks, "keys": keys, "forms": forms}


async def tasks_page(request: Request) -> Response:
    parameters = Query(request.query_params)
    show = parameters.text("show", "all")
    show = show if show in SHOW else "all"
    key = parameters.text("definition")
    me = principal_of(request).name
    context = await read(request, _tasks, engine_of(request), show, me, key, can_operate(request))
    query = urlencode({"show": show, **({"definition": key} if key else {})})
    context.update(show=show, key=key, rows_url=f"/tasks?{query}&fragment=rows")
    if parameters.text("fragment") == "rows":
        return render(request, "_task_rows.html", context)
    return render(request, "tasks.html", {"page": "tasks", "shows": SHOW, **context})


routes = [Route("/tasks", tasks_page, methods=["GET"])]
