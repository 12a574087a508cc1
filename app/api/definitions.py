"""Process definitions: list, look up, read the deployed XML, and start instances of them."""

from __future__ import annotations

from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app import reads
from app.api import views
from app.api.body import Body
from app.api.http import Op, Param, Reply, call, engine_of, path_text, reply, run
from app.api.schemas import STRING, VARIABLES_IN, ref, request
from app.auth import user_id_of
from app.guard import raw_file_headers
from app.params import Query
from engine.commands.instances import InstanceResult, StartInstance
from engine.queries import definitions as definition_reads

# `tenant_id`: the tenant whose definitions of the key are meant (a key deployed for several
# tenants needs one).
START_BODY = request({"variables": VARIABLES_IN, "business_key": STRING, "tenant_id": STRING})


async def list_definitions(request: Request) -> Response:
    query = Query(request.query_params)
    rows = await call(definition_reads.list_all, engine_of(request), query.text("key"))
    return reply(views.items([views.definition(row) for row in rows]))


async def get_definition(request: Request) -> Response:
    row = await call(reads.definition, engine_of(request), path_text(request, "id"))
    return reply(views.definition(row))


async def get_latest(request: Request) -> Response:
    row = await call(reads.latest_definition, engine_of(request), path_text(request, "key"))
    return reply(views.definition(row))


async def get_xml(request: Request) -> Response:
    definition_id = path_text(request, "id")
    _, xml = await call(reads.definition_xml, engine_of(request), definition_id)
    # A download, never a document in the API's origin: the file is what was uploaded.
    return Response(
        xml,
        media_type="application/xml",
        headers=raw_file_headers(download=f"{definition_id}.bpmn"),
    )


async def _start(
    request: Request,
    *,
    key: str | None = None,
    version: int | None = None,
    definition_id: str | None = None,
) -> Response:
    body = await Body.read(request, START_BODY)
    command = StartInstance(
        key=key,
        version=version,
        definition_id=definition_id,
        variables=body.variables(),
        business_key=body.text("business_key"),
        started_by=user_id_of(request),
        tenant_id=body.text("tenant_id") if definition_id is None else None,
    )
    result: InstanceResult = await run(request, command)
    info = await call(reads.instance, engine_of(request), UUID(result.instance_id))
    started = views.instance(info)
    del started["ended_at"]
    return reply({**started, "state": result.state}, 201)


async def start_by_id(request: Request) -> Response:
    return await _start(request, definition_id=path_text(request, "id"))


async def start_latest(request: Request) -> Response:
    return await _start(request, key=path_text(request, "key"))


async def start_version(request: Request) -> Response:
    version: int = request.path_params["version"]
    return await _start(request, key=path_text(request, "key"), version=version)


_STARTED = {201: Reply("The instance started", ref("StartedInstance"))}
_DEFINITION = {200: Reply("The definition", ref("Definition"))}

operations = [
    Op(
        "GET",
        "/definitions",
        list_definitions,
        "List process definitions, every version, ordered by key and version",
        query=(Param("key", STRING, "only this process key"),),
        replies={200: Reply("The definitions", ref("DefinitionList"))},
    ),
    Op(
        "GET",
        "/definitions/key/{key}",
        get_latest,
        "The latest version of a process",
        replies=_DEFINITION,
    ),
    Op(
        "POST",
        "/definitions/key/{key}/start",
        start_latest,
        "Start an instance of the latest version of a process",
        body=START_BODY,
        replies=_STARTED,
    ),
    Op(
        "POST",
        "/definitions/key/{key}/versions/{version:int}/start",
        start_version,
        "Start an instance of one version of a process",
        body=START_BODY,
        replies=_STARTED,
    ),
    Op(
        "GET",
        "/definitions/{id}",
        get_definition,
        "One process definition",
        replies=_DEFINITION,
    ),
    Op(
        "GET",
        "/definitions/{id}/xml",
        get_xml,
        "The BPMN XML of a definition as deployed",
        replies={200: Reply("BPMN 2.0 XML", STRING, "application/xml")},
    ),
    Op(
        "POST",
        "/definitions/{id}/start",
        start_by_id,
        "Start an instance of exactly this definition",
        body=START_BODY,
        replies=_STARTED,
    ),
]
