"""Routes of the operations console: server-rendered pages, htmx fragments and POST actions."""

from __future__ import annotations

from starlette.routing import BaseRoute

from app.console import (
    actions,
    cleanup,
    definitions,
    forms,
    incidents,
    inspector,
    instances,
    jump,
    migration,
    overview,
    sessions,
    tasks,
    views,
    webhooks,
    workers,
)

routes: list[BaseRoute] = [
    *overview.routes,
    *definitions.routes,
    *migration.routes,
    *instances.routes,
    *inspector.routes,
    *incidents.routes,
    *tasks.routes,
    *views.routes,
    *workers.routes,
    *cleanup.routes,
    *sessions.routes,
    *webhooks.routes,
    *actions.routes,
    *forms.routes,
    *jump.routes,
]
