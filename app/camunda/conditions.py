"""Conditional start events: POST /condition evaluates them over the given variables and starts
an instance of each definition whose condition holds."""

from __future__ import annotations

from starlette.responses import Response

from app.camunda import dto
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response
from app.camunda.variables import to_typed_map
from engine.commands.conditions import ConditionResult
from engine.errors import NotFound

NO_SUBSCRIPTIONS = "No subscriptions were found during evaluation of the conditional start events."


def evaluate(call: Call) -> Response:
    variables = to_typed_map(call.field("variables"))
    business_key = call.body_text("businessKey")
    definition_id = call.body_text("processDefinitionId")
    tenant_id = call.body_text("tenantId")
    without_tenant = call.body_flag("withoutTenantId")
    if tenant_id is not None and without_tenant:
        raise invalid_request(
            "Parameter 'tenantId' cannot be used together with the parameter 'withoutTenantId'."
        )
    if tenant_id is not None:  # no definition belongs to a tenant here
        raise invalid_request(NO_SUBSCRIPTIONS)
    try:
        result: ConditionResult = call.engine.evaluate_conditions(
            variables, business_key=business_key, definition_id=definition_id
        )
    except NotFound as exc:
        raise invalid_request(NO_SUBSCRIPTIONS) from exc
    return json_response(
        [
            dto.process_instance(
                call.base,
                started.instance_id,
                started.definition_id,
                started.definition_key,
                started.business_key,
                started.state,
            )
            for started in result.started
        ]
    )


endpoints = [Endpoint("/condition", "POST", evaluate, body="json")]
