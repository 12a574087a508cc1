"""The instance inspector: header, live diagram state, and one panel per kind of runtime row."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.camunda.dto import node_activity_type
from app.console.common import engine_of, read, render, when
from app.console.family import Family, call_badges, family_of
from app.console.forms import task_forms
from app.console.loops import loop_badges, loop_lines
from app.params import Query
from engine.api import Engine
from engine.errors import NotFound
from engine.model import EventBasedGateway, InclusiveGateway, ProcessModel, StartEvent, SubProcess
from engine.queries import console, definitions
from engine.queries import instances as queries
from engine.queries.console import EventWait, JoinState
from engine.queries.instances import InstanceInfo, TokenRow, VisitRow
from engine.states import TokenMode, TokenState, VisitState
from engine.variables import TypedValue, from_row

PANELS = (
    "family",
    "incidents",
    "tokens",
    "user_tasks",
    "external_tasks",
    "jobs",
    "variables",
    "history",
)


def _info(engine: Engine, instance_id: UUID) -> tuple[InstanceInfo, int, ProcessModel]:
    info = queries.instance(engine, instance_id)
    if info is None:
        raise NotFound(f"process instance {instance_id} does not exist")
    definition = definitions.by_id(engine, info.definition_id)
    if definition is None:
        raise NotFound(f"process definition {info.definition_id} does not exist")
    model = engine.model(info.definition_id, info.definition_key)
    return info, definition.version, model


def _node_choices(model: ProcessModel) -> list[tuple[str, str]]:
    return sorted(((n.id, n.label) for n in model.nodes), key=lambda pair: pair[1].lower())


@dataclass(frozen=True)
class TokenLine:
    token: TokenRow
    depth: int
    live: bool


def _lineage(tokens: list[TokenRow]) -> list[TokenLine]:
    """Tokens in fork order: each child under its parent, indented by its depth."""
    children: dict[UUID | None, list[TokenRow]] = {}
    ids = {t.id for t in tokens}
    for token in tokens:
        parent = token.parent_id if token.parent_id in ids else None
        children.setdefault(parent, []).append(token)
    lines: list[TokenLine] = []

    def walk(parent: UUID | None, depth: int) -> None:
        for token in children.get(parent, []):
            lines.append(TokenLine(token, depth, not TokenState(token.state).is_final))
            walk(token.id, depth + 1)

    walk(None, 0)
    return lines


@dataclass(frozen=True)
class JoinLine:
    """A waiting join: the tokens arrived, and what it waits for. A parallel join expects one
    token per incoming flow; an inclusive join waits for the live tokens that can still reach it
    (`upstream`), which is not a number of branches known in advance."""

    join: JoinState
    expected: int | None
    upstream: int | None


def _join_lines(
    model: ProcessModel, joins: list[JoinState], tokens: list[TokenRow]
) -> list[JoinLine]:
    lines = []
    for join in joins:
        gateway = model.node(join.gateway_id) if model.has_node(join.gateway_id) else None
        if not isinstance(gateway, InclusiveGateway):
            expected = len(gateway.incoming) if gateway is not None else None
            lines.append(JoinLine(join, expected, None))
            continue
        upstream = model.upstream_of(gateway.id)
        scope = join.scope_key or None
        arrived = set(join.arrived)
        blockers = [
            t
            for t in tokens
            if not TokenState(t.state).is_final
            and (str(t.scope_id) if t.scope_id else None) == scope
            and (t.node_id in upstream or (t.node_id == gateway.id and t.id not in arrived))
        ]
        lines.append(JoinLine(join, None, len(blockers)))
    return lines


@dataclass(frozen=True)
class GatewayWait:
    """A token waiting at an event-based gateway and what it waits for, in the order of the
    gateway's flows: "message 'payment'", "timer due 2026-06-01 10:00:00", "signal 'cancel'"."""

    token_id: UUID
    gateway_id: str
    events: list[str]


def _describe_wait(wait: EventWait) -> str:
    if wait.kind == "timer":
        return f"timer due {when(wait.due_at)}"
    return f"{wait.kind} '{wait.name}'"


def _gateway_waits(
    model: ProcessModel, tokens: list[TokenRow], waits: list[EventWait]
) -> list[GatewayWait]:
    by_token: dict[UUID | None, dict[str, EventWait]] = {}
    for wait in waits:
        by_token.setdefault(wait.token_id, {})[wait.node_id] = wait
    lines = []
    for token in tokens:
        gateway = model.node(token.node_id) if model.has_node(token.node_id) else None
        if not isinstance(gateway, EventBasedGateway) or token.state != TokenState.WAITING:
            continue
        listening = by_token.get(token.id, {})
        events = [model.flow(f).target for f in gateway.outgoing]
        described = [_describe_wait(listening[e]) for e in events if e in listening]
        lines.append(GatewayWait(token.id, gateway.id, described))
    return lines


@dataclass(frozen=True)
class ScopeListener:
    """An event subprocess's start event listening while its scope is active: the scope's token
    (None: the process), the event subprocess and what it waits for ("message 'x'")."""

    scope_token_id: UUID | None
    scope_node_id: str | None
    start_id: str
    subprocess_id: str
    interrupting: bool
    event: str


def _scope_listeners(
    model: ProcessModel, tokens: list[TokenRow], waits: list[EventWait]
) -> list[ScopeListener]:
    nodes = {t.id: t.node_id for t in tokens}
    lines = []
    for wait in waits:
        start = model.node(wait.node_id) if model.has_node(wait.node_id) else None
        if not isinstance(start, StartEvent) or start.parent is None:
            continue
        scope = nodes.get(wait.token_id) if wait.token_id is not None else None
        event = _describe_wait(wait)
        lines.append(
            ScopeListener(wait.token_id, scope, start.id, start.parent, start.interrupting, event)
        )
    return lines


def _event_subprocesses(model: ProcessModel) -> set[str]:
    return {n.id for n in model.nodes if isinstance(n, SubProcess) and n.triggered_by_event}


@dataclass(frozen=True)
class TimelineEntry:
    visit: VisitRow
    seconds: float | None
    left: float
    width: float
    # What the visited node is, by Camunda's activity type (an escalation end event, a link
    # catch event...), as /engine-rest's history names it.
    kind: str


def _timeline(
    visits: list[VisitRow], info: InstanceInfo, model: ProcessModel
) -> list[TimelineEntry]:
    end = info.ended_at or datetime.now(UTC)
    total = max((end - info.started_at).total_seconds(), 0.001)
    entries = []
    for visit in visits:
        stop = visit.ended_at or end
        seconds = (visit.ended_at - visit.started_at).total_seconds() if visit.ended_at else None
        left = max(0.0, (visit.started_at - info.started_at).total_seconds() / total * 100)
        width = max(0.5, (stop - visit.started_at).total_seconds() / total * 100)
        kind = node_activity_type(model, visit.node_id, visit.node_type)
        entries.append(TimelineEntry(visit, seconds, min(left, 99.5), min(width, 100 - left), kind))
    return entries


def _panel(engine: Engine, instance_id: UUID, name: str, node: str | None) -> dict[str, Any]:
    def keep(node_id: str) -> bool:
        return node is None or node_id == node

    handle = engine.instance(instance_id)
    context: dict[str, Any] = {"node": node}
    if name == "family":
        context["family"] = family_of(engine, instance_id)
    elif name == "incidents":
        context["incidents"] = [
            i for i in engine.incidents(instance_id=instance_id) if keep(i.node_id)
        ]
    elif name == "tokens":
        tokens = queries.tokens(engine, instance_id)
        joins = console.join_states(engine, instance_id)
        info = queries.instance(engine, instance_id)
        assert info is not None
        model = engine.model(info.definition_id, info.definition_key)
        context["lines"] = [line for line in _lineage(tokens) if keep(line.token.node_id)]
        context["joins"] = [
            line for line in _join_lines(model, joins, tokens) if keep(line.join.gateway_id)
        ]
        waits = console.event_waits(engine, instance_id)
        context["gateway_waits"] = [
            line for line in _gateway_waits(model, tokens, waits) if keep(line.gateway_id)
        ]
        context["listening"] = [
            line
            for line in _scope_listeners(model, tokens, waits)
            if keep(line.start_id) or keep(line.subprocess_id)
        ]
        context["event_subprocesses"] = _event_subprocesses(model)
        scoped = queries.variables_in_scopes(engine, instance_id)
        context["loops"] = [
            line for line in loop_lines(model, tokens, scoped) if keep(line.host.node_id)
        ]
        context["names"] = {n.id: n.label for n in model.nodes}
        context["calls"] = family_of(engine, instance_id).running_by_token()
    elif name == "user_tasks":
        context["tasks"] = [t for t in handle.user_tasks() if keep(t.node_id)]
        context["forms"] = task_forms(engine, context["tasks"])
    elif name == "external_tasks":
        context["external"] = [
            t for t in engine.external_tasks(instance_id=instance_id) if keep(t.node_id)
        ]
        context["now"] = datetime.now(UTC)
    elif name == "jobs":
        context["jobs"] = [j for j in engine.jobs(instance_id) if keep(j.node_id)]
        context["now"] = datetime.now(UTC)
    elif name == "variables":
        context["variables"] = sorted(handle.typed_variables().items())
        context["scopes"] = [g for g in _local_scopes(engine, instance_id) if keep(g.node_id)]
        context["final"] = handle.state.is_final
    elif name == "history":
        visits = queries.visits(engine, instance_id)
        info = queries.instance(engine, instance_id)
        assert info is not None
        model = engine.model(info.definition_id, info.definition_key)
        timeline = _timeline(visits, info, model)
        context["timeline"] = [e for e in timeline if keep(e.visit.node_id)]
    else:
        raise NotFound(f"no panel '{name}'")
    return context


@dataclass(frozen=True)
class LocalScope:
    """The local variables of one activity instance: a task's, a subprocess's."""

    owner: str  # the owner token's id
    node_id: str
    label: str
    variables: list[tuple[str, TypedValue]]


def _local_scopes(engine: Engine, instance_id: UUID) -> list[LocalScope]:
    """Every scope with local variables, grouped under the activity that owns them, in the
    order of the owners' tokens."""
    rows = [r for r in queries.variables_in_scopes(engine, instance_id) if r.scope_key]
    if not rows:
        return []
    info = queries.instance(engine, instance_id)
    assert info is not None
    model = engine.model(info.definition_id, info.definition_key)
    tokens = {str(t.id): t for t in queries.tokens(engine, instance_id)}
    grouped: dict[str, list[tuple[str, TypedValue]]] = {}
    for row in rows:
        grouped.setdefault(row.scope_key, []).append((row.name, from_row(row.type, row.value)))
    order = {key: index for index, key in enumerate(tokens)}
    scopes = []
    for owner in sorted(grouped, key=lambda key: order.get(key, -1)):
        token = tokens.get(owner)
        node_id = token.node_id if token is not None else "?"
        label = model.node(node_id).label if model.has_node(node_id) else node_id
        scopes.append(LocalScope(owner, node_id, label, sorted(grouped[owner])))
    return scopes


def _panels(engine: Engine, instance_id: UUID) -> dict[str, dict[str, Any]]:
    return {name: _panel(engine, instance_id, name, None) for name in PANELS}


def _counts(engine: Engine, instance_id: UUID) -> dict[str, int]:
    return {
        "incidents": len(engine.incidents(instance_id=instance_id)),
        "user_tasks": len(engine.user_tasks(instance_id)),
        "external_tasks": len(engine.external_tasks(instance_id=instance_id)),
        "jobs": len(engine.jobs(instance_id)),
    }


async def inspector(request: Request) -> Response:
    engine = engine_of(request)
    instance_id: UUID = request.path_params["instance_id"]
    info, version, model = await read(request, _info, engine, instance_id)
    panels = await read(request, _panels, engine, instance_id)
    counts = await read(request, _counts, engine, instance_id)
    family: Family = panels["family"]["family"]
    return render(
        request,
        "inspector.html",
        {
            "page": "instances",
            "info": info,
            "version": version,
            "nodes": _node_choices(model),
            "panels": panels,
            "counts": counts,
            "family": family,
            # The page follows the events of the whole family: a called instance's incident
            # shows on its caller's call activity.
            "family_root": info.root_instance_id or info.id,
        },
    )


async def header(request: Request) -> Response:
    engine = engine_of(request)
    instance_id: UUID = request.path_params["instance_id"]
    info, version, _ = await read(request, _info, engine, instance_id)
    counts = await read(request, _counts, engine, instance_id)
    family = await read(request, family_of, engine, instance_id)
    return render(
        request,
        "_inspector_header.html",
        {"info": info, "version": version, "counts": counts, "family": family},
    )


async def panel(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in PANELS:
        raise NotFound(f"no panel '{name}'")
    instance_id: UUID = request.path_params["instance_id"]
    node = Query(request.query_params).text("node")
    context = await read(request, _panel, engine_of(request), instance_id, name, node)
    return render(request, f"_panel_{name}.html", {"instance_id": instance_id, "p": context})


def diagram_state(engine: Engine, instance_id: UUID) -> dict[str, Any]:
    """Where the tokens are, which joins wait, where incidents are, which path was taken."""
    info = queries.instance(engine, instance_id)
    if info is None:
        raise NotFound(f"process instance {instance_id} does not exist")
    model = engine.model(info.definition_id, info.definition_key)
    tokens = queries.tokens(engine, instance_id)
    visits = queries.visits(engine, instance_id)
    joins = console.join_states(engine, instance_id)
    incidents = engine.incidents(instance_id=instance_id)
    waits = console.event_waits(engine, instance_id)
    family = family_of(engine, instance_id)
    live: dict[str, Counter[str]] = {}
    compensating: Counter[str] = Counter()
    for token in tokens:
        if not TokenState(token.state).is_final:
            live.setdefault(token.node_id, Counter())[token.state] += 1
            if token.mode == TokenMode.COMPENSATION:
                compensating[token.node_id] += 1
    completed = {v.node_id for v in visits if v.state == VisitState.COMPLETED}
    entered = {v.node_id for v in visits}
    taken = [f.id for f in model.flows if f.source in completed and f.target in entered]
    # Per gateway, what its waiting tokens wait for (several tokens: one after the other).
    gateway_waits: dict[str, list[str]] = {}
    for line in _gateway_waits(model, tokens, waits):
        gateway_waits.setdefault(line.gateway_id, []).extend(line.events)
    return {
        "instance_id": str(instance_id),
        "state": info.state,
        "tokens": {
            node: {
                "count": sum(states.values()),
                "states": dict(states),
                "compensation": compensating[node],
            }
            for node, states in live.items()
        },
        "joins": {
            line.join.gateway_id: {
                "arrived": len(line.join.arrived),
                "expected": line.expected,
                "upstream": line.upstream,
            }
            for line in _join_lines(model, joins, tokens)
        },
        "gateway_waits": gateway_waits,
        "loops": loop_badges(
            loop_lines(model, tokens, queries.variables_in_scopes(engine, instance_id))
        ),
        "incidents": dict(Counter(i.node_id for i in incidents)),
        "calls": call_badges(family),
        "completed": sorted(completed),
        "flows": taken,
    }


async def diagram(request: Request) -> Response:
    instance_id: UUID = request.path_params["instance_id"]
    state = await read(request, diagram_state, engine_of(request), instance_id)
    return JSONResponse(state, headers={"Cache-Control": "no-store"})


routes = [
    Route("/instances/{instance_id:uuid}", inspector, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/header", header, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/panel/{name}", panel, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/diagram.json", diagram, methods=["GET"]),
]
