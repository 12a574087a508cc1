"""The inspector's token modification: an operator collects instructions (move, add before or
after a node or on a flow, cancel a token), previews where the tokens would be, then applies them.
Both are POSTs (CSRF-checked by the middleware) that need an operator; the instructions come as
one JSON form field: [{"op": "cancel", "token": id} | {"op": "before" | "after", "node": id} |
{"op": "flow", "flow": id}, ...].

What the model can never accept (a parallel join started directly, a start after a node without
one outgoing flow, ...: `start_refusal`) is offered neither in the inspector (`choices`, which
offers the flows to start on instead) nor accepted here, and is refused in the operator's words
before any preview."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import reads
from app.auth import require
from app.console.common import act, engine_of, flash, form_text, render
from engine.api import Engine
from engine.core import actors, permits
from engine.errors import BadRequest, InterlockError, NotFound
from engine.identity.accounts import Principal
from engine.language import json_input
from engine.model import Node, ProcessModel
from engine.semantics.modification import (
    CancelToken,
    Instruction,
    StartAfter,
    StartBefore,
    StartOnFlow,
    StartRefusal,
    start_refusal,
)

# The most instructions one console modification carries.
MAX_INSTRUCTIONS = 100


def _instruction(entry: Any, index: int) -> Instruction:
    where = f"instruction {index + 1}"
    if not isinstance(entry, Mapping):
        raise BadRequest(f"{where} must be an object")
    op = entry.get("op")
    if op == "cancel":
        token = entry.get("token")
        try:
            return CancelToken(UUID(str(token)))
        except ValueError:
            raise BadRequest(f"{where}: '{token}' is no token id") from None
    if op == "flow":
        flow = entry.get("flow")
        if not isinstance(flow, str) or not flow:
            raise BadRequest(f"{where}: choose a flow to start on")
        return StartOnFlow(flow_id=flow)
    node = entry.get("node")
    if op in ("before", "after"):
        if not isinstance(node, str) or not node:
            raise BadRequest(f"{where}: choose a target node")
        return StartBefore(node_id=node) if op == "before" else StartAfter(node_id=node)
    raise BadRequest(f"{where}: unknown operation {op!r} (cancel, before, after or flow)")


def instructions(raw: str) -> tuple[Instruction, ...]:
    """The instructions of the form's `instructions` field."""
    try:
        entries = json_input.loads(raw, "instructions") if raw.strip() else []
    except json_input.JsonSyntaxError as exc:
        raise BadRequest(f"instructions: not valid JSON: {exc}") from exc
    if not isinstance(entries, list) or not entries:
        raise BadRequest("add at least one instruction first")
    if len(entries) > MAX_INSTRUCTIONS:
        raise BadRequest(f"at most {MAX_INSTRUCTIONS} instructions at once")
    return tuple(_instruction(entry, index) for index, entry in enumerate(entries))


def _flow_text(model: ProcessModel, flow_id: str, *, into: bool) -> str:
    """A flow as an operator names it: by where it comes from (`into` a node) or leads to."""
    flow = model.flow(flow_id)
    end = model.node(flow.source if into else flow.target).label
    name = f"“{flow.name}” " if flow.name else ""
    return f"{name}{'from' if into else 'to'} {end}"


def _instead(model: ProcessModel, node: Node, refusal: StartRefusal | None) -> list[str]:
    """The flows a refused start may take instead: a join's incoming flows, the outgoing flows
    of a node with several."""
    if refusal is StartRefusal.PARALLEL_JOIN:
        return list(node.incoming)
    if refusal is StartRefusal.NOT_ONE_OUTGOING_FLOW and len(node.outgoing) > 1:
        return list(node.outgoing)
    return []


def refusal_text(model: ProcessModel, node: Node, refusal: StartRefusal) -> str:
    """Why a start at `node` is refused, in the operator's words, with what to do instead."""
    label = node.label
    if refusal is StartRefusal.COMPENSATION_HANDLER:
        return (
            f"{label} is a compensation handler: it runs only when its activity is compensated "
            "and cannot be started by hand."
        )
    if refusal is StartRefusal.EVENT_SUBPROCESS_WITHOUT_START:
        return f"The event subprocess {label} has no start event: it cannot be started by hand."
    if refusal is StartRefusal.PARALLEL_JOIN:
        flows = "; ".join(_flow_text(model, f, into=True) for f in node.incoming)
        return (
            f"A parallel join cannot be started directly; start on one of its incoming flows: "
            f"{flows}."
        )
    if not node.outgoing:
        return f"{label} has no outgoing flow: nothing can start after it."
    flows = "; ".join(_flow_text(model, f, into=False) for f in node.outgoing)
    return (
        f"{label} has {len(node.outgoing)} outgoing flows, so “after” says not which; start "
        f"on one of them: {flows}."
    )


def choices(model: ProcessModel) -> dict[str, dict[str, Any]]:
    """For each node the inspector offers as a target, what can start there (static/modify.js):
    `before` and `after` hold the refusal in the operator's words (None: allowed), `flows` the
    flows offered to start on instead ([id, text]) and `pickable` whether anything can."""
    found: dict[str, dict[str, Any]] = {}
    for node in model.nodes:
        before = start_refusal(model, node, after=False)
        after = start_refusal(model, node, after=True)
        instead = _instead(model, node, before) + [
            f for f in _instead(model, node, after) if f not in node.incoming
        ]
        found[node.id] = {
            "before": refusal_text(model, node, before) if before else None,
            "after": refusal_text(model, node, after) if after else None,
            "flows": [[f, _flow_text(model, f, into=f in node.incoming)] for f in instead],
            "pickable": before is None or after is None or bool(instead),
        }
    return found


def _refuse_before_preview(model: ProcessModel, found: tuple[Instruction, ...]) -> None:
    """Refuse, in the operator's words, a start the model can never accept."""
    for index, instruction in enumerate(found):
        if not isinstance(instruction, StartBefore | StartAfter):
            continue
        if not model.has_node(instruction.node_id):
            raise BadRequest(f"instruction {index + 1}: there is no node {instruction.node_id!r}")
        node = model.node(instruction.node_id)
        refusal = start_refusal(model, node, after=isinstance(instruction, StartAfter))
        if refusal is not None:
            raise BadRequest(refusal_text(model, node, refusal))


def _described(tokens: Mapping[str, int]) -> str:
    if not tokens:
        return "no token is left"
    return ", ".join(f"{node} ({count})" for node, count in tokens.items())


def _apply(engine: Engine, who: Principal, form: Mapping[str, str], instance_id: UUID) -> str:
    annotation = form.get("annotation", "").strip() or None
    found = instructions(form.get("instructions", ""))
    model = _model(engine, instance_id)
    if model is not None:
        _refuse_before_preview(model, found)
    result = engine.modify(instance_id, *found, annotation=annotation)
    return f"Modification applied ({result.state}): tokens at {_described(result.tokens)}."


def _may_modify(engine: Engine, instance_id: UUID) -> None:
    """The permit the modification declares, asked before its instructions are read (the
    command asks again): who may not change the instance learns nothing of what they sent. An
    instance the caller may not read is left to the command, which refuses or finds none."""
    try:
        info = reads.instance(engine, instance_id)
    except NotFound:
        return
    permits.demand(
        actors.current(),
        permits.UPDATE_INSTANCE,
        permits.facts_of(instance=instance_id, definition=info.definition_key),
    )


async def apply(request: Request) -> Response:
    instance_id: UUID = request.path_params["instance_id"]

    def work(engine: Engine, who: Principal, form: Mapping[str, str]) -> str:
        _may_modify(engine, instance_id)
        return _apply(engine, who, form, instance_id)

    return await act(request, work)


async def preview(request: Request) -> Response:
    """Where the tokens would be: a list, and the counts for the diagram's ghost overlays."""
    instance_id: UUID = request.path_params["instance_id"]
    try:
        require(request)
        engine = engine_of(request)
        await run_in_threadpool(_may_modify, engine, instance_id)
        form = await request.form()
        found = instructions(form_text(form, "instructions"))
        model = await run_in_threadpool(_model, engine, instance_id)
        if model is not None:
            _refuse_before_preview(model, found)
        result = await run_in_threadpool(engine.preview_modification, instance_id, *found)
    except InterlockError as error:
        return flash(request, error=error)
    return render(
        request,
        "_modify_preview.html",
        {
            "result": result,
            "labels": {node.id: node.label for node in (model.nodes if model else ())},
            "tokens_json": result.tokens,
        },
    )


def _model(engine: Engine, instance_id: UUID) -> ProcessModel | None:
    """The instance's model; None for an instance the caller may not read (or none): the
    command then refuses, or finds none, in its own words."""
    try:
        info = reads.instance(engine, instance_id)
    except NotFound:
        return None
    return reads.model(engine, info.definition_id, info.definition_key)


routes = [
    Route("/instances/{instance_id:uuid}/modify", apply, methods=["POST"], name="modify"),
    Route(
        "/instances/{instance_id:uuid}/modify/preview",
        preview,
        methods=["POST"],
        name="modify_preview",
    ),
]
