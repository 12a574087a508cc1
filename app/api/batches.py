"""Batches: one operation over many items, run in the background by the job executors (see
engine/commands/batches.py); create one over a list of ids, follow it, suspend, resume, cancel it
or retry its failed items.

Creating a batch and acting on one need the batch permits its commands declare, and for history
deletion and migration what their items need on every definition (app/gates.py's
`BATCH_TYPE_GATES`). `require_batch_type` is that check for an existing batch, on this surface,
/engine-rest's and the console's."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response

from app import gates
from app.api.body import Body
from app.api.http import Op, Param, Reply, call, engine_of, path_id, reply, run
from app.api.instances import instance_filter
from app.api.paging import PAGE_PARAMS, created, listed
from app.api.schemas import (
    ANY,
    COMPONENTS,
    INTEGER,
    STRING,
    TIME,
    UUID,
    array,
    nullable,
    record,
    ref,
    request,
)
from app.auth import principal_of
from app.params import Query
from engine import batch as registry
from engine.commands.batches import (
    MAX_ITEMS,
    BatchResult,
    CancelBatch,
    CreateBatch,
    RetryBatchItems,
    SuspendBatch,
)
from engine.core import actors, permits
from engine.core.executor import Command
from engine.errors import BadRequest, NotFound
from engine.identity.accounts import Principal
from engine.queries import batch_impact as impact
from engine.queries import batches as bq
from engine.queries import lists as instance_lists
from engine.states import BatchState, BatchType

NO_BODY = request({})
CREATE_BODY = request(
    {
        "type": STRING,
        "items": array(STRING),
        "filter": {"type": "object"},
        "payload": {"type": "object"},
    },
    required=("type",),
)
BATCH = record(
    {
        "id": UUID,
        "type": STRING,
        "state": STRING,
        "payload": ANY,
        "total": INTEGER,
        "done": INTEGER,
        "failed": INTEGER,
        "remaining": INTEGER,
        "created_by": nullable(STRING),
        "created_at": TIME,
        "updated_at": TIME,
        "ended_at": nullable(TIME),
        "failures": array(record({"item": STRING, "error": nullable(STRING), "attempts": INTEGER})),
    },
    "A batch; `failures` lists its failed items (at most 200) on the batch's own page only.",
)
# This module's schemas, in the document's components.
COMPONENTS.update(
    {
        "Batch": BATCH,
        "BatchPage": record({"items": array(ref("Batch")), "next": nullable(STRING)}),
    }
)


def batch_view(row: bq.BatchRow, failures: list[bq.ItemRow] | None = None) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "type": row.type,
        "state": row.state,
        "payload": row.payload,
        "total": row.total,
        "done": row.done,
        "failed": row.failed,
        "remaining": row.remaining,
        "created_by": row.created_by,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
        "failures": [
            {"item": f.item_id, "error": f.error, "attempts": f.attempts} for f in failures or []
        ],
    }


async def list_batches(request: Request) -> Response:
    query = Query(request.query_params)
    state = query.one_of("state", [s.value for s in BatchState])
    kind = query.one_of("type", [t.value for t in BatchType])
    fetch = partial(
        bq.batches,
        engine_of(request),
        types=[kind] if kind else None,
        states=[state] if state else None,
    )
    return await listed(query, fetch, created, batch_view)


def _found(request: Request) -> dict[str, Any]:
    engine = engine_of(request)
    batch_id = path_id(request)
    row = bq.batch(engine, batch_id)
    if row is None:
        raise NotFound(f"batch {batch_id} does not exist", batch_id=str(batch_id))
    return batch_view(row, bq.failed_items(engine, batch_id))


async def get_batch(request: Request) -> Response:
    return reply(await call(_found, request))


def require_batch_type(request: Request, row: bq.BatchRow) -> Principal:
    """The caller, if they hold what acting on a batch of its type needs besides the batch
    commands' own permits (app/gates.py's `BATCH_TYPE_GATES`); else AuthorizationDenied."""
    principal = principal_of(request)
    gates.demand_batch_type(actors.current(), row.type)
    return principal


def _filter_params(given: dict[str, Any]) -> QueryParams:
    """The body's `filter`: the query parameters of GET /instances as an object (a list is the
    parameter repeated)."""
    pairs: list[tuple[str, str]] = []
    for key, value in given.items():
        values = value if isinstance(value, list) else [value]
        for one in values:
            if isinstance(one, bool):
                pairs.append((key, "true" if one else "false"))
            elif isinstance(one, str | int):
                pairs.append((key, str(one)))
            else:
                raise BadRequest(
                    f"field 'filter.{key}' must be a string, number, boolean or a list of them",
                    field=f"filter.{key}",
                )
    known = {"definition_key", "definition_id", "version", "state", "business_key"}
    known |= {"has_incident", "retrying", "started_after", "started_before", "var"}
    known |= {"root_only", "called_by"}
    for key, _ in pairs:
        if key not in known:
            raise BadRequest(
                f"unknown field 'filter.{key}'; known: {', '.join(sorted(known))}",
                field=f"filter.{key}",
            )
    return QueryParams(pairs)


def _filtered(engine: Any, kind: str, given: dict[str, Any]) -> list[str]:
    """The instances a batch of `kind` can change that the filter matches now: those that have
    not ended (for a cancellation, only roots: a called instance ends with its root)."""
    where = instance_filter(Query(_filter_params(given)))
    roots = kind == BatchType.CANCEL_INSTANCES
    found = instance_lists.instance_infos(engine, impact.unfinished(where, roots=roots))
    ids: list[str] = []
    for rows in found:
        ids += [str(i.id) for i in rows]
        if len(ids) > MAX_ITEMS:
            raise BadRequest(
                f"the filter matches more than {MAX_ITEMS} instances: narrow it", field="filter"
            )
    return ids


async def create_batch(request: Request) -> Response:
    """Operators; a type that needs an administrator (delete-history, migrate) is refused to
    others. The payload is checked before any instance is read: a bad one is a 400 naming its
    field (`variables`, `retries`), and nothing is created."""
    body = await Body.read(request, CREATE_BODY)
    kind = body.required_text("type")
    operation = registry.operation(kind)  # an unknown type is a 400 naming the known ones
    gates.demand_batch_type(actors.current(), kind)
    payload = body.mapping("payload")
    operation.check(payload)  # refused before any instance is read
    items = body.strings("items") or ()
    if body.data.get("filter") is not None:
        if operation.item != "process instance":
            raise BadRequest(
                f"a batch of type {kind} works on {operation.item}s: name them in 'items'",
                field="filter",
            )
        permits.demand(actors.current(), permits.CREATE_BATCH[operation.type], permits.Facts({}))
        found = await call(_filtered, engine_of(request), kind, body.mapping("filter"))
        items = (*items, *found)
    result = await run(request, CreateBatch(kind, items, payload))
    return await _answer(request, result, 201)


async def _answer(request: Request, result: BatchResult, status: int = 200) -> Response:
    engine = engine_of(request)
    row = await call(bq.batch, engine, uuid.UUID(result.batch_id))
    assert row is not None
    return reply(batch_view(row), status)


BatchCommand = Callable[[uuid.UUID], Command[BatchResult]]


def _on_batch(name: str, command: BatchCommand) -> Callable[[Request], Any]:
    async def handler(request: Request) -> Response:
        await Body.read(request, NO_BODY)
        batch_id = path_id(request)
        row = await call(bq.batch, engine_of(request), batch_id)
        if row is None:
            raise NotFound(f"batch {batch_id} does not exist", batch_id=str(batch_id))
        require_batch_type(request, row)
        return await _answer(request, await run(request, command(batch_id)))

    handler.__name__ = handler.__qualname__ = name
    return handler


_BATCH_REPLY = {200: Reply("The batch", ref("Batch"))}


def _mutation(path: str, summary: str, command: BatchCommand) -> Op:
    """A batch command on the batch the path names (`require_batch_type` first)."""
    return Op(
        "POST",
        path,
        _on_batch(f"{path.rsplit('/', 1)[1]}_batch", command),
        summary + " (the role the batch's type needs: administrators for delete-history, migrate)",
        body=NO_BODY,
        replies=_BATCH_REPLY,
    )


operations = [
    Op(
        "GET",
        "/batches",
        list_batches,
        "Query batches, newest first, with keyset pagination",
        query=(
            Param("state", STRING, "Running, Suspended, Completed or Cancelled"),
            Param("type", STRING, "retry-incidents, set-job-retries, cancel-instances..."),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of batches, newest first", ref("BatchPage"))},
    ),
    Op(
        "GET",
        "/batches/{id}",
        get_batch,
        "One batch, with its failed items and their errors",
        replies=_BATCH_REPLY,
    ),
    Op(
        "POST",
        "/batches",
        create_batch,
        "Create a batch of `type` over `items` (ids) and, for the types that work on process "
        "instances, those not ended that `filter` (GET /instances's query parameters as an "
        "object) matches now, with the type's `payload` (`retries`; `variables` and `remove` "
        "for set-variables, checked before anything is created); the job executors run it",
        body=CREATE_BODY,
        body_required=True,
        replies={201: Reply("The batch, running", ref("Batch"))},
    ),
    _mutation(
        "/batches/{id}/suspend",
        "Suspend the batch: the chunk in hand finishes, no other starts",
        lambda batch_id: SuspendBatch(batch_id, True),
    ),
    _mutation(
        "/batches/{id}/resume",
        "Resume a suspended batch",
        lambda batch_id: SuspendBatch(batch_id, False),
    ),
    _mutation(
        "/batches/{id}/cancel",
        "Cancel the batch: the items not done yet stay undone",
        CancelBatch,
    ),
    _mutation(
        "/batches/{id}/retry",
        "Make the batch's failed items pending again",
        RetryBatchItems,
    ),
]
