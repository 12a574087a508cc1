"""Camunda's deployments: one by id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from engine.queries import Connection, fetch_one, query


@dataclass(frozen=True)
class DeploymentRow:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime
    tenant_id: str | None = None


@query
def deployment(conn: Connection, deployment_id: UUID) -> DeploymentRow | None:
    return fetch_one(
        conn,
        DeploymentRow,
        "SELECT id, name, source, created_at, tenant_id FROM deployment WHERE id = %s",
        (deployment_id,),
    )
