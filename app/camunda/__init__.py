"""The Camunda-7-compatible REST subset, mounted at /engine-rest: Camunda's paths, bodies, status
codes and response fields over Interlock's engine. See docs/camunda-compat.md.

Each module lists its endpoints; ENDPOINTS is every one, in the order routes are matched (a
module's literal paths before its `{id}` ones), and the catch-all comes last."""

from __future__ import annotations

from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.types import Receive, Scope, Send

from app.camunda import (
    async_changes,
    batches,
    conditions,
    decision_instances,
    decisions,
    definitions,
    deployed_forms,
    deployments,
    event_subscriptions,
    executions,
    external_tasks,
    filters,
    forms,
    history,
    history_cleanup,
    history_details,
    history_logs,
    identity_authorizations,
    identity_groups,
    identity_users,
    incidents,
    instances,
    job_definitions,
    jobs,
    messages,
    metrics,
    migration,
    modification,
    probes,
    rendered_forms,
    statistics,
    suspension,
    task_notes,
    tasks,
    user_operations,
    variable_data,
    variable_instances,
)
from app.camunda.errors import invalid_request
from app.camunda.http import Endpoint, not_found
from app.camunda.probes import ENGINE_NAME

ALL_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

ENDPOINTS: list[Endpoint] = [
    *suspension.endpoints,
    *async_changes.endpoints,
    *batches.endpoints,
    *conditions.endpoints,
    *decision_instances.endpoints,
    *decisions.endpoints,
    *statistics.endpoints,
    *definitions.endpoints,
    *deployments.endpoints,
    *event_subscriptions.endpoints,
    *executions.endpoints,
    *external_tasks.endpoints,
    *filters.endpoints,
    *forms.endpoints,
    *history.endpoints,
    *history_cleanup.endpoints,
    *history_details.endpoints,
    *history_logs.endpoints,
    *identity_authorizations.endpoints,
    *identity_groups.endpoints,
    *identity_users.endpoints,
    *incidents.endpoints,
    *instances.endpoints,
    *jobs.endpoints,
    *job_definitions.endpoints,
    *messages.endpoints,
    *metrics.endpoints,
    *modification.endpoints,
    *migration.endpoints,
    *probes.endpoints,
    *tasks.endpoints,
    *deployed_forms.endpoints,
    *rendered_forms.endpoints,
    *task_notes.endpoints,
    *user_operations.endpoints,
    *variable_instances.endpoints,
    *variable_data.endpoints,
]

_served: list[BaseRoute] = [
    *(endpoint.route() for endpoint in ENDPOINTS),
    Route("/{path:path}", not_found, methods=ALL_METHODS),
]


class _NamedEngine:
    """Every path again under `/engine/{name}`, as Camunda serves its named engines: the one
    engine under its name `default`; any other name is refused as Camunda refuses an engine it
    does not have."""

    def __init__(self) -> None:
        self.router = Router(_served)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        params = dict(scope.get("path_params", {}))
        name = params.pop(ENGINE_PARAMETER, None)
        if name != ENGINE_NAME:
            response = invalid_request("No process engine available").response()
            await response(scope, receive, send)
            return
        await self.router({**scope, "path_params": params}, receive, send)


ENGINE_PARAMETER = "engine_name"

routes: list[BaseRoute] = [
    Mount(f"/engine/{{{ENGINE_PARAMETER}}}", app=_NamedEngine()),
    *_served,
]
