"""What clients ask before anything else: which engines the server has (Camunda Modeler's
deployment check lists them) and which Camunda 7 version the REST API follows."""

from __future__ import annotations

from starlette.responses import Response

from app.camunda.http import Call, Endpoint, json_response

# The one engine behind /engine-rest, under Camunda's default name.
ENGINE_NAME = "default"
# The Camunda 7 release whose REST API this subset follows (docs/camunda-compat.md).
CAMUNDA_VERSION = "7.24.0"


async def list_engines(call: Call) -> Response:
    return json_response([{"name": ENGINE_NAME}])


async def version(call: Call) -> Response:
    return json_response({"version": CAMUNDA_VERSION})


endpoints = [
    Endpoint("/engine", "GET", list_engines),
    Endpoint("/version", "GET", version),
]
