"""Deployments: create one from multipart files, list and read them and their files (the bytes as
uploaded), delete one (with `cascade`, its instances too), and redeploy its files."""

from __future__ import annotations

from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.decisions import definition_dto
from app.camunda.dto import Json
from app.camunda.errors import invalid_request
from app.camunda.http import (
    Call,
    Endpoint,
    found,
    json_response,
    listed,
    listing,
    run_found,
)
from app.guard import raw_file_headers
from app.params import as_uuid
from engine.commands.deployments import (
    DeleteDeployment,
    Deploy,
    DeploymentResult,
    DuplicateFiltering,
    Redeploy,
    Resource,
)
from engine.errors import BadRequest, NotFound
from engine.queries import decision_history as dh
from engine.queries.camunda import deployments as deployment_reads
from engine.queries.camunda.common import CamundaPage

DEPLOYMENT_FIELDS = {
    "deployment-name",
    "deployment-source",
    "enable-duplicate-filtering",
    "deploy-changed-only",
    "deployment-activation-time",
    "tenant-id",
}

# Camunda's media types of a file's data by its extension; any other file is
# application/octet-stream.
MEDIA_TYPES = {
    "bpmn": "application/xml",
    "cmmn": "application/xml",
    "dmn": "application/xml",
    "json": "application/json",
    "xml": "application/xml",
    "gif": "image/gif",
    "jpeg": "image/jpeg",
    "jpe": "image/jpeg",
    "jpg": "image/jpeg",
    "png": "image/png",
    "svg": "image/svg+xml",
    "tiff": "image/tiff",
    "tif": "image/tiff",
    "groovy": "text/plain",
    "java": "text/plain",
    "js": "text/plain",
    "php": "text/plain",
    "py": "text/plain",
    "rb": "text/plain",
    "html": "text/html",
    "txt": "text/plain",
}


def _setting(settings: dict[str, str], name: str) -> bool:
    """A flag of the form (absent: false)."""
    value = settings.get(name, "false")
    if value.lower() not in ("true", "false"):
        raise invalid_request(f"'{name}' must be true or false, not '{value}'")
    return value.lower() == "true"


# -- create ---------------------------------------------------------------------------------------


async def create_deployment(call: Call) -> Response:
    assert call.form is not None
    settings: dict[str, str] = {}
    resources: list[Resource] = []
    for part, value in call.form.multi_items():
        if part in DEPLOYMENT_FIELDS and isinstance(value, str):
            settings[part] = value
        elif isinstance(value, UploadFile):
            resources.append(Resource(value.filename or part, await value.read()))
        else:
            resources.append(Resource(part, value.encode("utf-8")))
    if not resources:
        raise invalid_request("No deployment resources contained in the form upload.")
    # deploy-changed-only turns duplicate filtering on, as Camunda's builder does.
    filtering = DuplicateFiltering.NONE
    if _setting(settings, "enable-duplicate-filtering"):
        filtering = DuplicateFiltering.WHOLE
    if _setting(settings, "deploy-changed-only"):
        filtering = DuplicateFiltering.CHANGED
    command = Deploy(
        tuple(resources),
        settings.get("deployment-name"),
        settings.get("deployment-source"),
        filtering,
        tenant_id=settings.get("tenant-id") or None,
    )
    return await run_in_threadpool(_deploy, call, command)


def _deploy(call: Call, command: Deploy | Redeploy) -> Response:
    engine = call.engine
    try:
        result = engine.run(command)
    except NotFound as exc:
        message = f"Cannot redeploy deployment '{call.path.get('id')}': {exc.message}"
        raise invalid_request(message, 404) from exc
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    assert isinstance(result, DeploymentResult) and result.deployment_id is not None
    return json_response(with_definitions(call, result))


def with_definitions(call: Call, result: DeploymentResult) -> Json:
    """Camunda's DeploymentWithDefinitions: the deployment and the definitions it created (none:
    nothing new was deployed, and the deployment is the newest one of the name)."""
    engine = call.engine
    assert result.deployment_id is not None
    created = [d["id"] for d in result.definitions if d["created"]]
    created_rules = [d["id"] for d in result.decisions if d["created"]]
    deployed = [reads.definition(engine, definition_id) for definition_id in created]
    rules = (
        listed(
            dh.decision_definitions(
                engine, CamundaPage(), dh.DecisionDefinitionFilter(definition_ids=created_rules)
            )
        )
        if created_rules
        else []
    )
    deployment = deployment_reads.deployment(engine, UUID(result.deployment_id))
    assert deployment is not None
    decided = {row.id: definition_dto(row) for row in rules}
    return dto.deployment(call.base, deployment, deployed, decided or None)


# -- reads ----------------------------------------------------------------------------------------


def _query(call: Call, *, count: bool = False) -> list[deployment_reads.DeploymentRow] | int:
    source, without_source = call.text("source"), call.flag("withoutSource")
    if without_source and source is not None:
        raise invalid_request(
            'The query parameters "withoutSource" and "source" cannot be used in combination.'
        )
    return deployment_reads.deployments(
        call.engine,
        call.page(deployment_reads.DEPLOYMENT_SORT),
        deployment_id=call.uuid("id"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        source=source,
        without_source=without_source,
        before=call.date("before"),
        after=call.date("after"),
        tenant_ids=call.csv("tenantIdIn"),
        with_untenanted=bool(call.flag("includeDeploymentsWithoutTenantId")),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def _deployment(call: Call) -> deployment_reads.DeploymentRow:
    row = deployment_reads.deployment(call.engine, as_uuid(call.path["id"]))
    return found(row, f"Deployment with id '{call.path['id']}' does not exist")


def get_deployment(call: Call) -> Response:
    return json_response(dto.deployment_of(_deployment(call)))


def _resources(call: Call) -> list[deployment_reads.ResourceRow]:
    rows = deployment_reads.resources(call.engine, as_uuid(call.path["id"]))
    if not rows:
        raise invalid_request(
            f"Deployment resources for deployment id '{call.path['id']}' do not exist.", 404
        )
    return rows


def get_resources(call: Call) -> Response:
    return json_response([dto.deployment_resource(row) for row in _resources(call)])


def get_resource(call: Call) -> Response:
    resource_id = call.path["rid"]
    for row in _resources(call):
        if str(row.id) == resource_id:
            return json_response(dto.deployment_resource(row))
    raise invalid_request(
        f"Deployment resource with resource id '{resource_id}' for deployment id "
        f"'{call.path['id']}' does not exist.",
        404,
    )


def get_resource_data(call: Call) -> Response:
    deployment_id, resource_id = call.path["id"], call.path["rid"]
    data = deployment_reads.resource_data(call.engine, as_uuid(deployment_id), as_uuid(resource_id))
    if data is None:
        raise invalid_request(
            f"Deployment resource '{resource_id}' for deployment id '{deployment_id}' does not "
            "exist.",
            404,
        )
    name = data.name.replace("\\", "/")
    filename = name.rsplit("/", 1)[-1] or "data"
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    media_type = MEDIA_TYPES.get(extension, "application/octet-stream")
    # As uploaded, so never sniffed nor run here (an HTML or SVG file is inert in its sandbox).
    return Response(data.content, media_type=media_type, headers=raw_file_headers(filename))


# -- delete and redeploy --------------------------------------------------------------------------


def delete_deployment(call: Call) -> Response:
    deployment_id = call.path["id"]
    missing = f"Deployment with id '{deployment_id}' do not exist"
    found(deployment_reads.deployment(call.engine, as_uuid(deployment_id)), missing)
    command = DeleteDeployment(
        as_uuid(deployment_id),
        cascade=bool(call.flag("cascade")),
        skip_custom_listeners=bool(call.flag("skipCustomListeners")),
        skip_io_mappings=bool(call.flag("skipIoMappings")),
    )
    return run_found(call, command, missing, conflict_is_engine_error=True)


def redeploy(call: Call) -> Response:
    deployment_id = call.path["id"]
    _deployment(call)
    ids = _texts(call, "resourceIds")
    names = _texts(call, "resourceNames")
    command = Redeploy(as_uuid(deployment_id), tuple(ids), tuple(names), call.body_text("source"))
    return _deploy(call, command)


def _texts(call: Call, name: str) -> list[str]:
    value = call.field(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_request(f"'{name}' must be a list of strings")
    return list(value)


endpoints = [
    Endpoint("/deployment/create", "POST", create_deployment, body="form"),
    *listing("/deployment", _query, dto.deployment_of),
    Endpoint("/deployment/{id}", "GET", get_deployment),
    Endpoint("/deployment/{id}", "DELETE", delete_deployment),
    Endpoint("/deployment/{id}/redeploy", "POST", redeploy, body="json"),
    Endpoint("/deployment/{id}/resources", "GET", get_resources),
    Endpoint("/deployment/{id}/resources/{rid}", "GET", get_resource),
    Endpoint("/deployment/{id}/resources/{rid}/data", "GET", get_resource_data),
]
