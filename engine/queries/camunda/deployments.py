"""Camunda's deployments: one by id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_one, query
from engine.sql import covers
from engine.sql.filters import Where


@dataclass(frozen=True)
class DeploymentRow:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime
    tenant_id: str | None = None


@query
def deployment(conn: Connection, deployment_id: UUID) -> DeploymentRow | None:
    """The deployment (None: there is none the request's principal may read)."""
    where = Where()
    where.equals("id", deployment_id)
    where.authorized(covers.deployment("id", tenant="tenant_id"))
    statement = (
        sql.SQL("SELECT id, name, source, created_at, tenant_id FROM deployment") + where.sql()
    )
    return fetch_one(conn, DeploymentRow, statement, where.params())
