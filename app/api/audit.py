"""The audit log (operators and admins): who changed what, newest first, a keyset page at a
time, with the console's filters."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.api import views
from app.api.http import Op, Param, Reply, call, engine_of, reply
from app.api.paging import PAGE_PARAMS
from app.api.schemas import STRING, TIME, ref
from app.gates import Gate
from app.params import Query
from engine.db.paging import DEFAULT_LIMIT, MAX_LIMIT
from engine.queries import audit as audit_reads
from engine.queries.audit import AuditFilter, AuditRow
from engine.states import AuditEntity, AuditOperation


def entry(row: AuditRow) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "at": views.iso(row.at),
        "user": row.user_id,
        "channel": row.channel,
        "operation": row.operation,
        "entity": row.entity,
        "entity_id": row.entity_id,
        "instance_id": views.ident(row.instance_id),
        "definition_id": row.definition_id,
        "definition_key": row.definition_key,
        "batch_id": views.ident(row.batch_id),
        "property": row.property,
        "before": row.before,
        "after": row.after,
        "annotation": row.annotation,
        "details": row.details,
    }


async def list_entries(request: Request) -> Response:
    query = Query(request.query_params)
    operations = query.some_of("operation", [o.value for o in AuditOperation]) or []
    entities = query.some_of("entity", [e.value for e in AuditEntity]) or []
    where = AuditFilter(
        user=query.text("user"),
        operations=tuple(operations),
        entities=tuple(entities),
        instance_id=query.uuid("instance_id"),
        definition_key=query.text("definition_key"),
        since=query.date("from"),
        until=query.date("to"),
    )
    limit = query.integer("limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
    found = await call(
        audit_reads.audit_page, engine_of(request), where, query.text("after"), limit
    )
    return reply(views.items([entry(row) for row in found.items], found.next))


operations = [
    Op(
        "GET",
        "/audit",
        list_entries,
        "The audit log: operator mutations, newest first, with keyset pagination",
        query=(
            Param("user", STRING, "who acted: a user's or an API token's name"),
            Param("operation", STRING, "operations, comma-separated (Retry, Delete, ...)"),
            Param("entity", STRING, "entities, comma-separated (ProcessInstance, Task, ...)"),
            Param("instance_id", STRING),
            Param("definition_key", STRING),
            Param("from", TIME, "at or after this time"),
            Param("to", TIME, "before this time"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of entries, newest first", ref("AuditEntryPage"))},
        gate=Gate.AUDIT,
    ),
]
