"""The instance inspector: header, live diagram state, and one panel per kind of runtime row."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.camunda.dto import node_activity_type
from app.console import audit_timeline
from app.console.common import engine_of, is_binary, read, render, when
from app.console.decision_table import evaluation_lines
from app.console.family import Family, call_badges, family_of
from app.console.forms import task_forms
from app.console.loops import loop_badges, loop_lines
from app.console.modification import choices as modify_choices
from app.console.path import diagram_path, path_panel
from app.console.retrying import Retrying, retrying_of
from app.params import Query
from app.reads import typed_variables
from app.variable_files import binary_response
from engine.api import Engine
from engine.errors import NotFound
from engine.language.variables import TypedValue, from_row
from engine.model import EventBasedGateway, ProcessModel, StartEvent, SubProcess
from engine.queries import console, definitions, history, work
from engine.queries import instances as queries
from engine.queries.console import EventWait, JoinState
from engine.queries.instances import InstanceInfo, TokenRow, VariableRow, VisitRow
from engine.queries.joins import join_lines
from engine.queries.work import ExternalTaskInfo, IncidentInfo, JobInfo, TaskRow
from engine.states import InstanceState, TokenMode, TokenState, VisitState

PANELS = (
    "family",
    "incidents",
    "tokens",
    "user_tasks",
    "external_tasks",
    "jobs",
    "variables",
    "evaluations",
    "history",
)


def _node_choices(model: ProcessModel) -> list[tuple[str, str]]:
    return sorted(((n.id, n.label) for n in model.nodes), key=lambda pair: pair[1].lower())


class InstanceReads:
    """The rows of one instance that the inspector's header, panels and diagram show, each read
    at most once however many of them one request renders."""

    def __init__(self, engine: Engine, instance_id: UUID) -> None:
        self.engine = engine
        self.instance_id = instance_id

    @cached_property
    def info(self) -> InstanceInfo:
        info = queries.instance(self.engine, self.instance_id)
        if info is None:
            raise NotFound(f"process instance {self.instance_id} does not exist")
        return info

    @cached_property
    def version(self) -> int:
        """The version of the instance's definition."""
        definition = definitions.by_id(self.engine, self.info.definition_id)
        if definition is None:
            raise NotFound(f"process definition {self.info.definition_id} does not exist")
        return definition.version

    @cached_property
    def latest_version(self) -> int:
        """The latest version of the instance's definition key (a migration's default target)."""
        latest = definitions.latest(self.engine, self.info.definition_key)
        return latest.version if latest is not None else self.version

    @cached_property
    def model(self) -> ProcessModel:
        info, cache = self.info, self.engine.definition_cache
        return definitions.model(self.engine, cache, info.definition_id, info.definition_key)

    @cached_property
    def tokens(self) -> list[TokenRow]:
        return queries.tokens(self.engine, self.instance_id)

    @cached_property
    def visits(self) -> list[VisitRow]:
        return queries.visits(self.engine, self.instance_id)

    @cached_property
    def joins(self) -> list[JoinState]:
        return console.join_states(self.engine, self.instance_id)

    @cached_property
    def waits(self) -> list[EventWait]:
        return console.event_waits(self.engine, self.instance_id)

    @cached_property
    def scoped(self) -> list[VariableRow]:
        return queries.variables_in_scopes(self.engine, self.instance_id)

    @cached_property
    def family(self) -> Family:
        return family_of(self.engine, self.instance_id)

    @cached_property
    def incidents(self) -> list[IncidentInfo]:
        return work.incidents(self.engine, instance_id=self.instance_id)

    @cached_property
    def user_tasks(self) -> list[TaskRow]:
        return work.user_tasks(self.engine, instance_id=self.instance_id)

    @cached_property
    def external_tasks(self) -> list[ExternalTaskInfo]:
        return work.external_tasks(
            self.engine, instance_id=self.instance_id, now=self.engine.clock()
        )

    @cached_property
    def jobs(self) -> list[JobInfo]:
        return work.jobs(self.engine, instance_id=self.instance_id)

    @cached_property
    def retrying(self) -> Retrying:
        return retrying_of(self.engine, self.instance_id)

    @cached_property
    def taken(self) -> dict[str, int]:
        """How often each sequence flow of the instance was taken."""
        return history.taken_flows(self.engine, self.instance_id)


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


def _panel(reads: InstanceReads, name: str, node: str | None) -> dict[str, Any]:
    def keep(node_id: str) -> bool:
        return node is None or node_id == node

    info = reads.info  # NotFound for an unknown instance, whatever the panel
    # What the panels' controls are shown by: `can(permit, instance=p.instance, definition=p.key)`.
    context: dict[str, Any] = {"node": node, "instance": info.id, "key": info.definition_key}
    if name == "family":
        context["family"] = reads.family
    elif name == "incidents":
        context["incidents"] = [i for i in reads.incidents if keep(i.node_id)]
        context["ended_incidents"] = [
            i for i in history.ended_incidents(reads.engine, reads.instance_id) if keep(i.node_id)
        ]
    elif name == "tokens":
        tokens, joins, model = reads.tokens, reads.joins, reads.model
        context["lines"] = [line for line in _lineage(tokens) if keep(line.token.node_id)]
        context["joins"] = [
            line for line in join_lines(model, joins, tokens) if keep(line.join.gateway_id)
        ]
        waits = reads.waits
        context["gateway_waits"] = [
            line for line in _gateway_waits(model, tokens, waits) if keep(line.gateway_id)
        ]
        context["listening"] = [
            line
            for line in _scope_listeners(model, tokens, waits)
            if keep(line.start_id) or keep(line.subprocess_id)
        ]
        context["event_subprocesses"] = _event_subprocesses(model)
        context["loops"] = [
            line for line in loop_lines(model, tokens, reads.scoped) if keep(line.host.node_id)
        ]
        context["names"] = {n.id: n.label for n in model.nodes}
        context["calls"] = reads.family.running_by_token()
    elif name == "user_tasks":
        context["tasks"] = [t for t in reads.user_tasks if keep(t.node_id)]
        context["forms"] = task_forms(reads.engine, context["tasks"])
    elif name == "external_tasks":
        context["external"] = [t for t in reads.external_tasks if keep(t.node_id)]
        context["now"] = datetime.now(UTC)
        context["retrying"] = reads.retrying
    elif name == "jobs":
        context["jobs"] = [j for j in reads.jobs if keep(j.node_id)]
        context["now"] = datetime.now(UTC)
        context["retrying"] = reads.retrying
    elif name == "variables":
        variables = typed_variables(reads.engine, reads.instance_id)
        context["variables"] = sorted(variables.items())
        context["scopes"] = [g for g in _local_scopes(reads) if keep(g.node_id)]
        context["final"] = InstanceState(info.state).is_final
    elif name == "evaluations":
        context["evaluations"] = [
            line
            for line in evaluation_lines(reads.engine, reads.instance_id)
            if keep(line.evaluation.node_id or "")
        ]
    elif name == "history":
        timeline = _timeline(reads.visits, reads.info, reads.model)
        context["timeline"] = [e for e in timeline if keep(e.visit.node_id)]
        context["audit"] = audit_timeline.placed(
            reads.engine, reads.instance_id, context["timeline"], node
        )
        context.update(path_panel(reads.model, reads.visits, reads.taken, node))
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


def _local_scopes(reads: InstanceReads) -> list[LocalScope]:
    """Every scope with local variables, grouped under the activity that owns them, in the
    order of the owners' tokens."""
    rows = [r for r in reads.scoped if r.scope_key]
    if not rows:
        return []
    model = reads.model
    tokens = {str(t.id): t for t in reads.tokens}
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


def _panels(reads: InstanceReads) -> dict[str, dict[str, Any]]:
    return {name: _panel(reads, name, None) for name in PANELS}


def _counts(reads: InstanceReads) -> dict[str, int]:
    return {
        "incidents": len(reads.incidents),
        "user_tasks": len(reads.user_tasks),
        "external_tasks": len(reads.external_tasks),
        "jobs": len(reads.jobs),
    }


def _page(reads: InstanceReads) -> dict[str, Any]:
    """What `inspector.html` shows."""
    info, panels = reads.info, _panels(reads)
    return {
        "page": "instances",
        "info": info,
        "version": reads.version,
        "latest_version": reads.latest_version,
        "nodes": _node_choices(reads.model),
        "modify_choices": modify_choices(reads.model),
        "panels": panels,
        "counts": _counts(reads),
        "family": reads.family,
        "retrying": reads.retrying,
        # The page follows the events of the whole family: a called instance's incident shows
        # on its caller's call activity.
        "family_root": info.root_instance_id or info.id,
    }


async def inspector(request: Request) -> Response:
    reads = InstanceReads(engine_of(request), request.path_params["instance_id"])
    return render(request, "inspector.html", await read(request, _page, reads))


def _header(reads: InstanceReads) -> dict[str, Any]:
    """What `_inspector_header.html` shows."""
    return {
        "info": reads.info,
        "version": reads.version,
        "latest_version": reads.latest_version,
        "counts": _counts(reads),
        "family": reads.family,
        "retrying": reads.retrying,
    }


async def header(request: Request) -> Response:
    reads = InstanceReads(engine_of(request), request.path_params["instance_id"])
    return render(request, "_inspector_header.html", await read(request, _header, reads))


async def panel(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in PANELS:
        raise NotFound(f"no panel '{name}'")
    instance_id: UUID = request.path_params["instance_id"]
    node = Query(request.query_params).text("node")
    reads = InstanceReads(engine_of(request), instance_id)
    context = await read(request, _panel, reads, name, node)
    return render(request, f"_panel_{name}.html", {"instance_id": instance_id, "p": context})


def diagram_state(reads: InstanceReads) -> dict[str, Any]:
    """Where the tokens are, which joins wait, where incidents are, which path was taken."""
    info, model, tokens, visits = reads.info, reads.model, reads.tokens, reads.visits
    joins, incidents, waits, family = reads.joins, reads.incidents, reads.waits, reads.family
    instance_id = reads.instance_id
    live: dict[str, Counter[str]] = {}
    compensating: Counter[str] = Counter()
    for token in tokens:
        if not TokenState(token.state).is_final:
            live.setdefault(token.node_id, Counter())[token.state] += 1
            if token.mode == TokenMode.COMPENSATION:
                compensating[token.node_id] += 1
    completed = {v.node_id for v in visits if v.state == VisitState.COMPLETED}
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
            for line in join_lines(model, joins, tokens)
        },
        "gateway_waits": gateway_waits,
        "loops": loop_badges(loop_lines(model, tokens, reads.scoped)),
        "incidents": dict(Counter(i.node_id for i in incidents)),
        "calls": call_badges(family),
        "completed": sorted(completed),
        **diagram_path(model, visits, reads.taken),
    }


async def diagram(request: Request) -> Response:
    reads = InstanceReads(engine_of(request), request.path_params["instance_id"])
    state = await read(request, diagram_state, reads)
    return JSONResponse(state, headers={"Cache-Control": "no-store"})


# What the inspector's live refresh can ask for: the header, each panel, the diagram's state.
LIVE_PARTS = ("header", *PANELS, "diagram")


def _live(reads: InstanceReads, parts: list[str], node: str | None) -> dict[str, Any]:
    """Everything `parts` names, from one set of reads of the instance."""
    return {
        "header": _header(reads) if "header" in parts else None,
        "panels": {name: _panel(reads, name, node) for name in PANELS if name in parts},
        "diagram": diagram_state(reads) if "diagram" in parts else None,
        "instance_id": reads.instance_id,
    }


async def live(request: Request) -> Response:
    """The parts of an open inspector that an event burst changed, in one answer: each as an
    out-of-band swap of its element on the page (the diagram's state as JSON in
    `#diagram-state`). `parts` is a comma-separated list of LIVE_PARTS (default: all);
    `node` filters the panels as /panel/{name} does."""
    query = Query(request.query_params)
    parts = query.some_of("parts", LIVE_PARTS) or list(LIVE_PARTS)
    node = query.text("node")
    reads = InstanceReads(engine_of(request), request.path_params["instance_id"])
    context = await read(request, _live, reads, parts, node)
    return render(request, "_inspector_live.html", context)


def _binary_variable(reads: InstanceReads, name: str, scope: str) -> TypedValue:
    """The Bytes or File variable `name` of the instance's scope `scope` ('' the root)."""
    if reads.info is not None:
        for row in reads.scoped:
            if row.name == name and row.scope_key == scope:
                value = from_row(row.type, row.value)
                if is_binary(value):
                    return value
    raise NotFound(f"the instance {reads.instance_id} has no Bytes or File variable {name!r}")


async def variable_data(request: Request) -> Response:
    """A Bytes or File variable's bytes (`name`, and `scope`, the owner token of a local one):
    always a download, never shown inline."""
    query = Query(request.query_params)
    name, scope = query.text("name") or "", query.text("scope") or ""
    reads = InstanceReads(engine_of(request), request.path_params["instance_id"])
    value = await read(request, _binary_variable, reads, name, scope)
    return binary_response(value, name)


routes = [
    Route("/instances/{instance_id:uuid}", inspector, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/variables/data", variable_data, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/header", header, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/panel/{name}", panel, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/live", live, methods=["GET"]),
    Route("/instances/{instance_id:uuid}/diagram.json", diagram, methods=["GET"]),
]
