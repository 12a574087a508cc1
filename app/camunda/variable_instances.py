"""Variables by scope: a user task's variables (`/task/{id}/variables`, what it sees from its
scope outwards) and local variables (`/task/{id}/localVariables`, its own activity instance's),
and Camunda's variable-instance query over every scope."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from starlette.responses import Response

from app.camunda.dto import Json
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, json_response, listing, no_content
from app.camunda.variables import stored_to_dto, to_typed, to_typed_map, wants_serialized
from app.params import as_uuid
from engine.errors import BadRequest, Conflict, NotFound
from engine.queries import variables as vq

# Variable instances have no id column: theirs is derived from their key, so it is stable.
_IDS = uuid5(NAMESPACE_URL, "interlock:variable-instance")


def variable_instance_id(instance_id: UUID, scope_key: str, name: str) -> str:
    return str(uuid5(_IDS, f"{instance_id}/{scope_key}/{name}"))


def _variable_instance(row: vq.VariableInstanceRow, serialized: bool = False) -> Json:
    return {
        "id": variable_instance_id(row.instance_id, row.scope_key, row.name),
        "name": row.name,
        **stored_to_dto(row.type, row.value, serialized=serialized),
        "processDefinitionId": row.definition_id,
        "processInstanceId": str(row.instance_id),
        "executionId": str(row.execution_id),
        "caseInstanceId": None,
        "caseExecutionId": None,
        "taskId": None,
        "batchId": None,
        "activityInstanceId": str(row.activity_instance_id),
        "tenantId": None,
        "errorMessage": None,
    }


def _variable_instances_shown(call: Call, rows: list[vq.VariableInstanceRow]) -> list[Json]:
    serialized = wants_serialized(call)
    return [_variable_instance(row, serialized) for row in rows]


def _variable_instance_query(call: Call, *, count: bool) -> list[vq.VariableInstanceRow] | int:
    return vq.variable_instances(
        call.engine,
        call.page(vq.VARIABLE_INSTANCE_SORT),
        instance_ids=call.uuids("processInstanceIdIn"),
        execution_ids=call.uuids("executionIdIn"),
        activity_instance_ids=call.uuids("activityInstanceIdIn"),
        scope_ids=call.uuids("variableScopeIdIn"),
        names=call.csv("variableNameIn"),
        name=call.text("variableName"),
        name_like=call.text("variableNameLike"),
        definition_ids=call.csv("processDefinitionIdIn"),
        count=count,
    )


# -- a user task's variables ----------------------------------------------------------------------


def task_values(call: Call, *, local: bool) -> dict[str, tuple[str, Any]]:
    task_id = call.path["id"]
    values = vq.task_variables(call.engine, as_uuid(task_id), local=local)
    if values is None:
        raise invalid_request(f"task {task_id} doesn't exist", 404)
    return values


def _all(call: Call, *, local: bool) -> Response:
    values = task_values(call, local=local)
    serialized = wants_serialized(call)
    return json_response(
        {name: stored_to_dto(*found, serialized=serialized) for name, found in values.items()}
    )


def task_variables(call: Call) -> Response:
    return _all(call, local=False)


def task_local_variables(call: Call) -> Response:
    return _all(call, local=True)


def _one(call: Call, *, local: bool) -> Response:
    name = call.path["name"]
    found = task_values(call, local=local).get(name)
    if found is None:
        kind = "task variable local" if local else "task variable"
        raise invalid_request(f"{kind} with name {name} does not exist", 404)
    return json_response(stored_to_dto(*found, serialized=wants_serialized(call)))


def task_variable(call: Call) -> Response:
    return _one(call, local=False)


def task_local_variable(call: Call) -> Response:
    return _one(call, local=True)


def set_task_variables(
    call: Call, modifications: dict[str, Any], deletions: list[str], *, local: bool
) -> Response:
    task_id = call.path["id"]
    try:
        call.engine.modify_task_variables(task_id, modifications, deletions, local=local)
    except NotFound as exc:
        message = f"Cannot modify variables for task {task_id}: task {task_id} doesn't exist"
        raise invalid_request(message, 404) from exc
    except (BadRequest, Conflict) as exc:
        raise invalid_request(f"Cannot modify variables for task {task_id}: {exc.message}") from exc
    return no_content()


def _modify_many(call: Call, *, local: bool) -> Response:
    modifications = to_typed_map(call.field("modifications"), "modifications")
    deletions = call.field("deletions") or []
    if not isinstance(deletions, list) or not all(isinstance(d, str) for d in deletions):
        raise invalid_request("'deletions' must be an array of variable names")
    return set_task_variables(call, dict(modifications), deletions, local=local)


def _put(call: Call, *, local: bool) -> Response:
    name = call.path["name"]
    return set_task_variables(call, {name: to_typed(name, call.body)}, [], local=local)


def _delete(call: Call, *, local: bool) -> Response:
    return set_task_variables(call, {}, [call.path["name"]], local=local)


def modify_task_local_variables(call: Call) -> Response:
    return _modify_many(call, local=True)


def put_task_local_variable(call: Call) -> Response:
    return _put(call, local=True)


def delete_task_local_variable(call: Call) -> Response:
    return _delete(call, local=True)


def modify_task_variables(call: Call) -> Response:
    return _modify_many(call, local=False)


def put_task_variable(call: Call) -> Response:
    return _put(call, local=False)


def delete_task_variable(call: Call) -> Response:
    return _delete(call, local=False)


endpoints = [
    *listing("/variable-instance", _variable_instance_query, shown=_variable_instances_shown),
    Endpoint("/task/{id}/variables", "GET", task_variables),
    Endpoint("/task/{id}/variables", "POST", modify_task_variables, body="json"),
    Endpoint("/task/{id}/variables/{name}", "GET", task_variable),
    Endpoint("/task/{id}/variables/{name}", "PUT", put_task_variable, body="json"),
    Endpoint("/task/{id}/variables/{name}", "DELETE", delete_task_variable),
    Endpoint("/task/{id}/localVariables", "GET", task_local_variables),
    Endpoint("/task/{id}/localVariables", "POST", modify_task_local_variables, body="json"),
    Endpoint("/task/{id}/localVariables/{name}", "GET", task_local_variable),
    Endpoint(
        "/task/{id}/localVariables/{name}",
        "PUT",
        put_task_local_variable,
        body="json",
    ),
    Endpoint("/task/{id}/localVariables/{name}", "DELETE", delete_task_local_variable),
]
