"""The header's "jump to" box: one text, read as an instance id, the id of an incident, user
task, external task or job (its instance), a business key (exactly, else in any case), the short
id the lists show (an id's last 8 characters), a process definition key or id, and else as the
start of business keys and definition keys.

Exactly one instance found: its inspector. Several instances with the business key: the instance
list filtered by it. A definition: its page. Several in any case, or by the start: a page listing
them (at most `LISTED`, in key order). Nothing: a page saying so, with the box again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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
# How many instances and definitions the page of matches lists.
LISTED = 50
SHORT_ID = re.compile(r"[0-9a-fA-F]{8}")


@dataclass(frozen=True)
class Matches:
    """What the text found when it names no one thing: instances by their business key in any
    case or by its start, definitions by the start of their key; `more`: there are others."""

    instances: list[lookup.KeyedInstance] = field(default_factory=list)
    definitions: list[lookup.DefinitionMatch] = field(default_factory=list)
    more: bool = False


def _definition_url(definition: lookup.DefinitionMatch) -> str:
    return f"/definitions/{quote(definition.key, safe='')}?version={definition.version}"


MISSING = "query parameter 'q' is missing: type an instance id, a business key or a definition key"


def target(engine: Engine, text: str) -> str | Matches | None:
    """The URL of the page `text` leads to, or the things it matches; None: nothing."""
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
    folded = lookup.by_folded_business_key(engine, text, limit=LISTED + 1)
    if len(folded) == 1:
        return f"/instances/{folded[0].id}"
    if folded:
        return Matches(instances=folded[:LISTED], more=len(folded) > LISTED)
    if SHORT_ID.fullmatch(text):
        short = lookup.by_short_id(engine, text, LISTED)
        if len(short) == 1:
            return f"/instances/{short[0].id}"
        if short:
            return Matches(instances=short)
    definition = lookup.definition(engine, text)
    if definition is not None:
        return _definition_url(definition)
    return _by_prefix(engine, text)


def _by_prefix(engine: Engine, text: str) -> str | Matches | None:
    instances = lookup.by_folded_business_key(engine, text, prefix=True, limit=LISTED + 1)
    definitions = lookup.definitions_by_prefix(engine, text, LISTED + 1)
    if not instances and not definitions:
        return None
    if len(instances) + len(definitions) == 1:
        return f"/instances/{instances[0].id}" if instances else _definition_url(definitions[0])
    more = len(instances) > LISTED or len(definitions) > LISTED
    return Matches(instances[:LISTED], definitions[:LISTED], more)


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
    if isinstance(found, Matches):
        return _page(request, text, None, 200, found)
    return RedirectResponse(found, status_code=303)


def _page(
    request: Request, text: str, problem: str | None, status: int, matches: Matches | None = None
) -> Response:
    context = {"q": text, "problem": problem, "matches": matches, "url_of": _definition_url}
    return render(request, "jump.html", context, status_code=status)


routes = [Route("/jump", jump, methods=["GET"])]
