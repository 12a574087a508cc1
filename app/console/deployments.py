"""A deployment's page: when, by which name and source, its files (each downloadable as it was
uploaded) and the process and decision definitions it created. Definition pages link here."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import engine_of, read, render
from app.guard import raw_file_headers
from app.params import as_uuid
from engine.api import Engine
from engine.errors import NotFound
from engine.queries.camunda import deployments as deployment_reads


def _details(engine: Engine, deployment_id: str) -> dict[str, Any]:
    found = deployment_reads.deployment(engine, as_uuid(deployment_id))
    if found is None:
        raise NotFound(f"deployment {deployment_id} does not exist")
    return {
        "deployment": found,
        "resources": deployment_reads.resources(engine, found.id),
        "deployed": deployment_reads.deployed(engine, found.id),
    }


async def deployment_page(request: Request) -> Response:
    details = await read(request, _details, engine_of(request), request.path_params["id"])
    return render(request, "deployment.html", {"page": "definitions", **details})


def _file(engine: Engine, deployment_id: str, resource_id: str) -> deployment_reads.ResourceData:
    found = deployment_reads.resource_data(engine, as_uuid(deployment_id), as_uuid(resource_id))
    if found is None:
        raise NotFound(f"deployment {deployment_id} has no file {resource_id}")
    return found


async def download(request: Request) -> Response:
    """One file of the deployment, its bytes as uploaded, always as a download: never shown in
    the console's origin."""
    params = request.path_params
    found = await read(request, _file, engine_of(request), params["id"], params["rid"])
    name = found.name.replace("\\", "/").rsplit("/", 1)[-1]
    return Response(
        found.content,
        media_type="application/octet-stream",
        headers={**raw_file_headers(download=name), "Cache-Control": "no-store"},
    )


routes = [
    Route("/deployments/{id}", deployment_page, methods=["GET"]),
    Route("/deployments/{id}/files/{rid}", download, methods=["GET"]),
]
