"""Definitions: every key with its versions and counts; one definition's diagram with live
per-node counts and a heatmap of visits and their average durations, or its history over a
period (app/console/definition_history.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app import reads
from app.auth import require
from app.console import alerts
from app.console.common import duration, engine_of, flash, read, render
from app.console.definition_history import (
    MODES,
    PERIOD_LABELS,
    Period,
    history_rows,
    history_state,
    period_of,
    view_of,
)
from app.console.forms import FormView, entered_values, start_form, start_form_view
from app.guard import raw_file_headers
from app.params import Query
from engine.api import Engine
from engine.commands.suspension import ActivateDefinition, SuspendDefinition
from engine.errors import InterlockError, NotFound
from engine.language.forms import FormInvalid
from engine.model import ProcessModel
from engine.queries import console, migration_impact
from engine.queries import definitions as definition_store
from engine.queries import summaries as summary_reads
from engine.queries.console import NodeStats
from engine.queries.definitions import DefinitionRow


def _summaries(engine: Engine) -> dict[str, Any]:
    return {
        "summaries": console.definition_summaries(engine),
        "trends": summary_reads.trends_by_key(engine, datetime.now(UTC)),
    }


def _version(request: Request) -> int | None:
    return Query(request.query_params).integer("version")


def _definition(engine: Engine, key: str, version: int | None) -> DefinitionRow:
    found = (
        definition_store.by_version(engine, key, version)
        if version is not None
        else definition_store.latest(engine, key)
    )
    if found is None:
        what = f"version {version} of '{key}'" if version is not None else f"'{key}'"
        raise NotFound(f"{what} is not deployed")
    return found


def _period(request: Request) -> Period | None:
    return period_of(Query(request.query_params), engine_of(request).clock())


def _details(
    engine: Engine, key: str, version: int | None, period: Period | None = None
) -> dict[str, Any]:
    """The definition page: its versions, its start form, and the per-node table of the view."""
    definition = _definition(engine, key, version)
    versions = definition_store.list_all(engine, definition.key)
    return {
        "versions": versions,
        "start_form": start_form(engine, definition),
        **_migration_link(engine, definition, versions),
        **_view(engine, definition, period),
    }


def _migration_link(
    engine: Engine, definition: DefinitionRow, versions: list[DefinitionRow]
) -> dict[str, Any]:
    """Where "Migrate instances" leads: from an older version to the latest; from the latest,
    from the newest other version with running instances (None: there is none)."""
    latest = max(versions, key=lambda v: v.version)
    if definition.id != latest.id:
        return {"migrate_from": definition, "migrate_to": latest}
    found = migration_impact.default_source(engine, definition.key, latest.id)
    return {"migrate_from": found, "migrate_to": latest}


def _table(
    engine: Engine, key: str, version: int | None, period: Period | None = None
) -> dict[str, Any]:
    """The per-node table of the view alone."""
    return _view(engine, _definition(engine, key, version), period)


def _view(engine: Engine, definition: DefinitionRow, period: Period | None) -> dict[str, Any]:
    """The per-node table of the view: each node's stats now, or its history in `period`."""
    if period is not None:
        return _history(engine, definition, period)
    return _now(engine, definition, console.definition_node_stats(engine, definition.id))


def _history(engine: Engine, definition: DefinitionRow, period: Period) -> dict[str, Any]:
    """What the history view's table shows: each node's visits and incidents in `period`."""
    model = reads.model(engine, definition.id, definition.key)
    rows = history_rows(engine, model, definition.id, period)
    return {
        "definition": definition,
        "period": period,
        "periods": PERIOD_LABELS,
        "history_rows": rows,
    }


def _now(engine: Engine, definition: DefinitionRow, stats: list[NodeStats]) -> dict[str, Any]:
    """What the "now" view's table shows: the version's instance counts and each node's
    `stats`."""
    model = reads.model(engine, definition.id, definition.key)
    return {
        "definition": definition,
        "period": None,
        "periods": PERIOD_LABELS,
        "counts": console.version_counts(engine, definition.key),
        "rows": _rows(model, stats),
    }


def _rows(model: ProcessModel, stats: list[NodeStats]) -> list[tuple[str, str, str, NodeStats]]:
    """(node id, name, kind, stats) for every node of the model, in name order."""
    by_node = {s.node_id: s for s in stats}
    return sorted(
        ((n.id, n.label, n.kind.value, by_node.get(n.id, NodeStats(n.id))) for n in model.nodes),
        key=lambda row: row[1].lower(),
    )


async def definitions_page(request: Request) -> Response:
    found = await read(request, _summaries, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_definitions.html", found)
    return render(request, "definitions.html", {"page": "definitions", **found})


async def definition_page(request: Request) -> Response:
    key = request.path_params["key"]
    version, period = _version(request), _period(request)
    details = await read(request, _details, engine_of(request), key, version, period)
    view = view_of(Query(request.query_params))
    return render(
        request,
        "definition.html",
        {"page": "definitions", "view": view, "modes": MODES, **details},
    )


async def definition_stats(request: Request) -> Response:
    key = request.path_params["key"]
    version, period = _version(request), _period(request)
    details = await read(request, _table, engine_of(request), key, version, period)
    template = "_definition_history.html" if period is not None else "_definition_stats.html"
    return render(request, template, details)


def _diagram_state(
    engine: Engine, key: str, version: int | None, period: Period | None = None
) -> dict[str, Any]:
    definition = _definition(engine, key, version)
    if period is not None:
        model = reads.model(engine, definition.id, definition.key)
        rows = history_rows(engine, model, definition.id, period)
        return history_state(definition.id, period, rows)
    return _node_state(definition.id, console.definition_node_stats(engine, definition.id))


def _node_state(definition_id: str, stats: list[NodeStats]) -> dict[str, Any]:
    """The diagram's state: each node's counts and average duration."""
    return {
        "definition_id": definition_id,
        "nodes": {
            s.node_id: {
                "active_tokens": s.active_tokens,
                "open_incidents": s.open_incidents,
                "visits": s.visits,
                "average": duration(s.average_seconds) if s.average_seconds is not None else None,
            }
            for s in stats
        },
    }


async def diagram_state(request: Request) -> Response:
    key = request.path_params["key"]
    version, period = _version(request), _period(request)
    state = await read(request, _diagram_state, engine_of(request), key, version, period)
    return JSONResponse(state, headers={"Cache-Control": "no-store"})


# What the definition page's live refresh can ask for: the per-node table, the diagram's state.
LIVE_PARTS = ("stats", "diagram", "alerts")


def _live(
    engine: Engine, key: str, version: int | None, parts: list[str], period: Period | None = None
) -> dict[str, Any]:
    """The parts asked for, from one read of what the view shows per node: the node stats now,
    or the history in the period."""
    definition = _definition(engine, key, version)
    if period is not None:
        view = _history(engine, definition, period)
        diagram = history_state(definition.id, period, view["history_rows"])
    else:
        stats = console.definition_node_stats(engine, definition.id)
        view = _now(engine, definition, stats) if "stats" in parts else {}
        diagram = _node_state(definition.id, stats)
    # The Alerts panel (app/console/alerts.py), when asked for.
    panel = alerts.panel(engine, definition.key) if "alerts" in parts else {}
    return {
        **view,
        **panel,
        "alerts_part": "alerts" in parts,
        "stats": "stats" in parts,
        "diagram": diagram if "diagram" in parts else None,
    }


async def live(request: Request) -> Response:
    """The parts of an open definition page that an event burst changed, in one answer: each as
    an out-of-band swap (the diagram's state as JSON in `#diagram-state`). `parts` is a
    comma-separated list of LIVE_PARTS (default: all)."""
    query = Query(request.query_params)
    parts = query.some_of("parts", LIVE_PARTS) or list(LIVE_PARTS)
    key = request.path_params["key"]
    version, period = _version(request), _period(request)
    context = await read(request, _live, engine_of(request), key, version, parts, period)
    return render(request, "_definition_live.html", context)


def _xml(engine: Engine, key: str, version: int | None) -> tuple[str, bool]:
    definition = _definition(engine, key, version)
    found = definition_store.diagram_xml(engine, definition.id)
    if found is None:
        raise NotFound(f"'{key}' is not deployed")
    return found


async def definition_xml(request: Request) -> Response:
    """The XML the diagram is drawn from: the layout generated at deployment when the source
    has none (the header X-Diagram-Layout says "generated"), else the source as deployed."""
    key = request.path_params["key"]
    xml, generated = await read(request, _xml, engine_of(request), key, _version(request))
    # As text, never as XML: an uploaded file may carry XHTML <script> elements, which a
    # browser would run in the console's origin if it rendered the file as a document.
    return Response(
        xml,
        media_type="text/plain; charset=utf-8",
        headers={
            **raw_file_headers(),
            "Cache-Control": "no-store",
            "X-Diagram-Layout": "generated" if generated else "model",
        },
    )


def _start(engine: Engine, key: str, version: int | None, entered: dict[str, str]) -> Any:
    """Start the definition through its start form; FormInvalid comes back with the form."""
    definition = _definition(engine, key, version)
    try:
        return engine.start_definition(definition.id, form=entered).id
    except FormInvalid as invalid:
        form = reads.start_form(engine, definition)
        return start_form_view(definition, form, entered, invalid.errors)


async def start_instance(request: Request) -> Response:
    """The definition page's start form, submitted: the new instance's link, or the form again
    with each refused field's error."""
    engine = engine_of(request)
    try:
        require(request)
        entered = await entered_values(request)
        key, version = request.path_params["key"], _version(request)
        started = await run_in_threadpool(_start, engine, key, version, entered)
    except InterlockError as error:
        return flash(request, error=error)
    if isinstance(started, FormView):
        return render(request, "_generated_form.html", {"form": started}, status_code=400)
    return render(
        request,
        "_instance_started.html",
        {"instance_id": started},
        headers={"HX-Trigger": "interlock:changed"},
    )


def _suspension(engine: Engine, key: str, version: int | None, suspend: bool, include: bool) -> str:
    definition = _definition(engine, key, version)
    command = SuspendDefinition if suspend else ActivateDefinition
    result = engine.run(command(definition_id=definition.id, include_instances=include))
    instances = f" and {len(result.instance_ids)} of its instances" if include else ""
    if suspend:
        return (
            f"Version {definition.version}{instances} suspended: it starts nothing until activated."
        )
    return f"Version {definition.version}{instances} activated."


async def change_suspension(request: Request) -> Response:
    """The definition page's Suspend or Activate button (an administrator's: SUSPEND or UPDATE on
    the definition), for the version shown, with its instances when the box is ticked."""
    suspend = request.url.path.endswith("/suspend")
    try:
        require(request)
        form = await request.form()
        include = form.get("include_instances") == "on"
        key, version = request.path_params["key"], _version(request)
        message = await run_in_threadpool(
            _suspension, engine_of(request), key, version, suspend, include
        )
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=message)


routes = [
    Route("/definitions", definitions_page, methods=["GET"]),
    Route("/definitions/{key}", definition_page, methods=["GET"]),
    Route("/definitions/{key}/stats", definition_stats, methods=["GET"]),
    Route("/definitions/{key}/diagram.json", diagram_state, methods=["GET"]),
    Route("/definitions/{key}/live", live, methods=["GET"]),
    Route("/definitions/{key}/xml", definition_xml, methods=["GET"]),
    Route("/definitions/{key}/start", start_instance, methods=["POST"]),
    Route("/definitions/{key}/suspend", change_suspension, methods=["POST"]),
    Route("/definitions/{key}/activate", change_suspension, methods=["POST"]),
]
