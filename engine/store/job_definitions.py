"""Job definitions: written when a process definition is deployed, changed by an operator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import psycopg

from engine.model import ProcessModel
from engine.model.job_definitions import job_definition_id, job_definitions
from engine.store.columns import fetch_one


@dataclass(frozen=True)
class JobDefinitionInfo:
    id: UUID
    definition_id: str
    definition_key: str
    node_id: str
    job_kind: str
    job_type: str
    configuration: str
    suspended: bool
    priority: int | None
    tenant_id: str | None


_COLUMNS = (
    "id, definition_id, definition_key, node_id, job_kind, job_type, configuration, suspended, "
    "priority, tenant_id"
)


def insert(conn: psycopg.Connection[Any], definition_id: str, model: ProcessModel) -> None:
    """The job definitions of a definition just written (its key and tenant are its row's)."""
    rows = [
        (
            job_definition_id(definition_id, spec.node_id, spec.job_kind),
            spec.node_id,
            spec.job_kind.value,
            spec.job_type,
            spec.configuration,
            definition_id,
        )
        for spec in job_definitions(model)
    ]
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO job_definition (id, definition_id, definition_key, node_id, job_kind, "
            "job_type, configuration, tenant_id) SELECT %s, d.id, d.key, %s, %s, %s, %s, "
            "d.tenant_id FROM process_definition d WHERE d.id = %s",
            rows,
        )


def get(conn: psycopg.Connection[Any], job_definition_id: UUID) -> JobDefinitionInfo | None:
    return fetch_one(
        conn,
        JobDefinitionInfo,
        f"SELECT {_COLUMNS} FROM job_definition WHERE id = %s FOR UPDATE",
        (job_definition_id,),
    )


def set_suspended(conn: psycopg.Connection[Any], job_definition_id: UUID, suspended: bool) -> None:
    conn.execute(
        "UPDATE job_definition SET suspended = %s WHERE id = %s", (suspended, job_definition_id)
    )


def set_priority(
    conn: psycopg.Connection[Any], job_definition_id: UUID, priority: int | None
) -> None:
    """The job definition's overriding priority (None: none, its jobs get the model's)."""
    conn.execute(
        "UPDATE job_definition SET priority = %s WHERE id = %s", (priority, job_definition_id)
    )


def of_definitions(conn: psycopg.Connection[Any], definition_ids: list[str]) -> list[UUID]:
    """The ids of the job definitions of the process definitions `definition_ids`, in order."""
    rows = conn.execute(
        "SELECT id FROM job_definition WHERE definition_id = ANY(%s) ORDER BY id",
        (definition_ids,),
    ).fetchall()
    return [row[0] for row in rows]


def jobs_of(conn: psycopg.Connection[Any], info: JobDefinitionInfo) -> list[UUID]:
    """The ids of the jobs the job definition made that exist now."""
    rows = conn.execute(
        "SELECT id FROM job WHERE definition_id = %s AND node_id = %s AND kind = %s ORDER BY id",
        (info.definition_id, info.node_id, info.job_kind),
    ).fetchall()
    return [row[0] for row in rows]


def set_jobs(
    conn: psycopg.Connection[Any],
    info: JobDefinitionInfo,
    *,
    suspended: bool | None = None,
    priority: int | None = None,
) -> None:
    """Suspend or activate, or give a priority to, every job the job definition made."""
    conn.execute(
        "UPDATE job SET suspended = coalesce(%s, suspended), priority = coalesce(%s, priority) "
        "WHERE definition_id = %s AND node_id = %s AND kind = %s",
        (suspended, priority, info.definition_id, info.node_id, info.job_kind),
    )
