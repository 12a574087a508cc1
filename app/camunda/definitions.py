"""Process definitions: list and read definitions and their XML, start instances (deployments
are app/camunda/deployments.py's)."""

from __future__ import annotations

from typing import Any, cast

from starlette.responses import Response

from app import reads
from app.auth import user_id_of
from app.camunda import dto
from app.camunda.errors import invalid_request, rest_error
from app.camunda.http import Call, Endpoint, json_response, run_found
from app.camunda.variables import dto_map, to_typed_map
from engine.commands.definition_deletion import DeleteProcessDefinitions
from engine.errors import BadRequest, InterlockError, NotFound
from engine.queries import definitions as definition_reads
from engine.queries.camunda.definitions import DEFINITION_SORT, process_definitions
from engine.queries.definitions import DefinitionRow

# -- process definitions --------------------------------------------------------------------------


def _definitions(call: Call, *, count: bool = False) -> list[DefinitionRow] | int:
    return process_definitions(
        call.engine,
        call.page(DEFINITION_SORT),
        definition_id=call.text("processDefinitionId"),
        definition_ids=call.csv("processDefinitionIdIn"),
        key=call.text("key"),
        keys=call.csv("keyIn"),
        key_like=call.text("keyLike"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        deployment_id=call.uuid("deploymentId"),
        resource_name=call.text("resourceName"),
        version=call.integer("version"),
        version_tag=call.text("versionTag"),
        latest_version=call.flag("latestVersion"),
        suspended=call.flag_unless("suspended", "active"),
        tenant_ids=call.csv("tenantIdIn"),
        with_untenanted=bool(call.flag("includeProcessDefinitionsWithoutTenantId")),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def list_definitions(call: Call) -> Response:
    rows = cast(list[DefinitionRow], _definitions(call))
    return json_response([dto.process_definition(row) for row in rows])


def count_definitions(call: Call) -> Response:
    return json_response({"count": _definitions(call, count=True)})


def _by_key(call: Call) -> DefinitionRow:
    """The latest definition of the path's key: of the path's tenant, else of no tenant (as
    Camunda's REST API resolves a key)."""
    key, tenant_id = call.path["key"], call.path.get("tenant_id")
    found = definition_reads.latest_for_tenant(call.engine, key, tenant_id)
    if found is None:
        tenant = f"tenant-id {tenant_id}" if tenant_id is not None else "no tenant-id"
        raise rest_error(404, f"No matching process definition with key: {key} and {tenant}")
    return found


def _by_id(call: Call) -> DefinitionRow:
    definition_id = call.path["id"]
    try:
        return reads.definition(call.engine, definition_id)
    except NotFound:
        raise rest_error(404, f"No matching definition with id {definition_id}") from None


def _xml(call: Call, row: DefinitionRow) -> Response:
    _, xml = reads.definition_xml(call.engine, row.id)
    return json_response({"id": row.id, "bpmn20Xml": xml})


def definition_by_key(call: Call) -> Response:
    return json_response(dto.process_definition(_by_key(call)))


def xml_by_key(call: Call) -> Response:
    return _xml(call, _by_key(call))


def definition_by_id(call: Call) -> Response:
    return json_response(dto.process_definition(_by_id(call)))


def xml_by_id(call: Call) -> Response:
    return _xml(call, _by_id(call))


def _start(call: Call, row: DefinitionRow) -> Response:
    if call.field("startInstructions"):
        raise invalid_request("startInstructions are not supported: start at the none start event")
    variables = to_typed_map(call.field("variables"))
    business_key = call.body_text("businessKey")
    # Every field is read before the instance starts: a refusal must leave nothing written.
    with_variables = call.body_flag("withVariablesInReturn")
    try:
        handle = call.engine.start_definition(
            row.id, variables, business_key=business_key, started_by=user_id_of(call.request)
        )
    except BadRequest as exc:
        raise invalid_request(
            f"Cannot instantiate process definition {row.id}: {exc.message}"
        ) from exc
    except InterlockError as exc:
        raise rest_error(
            500, f"Cannot instantiate process definition {row.id}: {exc.message}", exc
        ) from exc
    info = handle.info()
    body = dto.instance_from_info(call.base, info)
    if with_variables:
        body["variables"] = dto_map(handle.typed_variables())
    return json_response(body)


def start_by_key(call: Call) -> Response:
    return _start(call, _by_key(call))


def start_by_id(call: Call) -> Response:
    return _start(call, _by_id(call))


def _delete(call: Call, **which: Any) -> Response:
    """Camunda's DELETE of a process definition (by id) or of every version of a key (of the
    path's tenant, else of no tenant)."""
    command = DeleteProcessDefinitions(
        **which,
        cascade=bool(call.flag("cascade")),
        skip_custom_listeners=bool(call.flag("skipCustomListeners")),
        skip_io_mappings=bool(call.flag("skipIoMappings")),
    )
    return run_found(call, command, None, conflict_is_engine_error=True)


def delete_by_id(call: Call) -> Response:
    return _delete(call, definition_id=call.path["id"])


def delete_by_key(call: Call) -> Response:
    tenant_id = call.path.get("tenant_id")
    return _delete(
        call, key=call.path["key"], tenant_id=tenant_id, without_tenant=tenant_id is None
    )


endpoints = [
    Endpoint("/process-definition", "GET", list_definitions),
    Endpoint("/process-definition/count", "GET", count_definitions),
    Endpoint("/process-definition/key/{key}", "GET", definition_by_key),
    Endpoint("/process-definition/key/{key}/xml", "GET", xml_by_key),
    Endpoint("/process-definition/{id}", "GET", definition_by_id),
    Endpoint("/process-definition/{id}/xml", "GET", xml_by_id),
    Endpoint("/process-definition/key/{key}/start", "POST", start_by_key, body="json"),
    Endpoint("/process-definition/key/{key}/tenant-id/{tenant_id}", "GET", definition_by_key),
    Endpoint("/process-definition/key/{key}/tenant-id/{tenant_id}/xml", "GET", xml_by_key),
    Endpoint(
        "/process-definition/key/{key}/tenant-id/{tenant_id}/start",
        "POST",
        start_by_key,
        body="json",
    ),
    Endpoint("/process-definition/{id}/start", "POST", start_by_id, body="json"),
    Endpoint("/process-definition/{id}", "DELETE", delete_by_id),
    Endpoint("/process-definition/key/{key}/delete", "DELETE", delete_by_key),
    Endpoint("/process-definition/key/{key}/tenant-id/{tenant_id}/delete", "DELETE", delete_by_key),
]
