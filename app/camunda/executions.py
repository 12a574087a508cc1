"""Executions as Camunda's REST API serves them (engine/store/executions.py says what they are
here): the query (GET, and POST with its filters in the body), one execution, signalling it,
its local variables, its message subscriptions and triggering one, and a custom incident on
it."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.responses import Response

from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import CamundaError, invalid_request, rest_error
from app.camunda.event_subscriptions import event_subscription
from app.camunda.http import (
    Call,
    Endpoint,
    found,
    json_response,
    listed,
    listing,
    no_content,
    unfiltered,
)
from app.camunda.query_body import posted_page, posted_query, query_variables
from app.camunda.variables import stored_to_dto, to_typed, to_typed_map
from app.params import as_uuid
from engine.commands.executions import (
    CreateIncident,
    SetExecutionVariables,
    SignalExecution,
    TriggerExecutionMessage,
)
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.variables import TypedValue
from engine.queries import variables as variable_reads
from engine.queries.camunda import event_subscriptions as subscription_reads
from engine.queries.camunda import executions as execution_reads
from engine.queries.camunda.common import CamundaPage
from engine.queries.work import incident as incident_read
from engine.states import SubscriptionKind

# The body fields of POST /execution that hold variable filters.
_POSTED_VARIABLES = ("variables", "processVariables")


def execution(row: execution_reads.ExecutionRow) -> Json:
    """Camunda's ExecutionDto: a running execution is never ended."""
    return {
        "id": str(row.id),
        "processInstanceId": str(row.instance_id),
        "ended": False,
        "tenantId": row.tenant_id,
    }


def _query(
    call: Call, *, execution_id: UUID | None = None, count: bool = False
) -> list[execution_reads.ExecutionRow] | int:
    page = posted_page(call, execution_reads.EXECUTION_SORT)
    return execution_reads.executions(
        call.engine,
        page,
        execution_id=execution_id,
        business_key=call.text("businessKey"),
        definition_id=call.text("processDefinitionId"),
        definition_key=call.text("processDefinitionKey"),
        instance_id=call.uuid("processInstanceId"),
        node_id=call.text("activityId"),
        signal_name=call.text("signalEventSubscriptionName"),
        message_name=call.text("messageEventSubscriptionName"),
        suspended=call.flag_unless("suspended", "active"),
        incident_id=call.uuid("incidentId"),
        incident_type=call.text("incidentType"),
        incident_message=call.text("incidentMessage"),
        incident_message_like=call.text("incidentMessageLike"),
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        variables=query_variables(call, "variables"),
        process_variables=query_variables(call, "processVariables"),
        count=count,
    )


def _posted(call: Call) -> Call:
    return posted_query(call, _POSTED_VARIABLES, execution_reads.EXECUTION_SORT)


def post_executions(call: Call) -> Response:
    return json_response([execution(row) for row in listed(_query(_posted(call)))])


def post_execution_count(call: Call) -> Response:
    return json_response({"count": _query(_posted(call), count=True)})


def _one(call: Call) -> execution_reads.ExecutionRow:
    execution_id = call.path["id"]
    rows = listed(_query(unfiltered(call), execution_id=as_uuid(execution_id)))
    return found(rows[0] if rows else None, f"Execution with id {execution_id} does not exist")


def get_execution(call: Call) -> Response:
    return json_response(execution(_one(call)))


# -- signal, message trigger ---------------------------------------------------------------------


def _trigger_variables(call: Call) -> dict[str, TypedValue]:
    return dict(to_typed_map(call.field("variables")))


def signal(call: Call) -> Response:
    """Camunda's signalExecution: an execution it cannot signal (one that does not wait where a
    signal continues it, one of a suspended instance) is its RestException 500, in the engine's
    words; one that does not exist, a 404."""
    execution_id = call.path["id"]
    variables = _trigger_variables(call)
    try:
        call.engine.run(SignalExecution(as_uuid(execution_id), variables))
    except NotFound as exc:
        raise invalid_request(
            f"Cannot signal execution {execution_id}: execution {execution_id} doesn't exist", 404
        ) from exc
    except Conflict as exc:
        raise rest_error(
            500, f"Cannot signal execution {execution_id}: {exc.message}", exc
        ) from exc
    return no_content()


def _subscription(call: Call) -> subscription_reads.EventSubscriptionRow | None:
    rows = subscription_reads.event_subscriptions(
        call.engine,
        CamundaPage(),
        execution_id=as_uuid(call.path["id"]),
        event_name=call.path["name"],
        event_type=SubscriptionKind.MESSAGE.value,
    )
    assert isinstance(rows, list)
    return rows[0] if rows else None


def _no_subscription(call: Call) -> CamundaError:
    return invalid_request(
        f"Message event subscription for execution {call.path['id']} named "
        f"{call.path['name']} does not exist",
        404,
    )


def get_message_subscription(call: Call) -> Response:
    row = _subscription(call)
    if row is None:
        raise _no_subscription(call)
    return json_response(event_subscription(row))


def trigger_message(call: Call) -> Response:
    execution_id, name = call.path["id"], call.path["name"]
    variables = _trigger_variables(call)
    try:
        call.engine.run(TriggerExecutionMessage(as_uuid(execution_id), name, variables))
    except NotFound as exc:
        raise _no_subscription(call) from exc
    except Conflict as exc:
        message = f"Cannot trigger message {name} for execution {execution_id}: {exc.message}"
        raise rest_error(500, message, exc) from exc
    return no_content()


# -- local variables ------------------------------------------------------------------------------


def _local_rows(call: Call) -> list[variable_reads.VariableInstanceRow]:
    _one(call)  # a 404 for an execution that does not exist (or that the caller may not read)
    rows = variable_reads.variable_instances(
        call.engine, CamundaPage(), execution_ids=[as_uuid(call.path["id"])]
    )
    assert isinstance(rows, list)
    return rows


def local_variables(call: Call) -> Response:
    return json_response(
        {row.name: stored_to_dto(row.type, row.value) for row in _local_rows(call)}
    )


def local_variable(call: Call) -> Response:
    name = call.path["name"]
    for row in _local_rows(call):
        if row.name == name:
            return json_response(stored_to_dto(row.type, row.value))
    raise invalid_request(f"execution variable with name {name} does not exist", 404)


def _modify(call: Call, modifications: dict[str, TypedValue], deletions: list[str]) -> Response:
    execution_id = call.path["id"]
    try:
        call.engine.run(
            SetExecutionVariables(as_uuid(execution_id), modifications, tuple(deletions))
        )
    except NotFound as exc:
        raise invalid_request(f"execution {execution_id} doesn't exist", 404) from exc
    except (BadRequest, Conflict) as exc:
        message = f"Cannot modify variables for execution {execution_id}: {exc.message}"
        raise invalid_request(message) from exc
    return no_content()


def modify_local_variables(call: Call) -> Response:
    modifications = to_typed_map(call.field("modifications"), "modifications")
    deletions: Any = call.field("deletions") or []
    if not isinstance(deletions, list) or not all(isinstance(d, str) for d in deletions):
        raise invalid_request("'deletions' must be an array of variable names")
    return _modify(call, dict(modifications), deletions)


def put_local_variable(call: Call) -> Response:
    name = call.path["name"]
    return _modify(call, {name: to_typed(name, call.body)}, [])


def delete_local_variable(call: Call) -> Response:
    return _modify(call, {}, [call.path["name"]])


# -- incidents ------------------------------------------------------------------------------------


def create_incident(call: Call) -> Response:
    """Camunda's createIncident: a custom incident on the execution's activity, answered as the
    IncidentDto; a missing type or execution is its 400 (BadUserRequestException turned into
    InvalidRequestException)."""
    execution_id = call.path["id"]
    incident_type = call.body_text("incidentType")
    if incident_type is None:
        raise invalid_request("incidentType is null")
    command = CreateIncident(
        as_uuid(execution_id),
        incident_type,
        configuration=call.body_text("configuration"),
        message=call.body_text("message"),
    )
    try:
        created = call.engine.run(command)
    except NotFound as exc:
        raise invalid_request(
            f"Cannot find an execution with executionId '{execution_id}'"
        ) from exc
    except (BadRequest, Conflict) as exc:
        raise invalid_request(exc.message) from exc
    row = incident_read(call.engine, UUID(created.incident_id))
    assert row is not None
    return json_response(dto.incident(row))


endpoints = [
    *listing("/execution", _query, execution),
    Endpoint("/execution", "POST", post_executions, body="json"),
    Endpoint("/execution/count", "POST", post_execution_count, body="json"),
    Endpoint("/execution/{id}", "GET", get_execution),
    Endpoint("/execution/{id}/signal", "POST", signal, body="json"),
    Endpoint("/execution/{id}/create-incident", "POST", create_incident, body="json"),
    Endpoint("/execution/{id}/localVariables", "GET", local_variables),
    Endpoint("/execution/{id}/localVariables", "POST", modify_local_variables, body="json"),
    Endpoint("/execution/{id}/localVariables/{name}", "GET", local_variable),
    Endpoint("/execution/{id}/localVariables/{name}", "PUT", put_local_variable, body="json"),
    Endpoint("/execution/{id}/localVariables/{name}", "DELETE", delete_local_variable),
    Endpoint("/execution/{id}/messageSubscriptions/{name}", "GET", get_message_subscription),
    Endpoint(
        "/execution/{id}/messageSubscriptions/{name}/trigger",
        "POST",
        trigger_message,
        body="json",
    ),
]
