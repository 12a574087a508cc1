"""Decisions: every deployed decision key with its versions and evaluations; one decision
version's table with how often each rule matched in a period, and its latest evaluations.

The decision page's URL carries the version (`version`, the latest by default), the period of
the rule counts (`period`: all, hour, day, 7d or 30d) and the page of evaluations (`after`). Its
first page refreshes itself when a decision is evaluated (`fragment`: the table and the
evaluations alone)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.console.decision_table import decision_view, with_counts
from app.params import Query
from engine.api import Engine
from engine.errors import NotFound
from engine.queries import decision_console, decisions
from engine.queries.decisions import DecisionRow

PERIODS: dict[str, timedelta | None] = {
    "all": None,
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
PERIOD_LABELS = {
    "all": "All time",
    "hour": "Last hour",
    "day": "Last day",
    "7d": "Last 7 days",
    "30d": "Last 30 days",
}


async def decisions_page(request: Request) -> Response:
    found = await read(request, decision_console.summaries, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_decisions.html", {"summaries": found})
    return render(request, "decisions.html", {"page": "decisions", "summaries": found})


def _definition(engine: Engine, key: str, version: int | None) -> DecisionRow:
    found = decisions.find(engine, key, version=version)
    if found is None:
        what = f"version {version} of decision '{key}'" if version is not None else f"'{key}'"
        raise NotFound(f"{what} is not deployed")
    return found


def _details(
    engine: Engine, key: str, version: int | None, period: str, now: datetime, after: str | None
) -> dict[str, Any]:
    definition = _definition(engine, key, version)
    length = PERIODS[period]
    counts = decision_console.rule_counts(
        engine, definition_id=definition.id, start=now - length if length else None
    )
    evaluations = decision_console.definition_evaluations(engine, definition.id, after)
    return {
        "definition": definition,
        "versions": decision_console.version_evaluations(engine, definition.key),
        "decision": with_counts(decision_view(engine, definition.id, definition.key), counts),
        "counts": counts,
        "evaluations": evaluations.items,
        "next_cursor": evaluations.next,
    }


async def decision_page(request: Request) -> Response:
    query = Query(request.query_params)
    key = request.path_params["key"]
    version = query.integer("version", minimum=1)
    period = query.one_of("period", tuple(PERIODS)) or "all"
    after = query.text("after")
    engine = engine_of(request)
    details = await read(request, _details, engine, key, version, period, engine.clock(), after)
    # The page's own parameters, for the links that change one of them.
    shown = {"version": details["definition"].version, "period": period}
    return render(
        request,
        "_decision_body.html" if query.text("fragment") else "decision.html",
        {
            "page": "decisions",
            "period": period,
            "periods": PERIOD_LABELS,
            "after": after,
            "query": urlencode(shown),
            **details,
        },
    )


routes = [
    Route("/decisions", decisions_page, methods=["GET"]),
    Route("/decisions/{key}", decision_page, methods=["GET"]),
]
