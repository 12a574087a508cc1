"""Camunda's historic details: `GET /history/detail` (+count, `{id}`), as HistoricDetailDto of
type `variableUpdate`. Interlock does not log every variable write of the engine: the details
are the operator's variable changes (the audit entries, with the value after each change) and
each variable's current value, as its latest update (see engine/queries/camunda/details.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.responses import Response

from app.camunda.dto import Json, format_date, text
from app.camunda.http import Call, Endpoint, found, json_response, listed, listing, unfiltered
from app.camunda.variable_instances import variable_instance_id
from app.camunda.variables import stored_to_dto
from app.params import as_uuid
from engine.queries.camunda import details as reads

VARIABLE_UPDATE = "variableUpdate"


def _detail(row: reads.DetailRow) -> Json:
    value = stored_to_dto(row.type, row.value)
    return {
        "type": VARIABLE_UPDATE,
        "id": str(row.id),
        "processDefinitionKey": row.definition_key,
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "activityInstanceId": str(row.activity_instance_id),
        "executionId": str(row.execution_id),
        "caseDefinitionKey": None,
        "caseDefinitionId": None,
        "caseInstanceId": None,
        "caseExecutionId": None,
        "taskId": text(row.task_id),
        "tenantId": row.tenant_id,
        "userOperationId": text(row.operation_id),
        "time": format_date(row.at),
        "removalTime": None,
        "rootProcessInstanceId": str(row.root_instance_id or row.instance_id),
        "variableName": row.name,
        "variableInstanceId": _variable_instance(row),
        "variableType": value["type"],
        "value": value["value"],
        "valueInfo": value["valueInfo"],
        "initial": row.initial,
        "revision": 0,
        "errorMessage": None,
    }


def _variable_instance(row: reads.DetailRow) -> str:
    return variable_instance_id(row.instance_id, row.scope_key, row.name)


def _filters(call: Call) -> dict[str, Any]:
    types = call.csv("variableTypeIn")
    call.flag("deserializeValues")  # accepted: values are always served deserialized
    call.flag("variableUpdates")  # every detail is a variable update
    return {
        "instance_id": call.uuid("processInstanceId"),
        "execution_id": call.uuid("executionId"),
        "task_id": call.uuid("taskId"),
        "activity_instance_id": call.uuid("activityInstanceId"),
        "variable_types": None if types is None else [t.lower() for t in types],
        "form_fields": call.flag("formFields"),
        "exclude_task_details": call.flag("excludeTaskDetails"),
        "operation_id": call.uuid("userOperationId"),
        "occurred_before": call.date("occurredBefore"),
        "occurred_after": call.date("occurredAfter"),
        "tenant_ids": call.csv("tenantIdIn"),
        "without_tenant": call.flag("withoutTenantId"),
    }


def _query(call: Call, *, count: bool, **key: Any) -> list[reads.DetailRow] | int:
    """The details the filters let through. `variableInstanceId` names an id derived from the
    variable's key, so it is matched on the rows the other filters let through."""
    page = call.page(reads.DETAIL_SORT)
    filters = _filters(call) | key
    wanted = call.text("variableInstanceId")
    if wanted is None:
        return reads.details(call.engine, page, count=count, **filters)
    every = listed(
        reads.details(call.engine, dataclasses.replace(page, first=0, max=None), **filters)
    )
    matched = [row for row in every if _variable_instance(row) == wanted]
    if count:
        return len(matched)
    end = None if page.max is None else page.first + page.max
    return matched[page.first : end]


def get_detail(call: Call) -> Response:
    detail_id = call.path["id"]
    rows = listed(_query(unfiltered(call), count=False, detail_id=as_uuid(detail_id)))
    row = found(rows[0] if rows else None, f"Historic detail with id {detail_id} does not exist")
    return json_response(_detail(row))


endpoints = [
    *listing("/history/detail", _query, _detail),
    Endpoint("/history/detail/{id}", "GET", get_detail),
]
