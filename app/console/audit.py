"""The audit log (who passes Gate.AUDIT: operators and admins): who did what, when, through
which channel, on which instance; newest first, filtered by the URL's parameters, a keyset page
of 100 at a time.

Viewers do not read it: it names the people and tokens who act, and keeps values a viewer can
no longer see anywhere else (a removed variable's, a changed role's)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode
from uuid import UUID

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.auth import require
from app.console.common import act, engine_of, read, render
from app.gates import Gate
from app.params import Query
from app.templating import templates
from engine.api import Engine
from engine.commands.audit import AnnotateEntry
from engine.errors import InterlockError
from engine.identity.accounts import Principal
from engine.queries import audit as audit_reads
from engine.queries.audit import AuditFilter
from engine.states import AuditEntity, AuditOperation

# The page's filters, in the order its form shows them.
FILTER_FIELDS = ("user", "operation", "entity", "instance", "from", "to")
READ_GATE = Gate.AUDIT


def filter_of(parameters: Query) -> AuditFilter:
    """The filter the page's URL names."""
    operation = parameters.one_of("operation", [o.value for o in AuditOperation])
    entity = parameters.one_of("entity", [e.value for e in AuditEntity])
    return AuditFilter(
        user=parameters.text("user", strip=True),
        operations=(operation,) if operation else (),
        entities=(entity,) if entity else (),
        instance_id=parameters.uuid("instance"),
        since=parameters.date("from"),
        until=parameters.date("to"),
    )


def _entries(engine: Engine, where: AuditFilter, after: str | None) -> dict[str, Any]:
    page = audit_reads.audit_page(engine, where, after)
    return {"entries": page.items, "next_cursor": page.next}


async def audit_page(request: Request) -> Response:
    require(request, READ_GATE)
    parameters = Query(request.query_params)
    params = parameters.fields(FILTER_FIELDS)
    after = parameters.text("after")
    context: dict[str, Any] = {"entries": [], "next_cursor": None, "error": None}
    try:
        where = filter_of(Query(QueryParams(params)))
        context = await read(request, _entries, engine_of(request), where, after)
    except InterlockError as exc:
        context["error"] = exc.message
    filters = {k: v for k, v in params.items() if v}
    context.update(
        params=params,
        query=urlencode(filters),
        after=after,
        page_size=audit_reads.PAGE_SIZE,
        operations=[o.value for o in AuditOperation],
        entities=[e.value for e in AuditEntity],
        rows_url="/audit?"
        + urlencode({**filters, "fragment": "rows", **({"after": after} if after else {})}),
    )
    if parameters.text("fragment") == "rows":
        status = 400 if context.get("error") else 200
        return render(request, "_audit_rows.html", context, status_code=status)
    return render(request, "audit.html", {"page": "audit", **context})


def audit_value(value: Any, indent: int | None = None) -> str:
    """A value before or after a change (or its details) as JSON text, as written: no `\\u0026`
    for `&` nor escapes of other characters (the template escapes the text it shows)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=indent, default=str)


templates.env.filters["audit_value"] = audit_value


async def annotate(request: Request) -> Response:
    """Set (empty: clear) an entry's annotation; the change is an entry of its own."""
    entry_id: UUID = request.path_params["entry_id"]

    def work(engine: Engine, who: Principal, form: Mapping[str, str]) -> str:
        text = form.get("annotation", "").strip()
        engine.run(AnnotateEntry(entry_id, text or None))
        return "Annotation saved." if text else "Annotation cleared."

    return await act(request, work)


routes = [
    Route("/audit", audit_page, methods=["GET"]),
    Route("/audit/{entry_id:uuid}/annotation", annotate, methods=["POST"]),
]
