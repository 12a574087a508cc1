"""Camunda's suspension endpoints: process definitions (by id, by the latest version of a key,
every version of a key) with or without their instances, and process instances (one, several
at once in one transaction, or several as a batch). Each answers 204 No Content, or Camunda's
InvalidRequestException naming the field it cannot use.

With `executionDate` a definition's change is scheduled: a job due then runs it
(engine/commands/scheduled_suspension.py). Suspending a definition needs SUSPEND or UPDATE on
it (an administrator's, by the built-in groups); its instances, SUSPEND_INSTANCE or
UPDATE_INSTANCE (an operator's). A request on a suspended instance that Camunda refuses with its
SuspendedEntityInteractionException as a 500 is answered 400 with that type (app/errors.py)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any
from uuid import UUID

from starlette.datastructures import QueryParams
from starlette.responses import Response

from app import reads
from app.camunda import batches
from app.camunda import instances as instance_rest
from app.camunda.definitions import _by_key
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, listed, no_content, run_found
from app.params import as_uuid, parse_time
from engine.commands.scheduled_suspension import ScheduleDefinitionSuspension
from engine.commands.suspension import (
    ActivateDefinition,
    SetInstancesSuspension,
    SuspendDefinition,
)
from engine.errors import NotFound
from engine.states import BatchType

_SELECTIONS = ("processInstanceIds", "processInstanceQuery", "historicProcessInstanceQuery")
_INSTANCE_FIELDS = (
    "Either processInstanceId, processDefinitionId or processDefinitionKey should be set to "
    "update the suspension state."
)
_ONE_OF_INSTANCE_FIELDS = (
    "Only one of processInstanceId, processDefinitionId or processDefinitionKey should be set to "
    "update the suspension state."
)


def _suspended(call: Call) -> bool:
    """The body's `suspended`: true suspends, false (or none, as Camunda reads a missing
    boolean) activates."""
    return call.body_flag("suspended")


def execution_date(call: Call) -> datetime | None:
    """The body's `executionDate` in Camunda's format (2025-01-31T12:00:00.000+0100): when a
    scheduled change is due; None (absent, null or empty): at once."""
    text = call.body_text("executionDate")
    if text is None or text == "":
        return None
    try:
        return parse_time(text)
    except ValueError:
        raise invalid_request(
            f"'executionDate': cannot read '{text}' as a date; Camunda's format is "
            "2025-01-31T12:00:00.000+0100"
        ) from None


def _change_definitions(call: Call, **target: Any) -> Response:
    suspended = _suspended(call)
    include = call.body_flag("includeProcessInstances")
    due = execution_date(call)
    if due is not None:
        call.engine.run(
            ScheduleDefinitionSuspension(suspended, due, include_instances=include, **target)
        )
        return no_content()
    command = SuspendDefinition if suspended else ActivateDefinition
    call.engine.run(command(include_instances=include, **target))
    return no_content()


def definition_by_id(call: Call) -> Response:
    definition_id = call.path["id"]
    try:
        reads.definition(call.engine, definition_id)
    except NotFound:
        raise invalid_request(f"No matching definition with id {definition_id}", 404) from None
    return _change_definitions(call, definition_id=definition_id)


def definition_by_key(call: Call) -> Response:
    """The latest version of the path's key (of the path's tenant, else of none), as Camunda's
    `/key/{key}/suspended` acts on the definition its key resolves to."""
    return _change_definitions(call, definition_id=_by_key(call).id)


def definitions_by_key(call: Call) -> Response:
    """Every version of `processDefinitionKey` (of `processDefinitionTenantId`, or of none with
    `processDefinitionWithoutTenantId`)."""
    if call.field("processDefinitionId") is not None:
        raise invalid_request(
            "Only processDefinitionKey can be set to update the suspension state."
        )
    key = call.body_text("processDefinitionKey")
    if key is None:
        raise invalid_request(
            "Either processDefinitionId or processDefinitionKey should be set to update the "
            "suspension state."
        )
    tenant_id = call.body_text("processDefinitionTenantId")
    without_tenant = call.body_flag("processDefinitionWithoutTenantId")
    # A key deployed for none of those tenants: the engine's NotFound, Camunda's 404.
    return _change_definitions(call, key=key, tenant_id=tenant_id, without_tenant=without_tenant)


def instance_by_id(call: Call) -> Response:
    instance_id = as_uuid(call.path["id"])
    command = SetInstancesSuspension((instance_id,), _suspended(call))
    return run_found(call, command, f"Process instance with id {instance_id} does not exist")


def _selects(call: Call) -> bool:
    """Whether the body names instances by processInstanceIds, processInstanceQuery or
    historicProcessInstanceQuery."""
    return any(call.field(n) is not None for n in _SELECTIONS)


def _selected_ids(call: Call) -> list[UUID] | None:
    """The instances processInstanceIds, processInstanceQuery and historicProcessInstanceQuery
    select together; None when the body names none of them."""
    if not _selects(call):
        return None
    ids = [as_uuid(i) for i in batches._instance_ids(call)]
    historic = batches._queried(call, "historicProcessInstanceQuery")
    if historic is not None:
        ids += [row.id for row in listed(instance_rest._historic_query(historic, count=False))]
    return ids


def _of_definition(call: Call) -> list[UUID] | None:
    """The running instances of processDefinitionId, or of processDefinitionKey (of
    processDefinitionTenantId, or of none with processDefinitionWithoutTenantId); None when the
    body names neither."""
    definition_id = call.body_text("processDefinitionId")
    key = call.body_text("processDefinitionKey")
    if definition_id is None and key is None:
        return None
    params: list[tuple[str, str]] = []
    if definition_id is not None:
        params.append(("processDefinitionId", definition_id))
    if key is not None:
        params.append(("processDefinitionKey", key))
        tenant_id = call.body_text("processDefinitionTenantId")
        if tenant_id is not None:
            params.append(("tenantIdIn", tenant_id))
        elif call.body_flag("processDefinitionWithoutTenantId"):
            params.append(("withoutTenantId", "true"))
    queried = dataclasses.replace(call, query=QueryParams(params), body=None)
    return [row.id for row in listed(instance_rest._instance_query(queried, count=False))]


def instances(call: Call) -> Response:
    """Camunda's synchronous PUT /process-instance/suspended: the instances named or queried,
    or those of a definition, in one transaction."""
    suspended = _suspended(call)
    if call.field("processInstanceId") is not None:
        raise invalid_request(
            "Either processDefinitionId or processDefinitionKey can be set to update the "
            "suspension state."
        )
    given = [
        call.field("processDefinitionId") is not None,
        call.field("processDefinitionKey") is not None,
        _selects(call),
    ]
    if sum(given) > 1:
        raise invalid_request(_ONE_OF_INSTANCE_FIELDS)
    ids = _selected_ids(call)
    if ids is None:
        ids = _of_definition(call)
    if ids is None:
        raise invalid_request(_INSTANCE_FIELDS)
    call.engine.run(SetInstancesSuspension(tuple(ids), suspended, missing_ok=True))
    return no_content()


def instances_async(call: Call) -> Response:
    """Camunda's POST /process-instance/suspended-async: a batch suspending (or activating) the
    instances named or queried, one item each; its BatchDto."""
    suspended = _suspended(call)
    ids = _selected_ids(call)
    if ids is None or not ids:
        raise invalid_request(
            "Either processInstanceIds, processInstanceQuery or historicProcessInstanceQuery "
            "should be set to update the suspension state."
        )
    kind = BatchType.SUSPEND_INSTANCES if suspended else BatchType.RESUME_INSTANCES
    items = [str(i) for i in dict.fromkeys(ids)]
    return batches._create(call, kind, items, {}, "processInstanceIds is empty")


endpoints = [
    Endpoint("/process-definition/suspended", "PUT", definitions_by_key, body="json"),
    Endpoint(
        "/process-definition/key/{key}/suspended",
        "PUT",
        definition_by_key,
        body="json",
    ),
    Endpoint(
        "/process-definition/key/{key}/tenant-id/{tenant_id}/suspended",
        "PUT",
        definition_by_key,
        body="json",
    ),
    Endpoint("/process-definition/{id}/suspended", "PUT", definition_by_id, body="json"),
    Endpoint("/process-instance/suspended", "PUT", instances, body="json"),
    Endpoint("/process-instance/suspended-async", "POST", instances_async, body="json"),
    Endpoint("/process-instance/{id}/suspended", "PUT", instance_by_id, body="json"),
]
