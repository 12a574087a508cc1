"""The header's "jump to" box: one text, read as an instance id, the id of an incident, user
task, external task or job (its instance), a business key or a process definition key or id.

Exactly one instance found: its inspector. Several instances with the business key: the instance
list filtered by it. A definition: its page. Nothing: a page saying so, with the box again.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.params import NO_MATCH, ParameterError, Query, as_uuid
from engine.api import Engine
from engine.queries import lookup

# Longer than any id or key anyone types; a longer text is refused before any query runs.
MAX_LENGTH = 200
MISSING = "query parameter 'q' is missing: type an instance id, a business key or a definition key"


def target(engine: Engine, text: str) -> str | None:
    """The URL of the page `text` leads to; None: it names nothing."""
    row_id = as_uuid(text)
    if row_id != NO_MATCH:
        found = lookup.by_id(engine, row_id)
        if found is not None:
            return f"/instances/{found.instance_id}"
    keyed = lookup.by_business_key(engine, text, 2)
    if len(keyed) == 1:
        return f"/instances/{keyed[0]}"
    if keyed:
        return "/instances?" + urlencode({"business_key": text})
    definition = lookup.definition(engine, text)
    if definition is not None:
        key = quote(definition.key, safe="")
        return f"/definitions/{key}?version={definition.version}"
    return None


async def jump(request: Request) -> Response:
    try:
        text = Query(request.query_params).text("q", strip=True)
    except ParameterError as error:
        return _page(request, "", error.message, 400)
    if text is None:
        return _page(request, "", MISSING, 400)
    if len(text) > MAX_LENGTH:
        problem = f"query parameter 'q' must be at most {MAX_LENGTH} characters"
        return _page(request, text[:MAX_LENGTH], problem, 400)
    found = await read(request, target, engine_of(request), text)
    if found is None:
        return _page(request, text, None, 404)
    return RedirectResponse(found, status_code=303)


def _page(request: Request, text: str, problem: str | None, status: int) -> Response:
    return render(request, "jump.html", {"q": text, "problem": problem}, status_code=status)


routes = [Route("/jump", jump, methods=["GET"])]
