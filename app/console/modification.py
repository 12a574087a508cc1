"""The inspector's token modification: an operator collects instructions (move, add before or
after a node, cancel a token), previews where the tokens would be, then applies them. Both are
POSTs (CSRF-checked by the middleware) that need an operator; the instructions come as one JSON
form field: [{"op": "cancel", "token": id} | {"op": "before" | "after", "node": id}, ...]."""

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
from engine.semantics.modification import CancelToken, Instruction, StartAfter, StartBefore

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
    node = entry.get("node")
    if op in ("before", "after"):
        if not isinstance(node, str) or not node:
            raise BadRequest(f"{where}: choose a target node")
        return StartBefore(node_id=node) if op == "before" else StartAfter(node_id=node)
    raise BadRequest(f"{where}: unknown operation {op!r} (cancel, before or after)")


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


def _described(tokens: Mapping[str, int]) -> str:
    if not tokens:
        return "no token is left"
    return ", ".join(f"{node} ({count})" for node, count in tokens.items())


def _apply(engine: Engine, who: Principal, form: Mapping[str, str], instance_id: UUID) -> str:
    annotation = form.get("annotation", "").strip() or None
    result = engine.modify(
        instance_id, *instructions(form.get("instructions", "")), annotation=annotation
    )
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
        result = await run_in_threadpool(engine.preview_modification, instance_id, *found)
        model = await run_in_threadpool(_labels, engine, instance_id)
    except InterlockError as error:
        return flash(request, error=error)
    return render(
        request,
        "_modify_preview.html",
        {"result": result, "labels": model, "tokens_json": result.tokens},
    )


def _labels(engine: Engine, instance_id: UUID) -> dict[str, str]:
    info = reads.instance(engine, instance_id)
    model = reads.model(engine, info.definition_id, info.definition_key)
    return {node.id: node.label for node in model.nodes}


routes = [
    Route("/instances/{instance_id:uuid}/modify", apply, methods=["POST"], name="modify"),
    Route(
        "/instances/{instance_id:uuid}/modify/preview",
        preview,
        methods=["POST"],
        name="modify_preview",
    ),
]
