"""Message correlation and signals."""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import invalid_request, rest_error
from app.camunda.http import Call, Endpoint, json_response, no_content
from app.camunda.variables import dto_map, plain_values, to_typed_map
from app.params import as_uuid
from engine.errors import Conflict, InterlockError, NotFound
from engine.states import InstanceState


def correlate(call: Call) -> Response:
    name = call.body_text("messageName")
    if not name:
        raise invalid_request("No message name supplied")
    variables = to_typed_map(call.field("processVariables"), "processVariables")
    # The triggered scope is the token that receives the message (the token of an event
    # subprocess's run it starts, the new instance of a start event): that token's locals,
    # as processVariablesLocal are; processVariablesLocal win over them name by name.
    triggered = to_typed_map(
        call.field("processVariablesToTriggeredScope"), "processVariablesToTriggeredScope"
    )
    local_variables = {
        **triggered,
        **to_typed_map(call.field("processVariablesLocal"), "processVariablesLocal"),
    }
    keys = plain_values(call.field("correlationKeys"), "correlationKeys")
    local_keys = plain_values(call.field("localCorrelationKeys"), "localCorrelationKeys")
    instance_id = call.body_text("processInstanceId")
    business_key = call.body_text("businessKey")
    deliver_all = call.body_flag("all")
    # Read before the message is delivered: a refusal must leave nothing written.
    result_enabled = call.body_flag("resultEnabled")
    with_variables = call.body_flag("variablesInResultEnabled")
    tenant_id = call.body_text("tenantId")
    without_tenant = call.body_flag("withoutTenantId")
    if tenant_id is not None and without_tenant:
        raise invalid_request(
            "Parameter 'tenantId' cannot be used together with parameter 'withoutTenantId'."
        )
    if with_variables and not result_enabled:
        raise invalid_request(
            "Parameter 'variablesInResultEnabled' cannot be used without 'resultEnabled' set "
            "to true."
        )
    engine = call.engine
    try:
        result = engine.correlate_message(
            name,
            business_key=business_key,
            instance_id=as_uuid(instance_id) if instance_id else None,
            correlation_keys=keys,
            variables=variables,
            all=deliver_all,
            local_variables=local_variables,
            tenant_id=tenant_id,
            without_tenant=without_tenant,
            local_correlation_keys=local_keys,
        )
    except NotFound as exc:
        message = (
            f"Cannot correlate message '{name}': No process definition or execution matches "
            "the parameters"
        )
        raise rest_error(400, message, exc) from exc
    except Conflict as exc:
        matches = exc.detail.get("matches", "several")
        message = (
            f"Cannot correlate message '{name}': {matches} executions match the correlation keys"
        )
        raise rest_error(400, message, exc) from exc
    except InterlockError as exc:
        raise rest_error(500, f"Cannot correlate message '{name}': {exc.message}", exc) from exc
    if not result_enabled:
        return no_content()
    results: list[Json] = []
    for delivery in result.deliveries:
        info = reads.instance(engine, UUID(delivery["instance_id"]))
        entry: Json
        if delivery["kind"] == "start":
            entry = {
                "resultType": "ProcessDefinition",
                "execution": None,
                "processInstance": dto.instance_from_info(call.base, info),
            }
        else:
            entry = {
                "resultType": "Execution",
                "execution": {
                    "id": str(info.id),
                    "processInstanceId": str(info.id),
                    "ended": info.state in (InstanceState.COMPLETED, InstanceState.TERMINATED),
                    "tenantId": info.tenant_id,
                },
                "processInstance": None,
            }
        if with_variables:
            entry["variables"] = dto_map(reads.typed_variables(engine, info.id))
        results.append(entry)
    return json_response(results)


def signal(call: Call) -> Response:
    name = call.body_text("name")
    if not name:
        raise invalid_request("No signal name given")
    # Camunda: "Optionally specifies a single execution which is notified by the signal".
    execution_id = call.body_text("executionId")
    variables = to_typed_map(call.field("variables"))
    tenant_id = call.body_text("tenantId")
    without_tenant = call.body_flag("withoutTenantId")
    if tenant_id is not None and without_tenant:
        raise invalid_request(
            "Parameter 'tenantId' cannot be used together with the parameter 'withoutTenantId'."
        )
    if execution_id is not None:
        if tenant_id is not None or without_tenant:
            what = "tenantId" if tenant_id is not None else "withoutTenantId"
            raise invalid_request(
                f"Parameter '{what}' cannot be used together with the parameter 'executionId'."
            )
        try:
            call.engine.signal(name, variables, execution_id=as_uuid(execution_id))
        except NotFound as exc:
            message = f"Cannot deliver signal '{name}' to execution {execution_id}: {exc.message}"
            raise invalid_request(message, 404) from exc
        return no_content()
    try:
        call.engine.signal(name, variables, tenant_id=tenant_id, without_tenant=without_tenant)
    except InterlockError as exc:
        raise rest_error(500, f"Cannot deliver signal '{name}': {exc.message}", exc) from exc
    return no_content()


endpoints = [
    Endpoint("/message", "POST", correlate, body="json"),
    Endpoint("/signal", "POST", signal, body="json"),
]
