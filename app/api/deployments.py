"""Deployments: upload BPMN and DMN files (multipart); each executable process and each decision
becomes a new version of its key."""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from app.api.http import Op, Reply, engine_of, reply, run
from app.api.schemas import BOOLEAN, STRING, array, ref
from engine.commands.deployments import Deploy, Resource
from engine.errors import BadRequest, ModelError

MAX_FILES = 50
UPLOAD = {
    "type": "object",
    "properties": {
        "files": {**array({"type": "string", "contentMediaType": "application/octet-stream"})},
        "name": {**STRING, "description": "a name for the deployment"},
        "tenant_id": {
            **STRING,
            "description": "the tenant the deployment and its definitions belong to (default none)",
        },
        "duplicate_filtering": {
            **BOOLEAN,
            "description": "skip processes and decisions whose file is unchanged (default true)",
        },
    },
    "required": ["files"],
}


def _flag(value: str | None, field: str) -> bool:
    if value is None or value.lower() in ("true", "1", ""):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise BadRequest(f"field '{field}' must be true or false", field=field)


async def deploy(request: Request) -> Response:
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise BadRequest("upload the BPMN and DMN files as multipart/form-data", field="files")
    async with request.form(max_files=MAX_FILES) as form:
        resources: list[Resource] = []
        name: str | None = None
        tenant_id: str | None = None
        filtering = True
        limit = engine_of(request).executor.settings.max_bpmn_bytes
        for field, value in form.multi_items():
            if isinstance(value, UploadFile):
                content = await value.read(limit + 1)
                file = value.filename or f"resource-{len(resources) + 1}.bpmn"
                if len(content) > limit:
                    raise ModelError(
                        f"larger than {limit} bytes (max_bpmn_bytes in the engine's settings)",
                        file=file,
                    )
                resources.append(Resource(file, content))
            elif field == "name":
                name = value or None
            elif field == "tenant_id":
                tenant_id = value or None
            elif field == "duplicate_filtering":
                filtering = _flag(value, field)
            else:
                raise BadRequest(f"unknown form field '{field}'", field=field)
    if not resources:
        raise BadRequest("attach at least one BPMN or DMN file", field="files")
    result = await run(
        request, Deploy(tuple(resources), name, "api", filtering, tenant_id=tenant_id)
    )
    return reply(result.to_json(), 201 if result.deployment_id else 200)


operations = [
    Op(
        "POST",
        "/deployments",
        deploy,
        "Deploy BPMN and DMN files (`.bpmn`, `.dmn`); a file that does not parse or validate is "
        "a 400 naming file, line and element",
        body=UPLOAD,
        body_media_type="multipart/form-data",
        body_required=True,
        replies={
            201: Reply("Deployed", ref("Deployment")),
            200: Reply("Nothing new: every file was unchanged", ref("Deployment")),
        },
    ),
]
