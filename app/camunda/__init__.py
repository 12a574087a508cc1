"""The Camunda-7-compatible REST subset, mounted at /engine-rest: Camunda's paths, bodies, status
codes and response fields over Interlock's engine. See docs/camunda-compat.md."""

from __future__ import annotations

from starlette.routing import BaseRoute, Route

from app.camunda import (  # noqa: F401 - each module declares its endpoints on import
    definitions,
    external_tasks,
    incidents,
    instances,
    jobs,
    messages,
    tasks,
)
from app.camunda.http import endpoint, not_found

ALL_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

routes: list[BaseRoute] = [
    *endpoint.routes,
    Route("/{path:path}", not_found, methods=ALL_METHODS),
]
