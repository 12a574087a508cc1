"""Camunda's user operation log (`/history/user-operation`) over the audit log: one entry per
operation, so an entry's `operationId` is its own id. Categories as Camunda's: TaskWorker for
user tasks, Admin for deployments, definitions, users, tokens and configuration, Operator for
the rest (instances, variables, jobs, external tasks, incidents, batches, history)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda.dto import format_date
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response
from app.gates import Gate
from engine.commands.audit import AnnotateEntry
from engine.queries import audit as audit_reads
from engine.queries.audit import AuditFilter, AuditRow
from engine.states import AuditEntity, AuditOperation

TASK_WORKER, OPERATOR, ADMIN = "TaskWorker", "Operator", "Admin"
CATEGORY: dict[AuditEntity, str] = {
    AuditEntity.TASK: TASK_WORKER,
    AuditEntity.DEPLOYMENT: ADMIN,
    AuditEntity.PROCESS_DEFINITION: ADMIN,
    AuditEntity.USER: ADMIN,
    AuditEntity.API_TOKEN: ADMIN,
    AuditEntity.CONFIGURATION: ADMIN,
}
CATEGORIES = (TASK_WORKER, OPERATOR, ADMIN)
# Filters naming one entity's id: the entities whose entries carry it (a task's variables'
# entries carry the task's id).
ID_FILTERS: dict[str, frozenset[AuditEntity]] = {
    "deploymentId": frozenset({AuditEntity.DEPLOYMENT}),
    "taskId": frozenset({AuditEntity.TASK, AuditEntity.VARIABLE}),
    "jobId": frozenset({AuditEntity.JOB}),
    "externalTaskId": frozenset({AuditEntity.EXTERNAL_TASK}),
}
TASK_ENTITIES = {entity.value for entity in ID_FILTERS["taskId"]}


def category_of(entity: str) -> str:
    return CATEGORY.get(AuditEntity(entity), OPERATOR)


def _text(value: Any) -> str | None:
    """Camunda's values are text: a string as it is, anything else as JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _id_of(row: AuditRow, entity: AuditEntity) -> str | None:
    return row.entity_id if row.entity == entity.value else None


def entry(row: AuditRow) -> dict[str, Any]:
    """Camunda's UserOperationLogEntryDto."""
    instance = str(row.instance_id) if row.instance_id else None
    task = row.entity_id if row.entity in TASK_ENTITIES else None  # a task's or its variables'
    return {
        "id": str(row.id),
        "deploymentId": _id_of(row, AuditEntity.DEPLOYMENT),
        "processDefinitionId": row.definition_id,
        "processDefinitionKey": row.definition_key,
        "processInstanceId": instance,
        "executionId": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "caseExecutionId": None,
        "taskId": task,
        "jobId": _id_of(row, AuditEntity.JOB),
        "jobDefinitionId": None,
        "batchId": str(row.batch_id) if row.batch_id else None,
        "userId": row.user_id,
        "timestamp": format_date(row.at),
        "operationId": str(row.id),
        "externalTaskId": _id_of(row, AuditEntity.EXTERNAL_TASK),
        "operationType": row.operation,
        "entityType": row.entity,
        "property": row.property,
        "orgValue": _text(row.before),
        "newValue": _text(row.after),
        "removalTime": None,
        "rootProcessInstanceId": None,
        "category": category_of(row.entity),
        "annotation": row.annotation,
    }


def _filter(call: Call) -> AuditFilter:
    entity_names = [e.value for e in AuditEntity]
    entities: set[str] | None = None

    def narrow(allowed: set[str]) -> None:
        nonlocal entities
        entities = allowed if entities is None else entities & allowed

    entity_type = call.one_of("entityType", entity_names)
    if entity_type is not None:
        narrow({entity_type})
    entity_in = call.some_of("entityTypeIn", entity_names)
    if entity_in is not None:
        narrow(set(entity_in))
    categories = [c for c in (call.one_of("category", CATEGORIES),) if c]
    categories += call.some_of("categoryIn", CATEGORIES) or []
    for category in dict.fromkeys(categories):
        narrow({e.value for e in AuditEntity if category_of(e.value) == category})
    entity_id: str | None = None
    for name, named in ID_FILTERS.items():
        value = call.text(name)
        if value is not None:
            entity_id = value
            narrow({entity.value for entity in named})
    operation = call.one_of("operationType", [o.value for o in AuditOperation])
    if entities is not None and not entities:
        entities = {""}  # filters that exclude each other: no entity is named ""
    return AuditFilter(
        user=call.text("userId"),
        operations=(operation,) if operation else (),
        entities=tuple(sorted(entities or ())),
        entity_id=entity_id,
        instance_id=call.uuid("processInstanceId"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        entry_id=call.uuid("operationId"),
        since=call.date("afterTimestamp"),
        until=call.date("beforeTimestamp"),
    )


def list_entries(call: Call) -> Response:
    where = _filter(call)
    page = call.page({"timestamp": "at"})
    descending = any(desc for _, desc in page.sort)
    rows = audit_reads.entries(
        call.engine, where, first=page.first, limit=page.max, descending=descending
    )
    return json_response([entry(row) for row in rows])


def count_entries(call: Call) -> Response:
    return json_response({"count": audit_reads.count(call.engine, _filter(call))})


def _annotate(call: Call, annotation: str | None) -> Response:
    text = call.path["id"]
    try:
        entry_id = UUID(text)
    except ValueError:
        raise invalid_request(f"There is no user operation log entry with id {text}", 404) from None
    call.engine.run(AnnotateEntry(entry_id, annotation))
    return Response(status_code=204)


def set_annotation(call: Call) -> Response:
    annotation = call.body_text("annotation")
    if annotation is None:
        raise invalid_request("'annotation' is required")
    return _annotate(call, annotation)


def clear_annotation(call: Call) -> Response:
    return _annotate(call, None)


endpoints = [
    Endpoint("/history/user-operation", "GET", list_entries, gate=Gate.AUDIT),
    Endpoint("/history/user-operation/count", "GET", count_entries, gate=Gate.AUDIT),
    Endpoint(
        "/history/user-operation/{id}/set-annotation",
        "PUT",
        set_annotation,
        body="json",
    ),
    Endpoint(
        "/history/user-operation/{id}/clear-annotation",
        "PUT",
        clear_annotation,
    ),
]
