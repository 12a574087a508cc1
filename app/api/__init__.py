"""The native JSON API, mounted at /api/v1. Each module declares its operations; each operation
is a route and an entry in the OpenAPI document at /api/v1/openapi.json."""

from __future__ import annotations

from starlette.routing import BaseRoute

from app.api import (
    accounts,
    audit,
    batches,
    decisions,
    definitions,
    deployments,
    external_tasks,
    identity,
    incidents,
    instances,
    jobs,
    messages,
    openapi,
    tasks,
    webhooks,
)
from app.api.http import Op

OPERATIONS: list[Op] = [
    *deployments.operations,
    *definitions.operations,
    *decisions.operations,
    *instances.operations,
    *tasks.operations,
    *external_tasks.operations,
    *messages.operations,
    *incidents.operations,
    *jobs.operations,
    *batches.operations,
    *accounts.operations,
    *identity.operations,
    *webhooks.operations,
    *audit.operations,
]
OPERATIONS.append(openapi.spec_operation(OPERATIONS))

routes: list[BaseRoute] = [op.route() for op in OPERATIONS]
