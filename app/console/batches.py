"""Batches: every batch with its progress, one batch with its failed items, and the operator's
buttons (suspend, resume, cancel, retry failed items: each shown when the batch's permits and its
type allow it, app/api/batches.py's `require_batch_type`); and creating a batch from a list's filter
(retry every incident it matches, cancel every instance it matches), its items fixed then.

Progress is polled: a batch is no instance, and the outbox's events belong to instances. While a
batch on the page is unfinished, its fragment asks for itself again every second (one small read
of a few rows); once every batch shown has ended, the fragment comes back without the trigger
and the polling stops."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import gates
from app.api.batches import require_batch_type
from app.console import incidents as incident_page
from app.console import instances as instance_page
from app.console.common import act, engine_of, read, render
from app.params import Query
from engine import batch as operations
from engine.api import Engine
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
from engine.queries import audit as audit_reads
from engine.queries import batch_impact as impact
from engine.queries import batches as bq
from engine.queries import lists
from engine.queries.audit import AuditFilter
from engine.queries.instances import InstanceFilter
from engine.queries.lists import IncidentFilter
from engine.states import AuditOperation, BatchType, InstanceState

# Batches the list shows, newest first.
LIST_SIZE = 100


def _list(engine: Engine) -> dict[str, Any]:
    rows = bq.batches(engine, limit=LIST_SIZE)
    return {
        "batches": rows,
        "labels": {t.value: op.label for t, op in operations.registered().items()},
        "live": any(row.state in bq.UNFINISHED for row in rows),
    }


async def batches_page(request: Request) -> Response:
    context = await read(request, _list, engine_of(request))
    if Query(request.query_params).text("fragment"):
        return render(request, "_batch_rows.html", context)
    return render(request, "batches.html", {"page": "batches", **context})


def _detail(engine: Engine, batch_id: UUID) -> dict[str, Any]:
    row = bq.batch(engine, batch_id)
    if row is None:
        raise NotFound(f"batch {batch_id} does not exist")
    operation = operations.registered().get(BatchType(row.type))
    return {
        "confirmed": _confirmed(engine, row.id, row.created_at),
        "batch": row,
        "label": operation.label if operation else row.type,
        "item": operation.item if operation else "item",
        "failures": bq.failed_items(engine, batch_id),
        "live": row.state in bq.UNFINISHED,
    }


def _confirmed(engine: Engine, batch_id: UUID, created_at: datetime) -> int | None:
    """The number of items the operator confirmed in the impact preview, kept with the entry
    that created the batch (written at the batch's creation time: one probe of the entries'
    time index); None when the batch was not created through a preview."""
    found = audit_reads.entries(
        engine,
        AuditFilter(
            operations=(AuditOperation.CREATE_BATCH,),
            entity_id=str(batch_id),
            since=created_at,
            until=created_at + timedelta(microseconds=1),
        ),
        limit=1,
    )
    details = found[0].details if found else None
    confirmed = details.get("confirmed") if isinstance(details, dict) else None
    return confirmed if isinstance(confirmed, int) else None


async def batch_page(request: Request) -> Response:
    batch_id: UUID = request.path_params["batch_id"]
    try:
        context = await read(request, _detail, engine_of(request), batch_id)
    except NotFound as exc:
        return render(
            request, "batch.html", {"page": "batches", "missing": exc.message}, status_code=404
        )
    # The buttons only when the batch's type and its permits allow them (the POSTs check again).
    actor, batch = actors.current(), context["batch"]
    context["can_act"] = gates.acts_on_batch_type(actor, batch.type) and permits.holds(
        actor, permits.UPDATE_BATCH, batch=batch.id
    )
    context["can_cancel"] = gates.acts_on_batch_type(actor, batch.type) and permits.holds(
        actor, permits.DELETE_BATCH, batch=batch.id
    )
    if Query(request.query_params).text("fragment"):
        return render(request, "_batch.html", context)
    return render(request, "batch.html", {"page": "batches", **context})


def _post(path: str, message: str, command: Callable[[UUID], Command[BatchResult]]) -> Route:
    """The POST route running `command` on the batch the path names; `message` may name
    `{retried}`, the items a retry made pending again."""

    async def endpoint(request: Request) -> Response:
        batch_id: UUID = request.path_params["batch_id"]

        def work(engine: Engine, who: Principal, form: Mapping[str, str]) -> str:
            row = bq.batch(engine, batch_id)
            if row is None:
                raise NotFound(f"batch {batch_id} does not exist")
            require_batch_type(request, row)
            result = engine.run(command(batch_id))
            return message.format(retried=result.retried)

        return await act(request, work)

    return Route(path, endpoint, methods=["POST"])


# -- creating batches from a list's filter --------------------------------------------------------


def _ids(batches: Iterable[list[Any]], key: str) -> list[str]:
    """The `key` of every row, batch after batch, refused past MAX_ITEMS."""
    ids: list[str] = []
    for rows in batches:
        ids += [str(getattr(row, key)) for row in rows]
        if len(ids) > MAX_ITEMS:
            raise BadRequest(f"the filter matches more than {MAX_ITEMS} items: narrow it")
    return ids


def _incident_ids(engine: Engine, fields: Mapping[str, str]) -> list[str]:
    return _ids(lists.incidents(engine, incident_filter(fields)), "id")


def instance_filter(
    fields: Mapping[str, str], *, roots: bool, state: InstanceState | None = None
) -> InstanceFilter:
    """The instance list's filter in `fields`, narrowed to the instances a batch can change:
    those that have not ended (with `roots`, those nobody called: a called instance ends with
    its root; with `state`, only those in it: a suspension works on active instances). The
    impact preview counts exactly these."""
    where = instance_page.filter_of(Query(QueryParams({k: v for k, v in fields.items() if v})))
    if state is not None:
        if where.state not in (None, state):
            raise BadRequest(
                f"the filter selects {where.state} instances; this batch works on {state} ones",
                field="state",
            )
        where = dataclasses.replace(where, state=state)
    return impact.unfinished(where, roots=roots)


def incident_filter(fields: Mapping[str, str]) -> IncidentFilter:
    return incident_page.filter_of(
        {k: v for k, v in fields.items() if k in incident_page.FILTER_FIELDS and v}
    )


def instance_ids(
    engine: Engine,
    fields: Mapping[str, str],
    *,
    roots: bool = True,
    state: InstanceState | None = None,
) -> list[str]:
    """The instances the filter matches that the batch can change (`instance_filter`)."""
    where = instance_filter(fields, roots=roots, state=state)
    return _ids(lists.instance_infos(engine, where), "id")


def _instance_ids(engine: Engine, fields: Mapping[str, str]) -> list[str]:
    return instance_ids(engine, fields, roots=True)


def confirmed_count(fields: Mapping[str, str]) -> int | None:
    """The number of items the impact preview showed the operator (its confirm button's
    `confirmed`), kept with the batch's audit entry; None when the form has none."""
    given = fields.get("confirmed", "").strip()
    if not given:
        return None
    try:
        number = int(given)
    except ValueError:
        raise BadRequest(f"confirmed must be a whole number, not {given[:20]!r}") from None
    if number < 0:
        raise BadRequest("confirmed must not be negative")
    return number


def batch_created(response: Response, batch_id: str | None) -> Response:
    """`response`, sending the browser to the batch's page when one was created."""
    if batch_id is not None:
        response.headers["HX-Redirect"] = f"/batches/{batch_id}"
    return response


def _no_payload(fields: Mapping[str, str]) -> dict[str, Any]:
    return {}


async def create_from_filter(
    request: Request,
    kind: BatchType,
    find: Callable[[Engine, Mapping[str, str]], list[str]],
    nothing: str,
    payload: Callable[[Mapping[str, str]], Mapping[str, Any]] = _no_payload,
) -> Response:
    """Create a batch of `kind` over what the form's filter matches now, with the parameters
    `payload` reads from the form (checked before the filter's items are read); the browser
    goes to the batch's page."""
    created: list[str] = []

    def create(engine: Engine, who: Principal, fields: Mapping[str, str]) -> str:
        # The permit CreateBatch declares, asked before the filter's items are read (the command
        # asks again): who may not create such a batch learns nothing of what it would match.
        permits.demand(actors.current(), permits.CREATE_BATCH[kind], permits.Facts({}))
        parameters = payload(fields)
        operations.operation(kind).check(parameters)
        confirmed = confirmed_count(fields)
        items = find(engine, fields)
        if not items:
            raise BadRequest(nothing)
        made = CreateBatch(kind, tuple(items), parameters, confirmed=confirmed)
        created.append(engine.run(made).batch_id)
        return "Batch created."

    response = await act(request, create)
    return batch_created(response, created[0] if created else None)


async def retry_incidents(request: Request) -> Response:
    return await create_from_filter(
        request, BatchType.RETRY_INCIDENTS, _incident_ids, "no open incident matches the filter"
    )


async def cancel_instances(request: Request) -> Response:
    return await create_from_filter(
        request, BatchType.CANCEL_INSTANCES, _instance_ids, "no instance matches the filter"
    )


routes = [
    Route("/batches", batches_page, methods=["GET"]),
    Route("/batches/{batch_id:uuid}", batch_page, methods=["GET"]),
    _post(
        "/batches/{batch_id:uuid}/suspend",
        "Batch suspended: the chunk in hand finishes, no other starts.",
        lambda batch_id: SuspendBatch(batch_id, True),
    ),
    _post(
        "/batches/{batch_id:uuid}/resume",
        "Batch resumed.",
        lambda batch_id: SuspendBatch(batch_id, False),
    ),
    _post(
        "/batches/{batch_id:uuid}/cancel",
        "Batch cancelled: the items not done yet stay undone.",
        CancelBatch,
    ),
    _post(
        "/batches/{batch_id:uuid}/retry",
        "{retried} failed items will run again.",
        RetryBatchItems,
    ),
    Route("/incidents/batch", retry_incidents, methods=["POST"]),
    Route("/instances/batch-cancel", cancel_instances, methods=["POST"]),
]
