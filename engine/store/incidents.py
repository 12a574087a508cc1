"""Incident queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.sql import covers
from engine.sql.filters import Where
from engine.states import IncidentState
from engine.store.columns import fetch_where, where_state

_COLUMNS = (
    "i.id, i.type, i.instance_id, i.definition_id, i.token_id, i.node_id, i.job_id, "
    "i.external_task_id, i.message, i.details, i.state, i.created_at, i.resolved_at, i.tenant_id, "
    "i.annotation, i.configuration"
)


@dataclass(frozen=True)
class IncidentInfo:
    id: UUID
    type: str
    instance_id: UUID
    definition_id: str
    token_id: UUID | None
    node_id: str
    job_id: UUID | None
    external_task_id: UUID | None
    message: str
    details: str | None
    state: str
    created_at: datetime
    resolved_at: datetime | None
    tenant_id: str | None
    annotation: str | None
    configuration: str | None


def get(
    conn: psycopg.Connection[Any], incident_id: UUID, *, readable: bool = False
) -> IncidentInfo | None:
    """The incident; with `readable`, only if the request's principal may read its instance."""
    where = Where()
    where.equals("i.id", incident_id)
    if readable:
        where.authorized(
            covers.instance(covers.key_of("i.instance_id"), "i.instance_id", tenant="i.tenant_id")
        )
    select = f"SELECT {_COLUMNS} FROM incident i"
    found = fetch_where(conn, IncidentInfo, select, where, "i.id", 1)
    return found[0] if found else None


def query(
    conn: psycopg.Connection[Any],
    *,
    instance_id: UUID | None = None,
    definition_key: str | None = None,
    definition_id: str | None = None,
    incident_type: str | None = None,
    node_id: str | None = None,
    state: str | None = IncidentState.OPEN,
    limit: int = 1000,
    after: tuple[datetime, UUID] | None = None,
) -> list[IncidentInfo]:
    """Incidents matching the filters, oldest first; with `after` (created_at, id), only those
    that come after it (the next page)."""
    where = Where()
    where_state(where, "i.state", state, IncidentState.OPEN)
    where.equals("i.instance_id", instance_id)
    where.equals("p.definition_key", definition_key)
    where.equals("i.definition_id", definition_id)
    where.equals("i.type", incident_type)
    where.equals("i.node_id", node_id)
    where.keyset("(i.created_at, i.id)", after, descending=False)
    where.authorized(covers.instance("p.definition_key", "i.instance_id", tenant="i.tenant_id"))
    select = f"SELECT {_COLUMNS} FROM incident i JOIN process_instance p ON p.id = i.instance_id"
    return fetch_where(conn, IncidentInfo, select, where, "i.created_at, i.id", limit)
