"""Process definitions: list and read definitions and their XML, start instances (deployments
are app/camunda/deployments.py's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from engine.queries.camunda.common import like_matches
from engine.queries.definitions import DefinitionRow

# -- process definitions --------------------------------------------------------------------------

DEFINITION_SORT = {
    "category": "key",
    "key": "key",
    "id": "id",
    "name": "name",
    "version": "version",
    "deploymentId": "deployment_id",
    "versionTag": "version_tag",
}


def _definitions(call: Call) -> list[DefinitionRow]:
    rows = definition_reads.list_all(call.engine, call.text("key"))
    keys_in = call.csv("keyIn")
    checks: list[tuple[str | None, Callable[[DefinitionRow, str], bool]]] = [
        (call.text("processDefinitionId"), lambda r, v: r.id == v),
        (call.text("name"), lambda r, v: r.name == v),
        (call.text("nameLike"), lambda r, v: _like(r.name, v)),
        (call.text("keyLike"), lambda r, v: _like(r.key, v)),
        (call.text("deploymentId"), lambda r, v: str(r.deployment_id) == v),
        (call.text("resourceName"), lambda r, v: r.resource_name == v),
        (call.text("versionTag"), lambda r, v: r.version_tag == v),
    ]
    for value, check in checks:
        if value is not None:
            rows = [r for r in rows if check(r, value)]
    ids_in = call.csv("processDefinitionIdIn")
    if ids_in is not None:
        rows = [r for r in rows if r.id in ids_in]
    if keys_in is not None:
        rows = [r for r in rows if r.key in keys_in]
    version = call.integer("version")
    if version is not None:
        rows = [r for r in rows if r.version == version]
    rows = _of_tenants(call, rows)
    if call.flag("latestVersion"):
        # Versions count per key and tenant: the latest of each.
        latest: dict[tuple[str, str | None], DefinitionRow] = {}
        for row in rows:
            mark = (row.key, row.tenant_id)
            if mark not in latest or row.version > latest[mark].version:
                latest[mark] = row
        rows = [r for r in rows if latest[(r.key, r.tenant_id)] is r]
    suspended = call.flag_unless("suspended", "active")
    if suspended is not None:
        rows = [r for r in rows if r.suspended == suspended]
    page = call.page(DEFINITION_SORT)
    for sort_by, descending in page.sort:
        attribute = DEFINITION_SORT[sort_by]
        rows.sort(key=lambda r: _sortable(getattr(r, attribute)), reverse=descending)
    end = None if page.max is None else page.first + page.max
    return rows[page.first : end]


def _of_tenants(call: Call, rows: list[DefinitionRow]) -> list[DefinitionRow]:
    """Camunda's tenant filters: `tenantIdIn` (with `includeProcessDefinitionsWithoutTenantId`
    also those of no tenant) or `withoutTenantId`."""
    tenant_ids = call.csv("tenantIdIn")
    if call.flag("withoutTenantId"):
        return [r for r in rows if r.tenant_id is None]
    if tenant_ids is None:
        return rows
    bare = call.flag("includeProcessDefinitionsWithoutTenantId")
    return [r for r in rows if r.tenant_id in tenant_ids or (bare and r.tenant_id is None)]


def _like(value: str | None, pattern: str) -> bool:
    return value is not None and like_matches(value, pattern)


def _sortable(value: Any) -> tuple[bool, Any]:
    return (value is None, 0 if value is None else value)


def list_definitions(call: Call) -> Response:
    return json_response([dto.process_definition(row) for row in _definitions(call)])


def count_definitions(call: Call) -> Response:
    return json_response({"count": len(_definitions(call))})


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
