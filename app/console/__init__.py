"""Routes of the operations console: server-rendered pages, htmx fragments and POST actions."""

from __future__ import annotations

from starlette.routing import BaseRoute

from app.console import (
    account,
    actions,
    admin,
    admin_authorizations,
    admin_tenants,
    audit,
    batches,
    cleanup,
    decisions,
    definitions,
    deployments,
    forms,
    incidents,
    inspector,
    instances,
    jump,
    migration,
    modification,
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
    *deployments.routes,
    *decisions.routes,
    *migration.routes,
    *instances.routes,
    *inspector.routes,
    *incidents.routes,
    *tasks.routes,
    *views.routes,
    *workers.routes,
    *cleanup.routes,
    *batches.routes,
    *sessions.routes,
    *admin.routes,
    *admin_tenants.routes,
    *admin_authorizations.routes,
    *account.routes,
    *webhooks.routes,
    *audit.routes,
    *actions.routes,
    *modification.routes,
    *forms.routes,
    *jump.routes,
]
