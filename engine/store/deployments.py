"""The SQL of deployments as a whole: their files (`deployment_resource`), the latest files of
deployments of one name (Camunda's duplicate filtering), and what deleting a deployment
removes. Definitions are engine/store/definitions.py's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from engine.sql.filters import Where
from engine.states import InstanceState, JobKind
from engine.store import work_log
from engine.store.columns import fetch_all, fetch_one
from engine.store.definitions import DECISIONS, PROCESSES

# Camunda reads a deployment without a source as a process application's when filtering.
PROCESS_APPLICATION_SOURCE = "process application"
RUNNING_STATES = [state.value for state in InstanceState if not state.is_final]


@dataclass(frozen=True)
class DeploymentInfo:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime
    tenant_id: str | None


@dataclass(frozen=True)
class StoredResource:
    id: UUID
    name: str
    content: bytes


def lock(conn: psycopg.Connection[Any], deployment_id: UUID) -> DeploymentInfo | None:
    """The deployment, its row locked until the transaction ends (None: there is none)."""
    return fetch_one(
        conn,
        DeploymentInfo,
        "SELECT id, name, source, created_at, tenant_id FROM deployment WHERE id = %s FOR UPDATE",
        (deployment_id,),
    )


def lock_definitions(conn: psycopg.Connection[Any], deployment_id: UUID) -> None:
    """Lock the deployment's definitions for deletion: a start or an evaluation of one that is
    still being written (its row refers to the definition) commits first, and is then seen;
    one that comes later waits, and finds the definition gone."""
    for table in (PROCESSES, DECISIONS):
        conn.execute(
            f"SELECT id FROM {table} WHERE deployment_id = %s ORDER BY id FOR UPDATE",
            (deployment_id,),
        )


def insert_resources(
    conn: psycopg.Connection[Any],
    deployment_id: UUID,
    resources: Sequence[tuple[UUID, str, bytes]],
) -> None:
    """The deployment's files: (id, name, content) each."""
    with conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO deployment_resource (id, deployment_id, name, content) "
            "VALUES (%s, %s, %s, %s)",
            [(rid, deployment_id, name, content) for rid, name, content in resources],
        )


def resources(conn: psycopg.Connection[Any], deployment_id: UUID) -> list[StoredResource]:
    """The deployment's files, by name."""
    return fetch_all(
        conn,
        StoredResource,
        "SELECT id, name, content FROM deployment_resource WHERE deployment_id = %s ORDER BY name",
        (deployment_id,),
    )


def lock_name(conn: psycopg.Connection[Any], name: str | None, tenant_id: str | None) -> None:
    """Serialise deployments of one name (of one tenant) until the transaction ends, so two
    deployments of unchanged files cannot both see the other as missing."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('deployment-name:' || %s, 0))",
        (f"{len(tenant_id or '')}:{tenant_id or ''}:{name or ''}",),
    )


def latest_by_name(
    conn: psycopg.Connection[Any],
    deployment_name: str | None,
    names: Sequence[str],
    source: str,
    tenant_id: str | None,
) -> dict[str, StoredResource]:
    """Camunda's latest resources by deployment name: for each of `names`, the file of that
    name in the newest deployment named `deployment_name` of source `source` (for Camunda's
    "process application", also of none) and, when `tenant_id` is given, of that tenant. A
    deployment without a name matches none."""
    if deployment_name is None:
        return {}
    where = Where()
    where.equals("d.name", deployment_name)
    where.any_of("r.name", list(names))
    if source == PROCESS_APPLICATION_SOURCE:
        where.add("(d.source IS NULL OR d.source = {})", source)
    else:
        where.equals("d.source", source)
    where.equals("d.tenant_id", tenant_id)
    statement = (
        sql.SQL(
            "SELECT DISTINCT ON (r.name) r.id, r.name, r.content "
            "FROM deployment_resource r JOIN deployment d ON d.id = r.deployment_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY r.name, d.created_at DESC, d.id DESC")
    )
    rows = fetch_all(conn, StoredResource, statement, where.params())
    return {row.name: row for row in rows}


def latest_named(
    conn: psycopg.Connection[Any], deployment_name: str | None, tenant_id: str | None
) -> UUID | None:
    """The newest deployment named `deployment_name` (of tenant `tenant_id` when given)."""
    where = Where()
    where.equals("name", deployment_name)
    where.equals("tenant_id", tenant_id)
    statement = (
        sql.SQL("SELECT id FROM deployment")
        + where.sql()
        + sql.SQL(" ORDER BY created_at DESC, id DESC LIMIT 1")
    )
    row = conn.execute(statement, where.params()).fetchone()
    return None if row is None else UUID(str(row[0]))


@dataclass(frozen=True)
class Dependants:
    """What stands in the way of deleting a deployment's definitions: their instances still
    running, those ended (whose history is their rows), and the decision evaluations of its
    decisions."""

    running: dict[str, int]
    ended: int
    evaluations: int


def _of(deployment_id: UUID | None, definition_ids: Sequence[str]) -> tuple[str, Any]:
    """The predicate on the definitions `d` in question: a deployment's, or the ones named."""
    if deployment_id is not None:
        return "d.deployment_id = %s", deployment_id
    return "d.id = ANY(%s)", list(definition_ids)


def dependants(
    conn: psycopg.Connection[Any],
    deployment_id: UUID | None,
    definition_ids: Sequence[str] = (),
) -> Dependants:
    """What stands in the way of deleting the deployment's definitions (with `deployment_id`
    None: the process definitions `definition_ids`)."""
    running: dict[str, int] = {}
    ended = 0
    predicate, value = _of(deployment_id, definition_ids)
    rows = conn.execute(
        "SELECT i.definition_id, i.state = ANY(%s), count(*) FROM process_instance i "
        f"JOIN process_definition d ON d.id = i.definition_id WHERE {predicate} "
        "GROUP BY 1, 2 ORDER BY 1",
        (RUNNING_STATES, value),
    ).fetchall()
    for definition_id, is_running, count in rows:
        if is_running:
            running[str(definition_id)] = int(count)
        else:
            ended += int(count)
    if deployment_id is None:
        return Dependants(running, ended, 0)
    found = conn.execute(
        "SELECT count(*) FROM decision_evaluation e JOIN decision_definition d "
        "ON d.id = e.definition_id WHERE d.deployment_id = %s",
        (deployment_id,),
    ).fetchone()
    return Dependants(running, ended, int(found[0]) if found else 0)


def lock_families(
    conn: psycopg.Connection[Any],
    deployment_id: UUID | None,
    definition_ids: Sequence[str] = (),
) -> tuple[list[UUID], list[tuple[UUID, UUID]]]:
    """Lock the families of the instances of the deployment's definitions (with `deployment_id`
    None: of the process definitions `definition_ids`), roots first: every instance of the
    families whose root is such an instance, and the (instance, root) pairs of such instances
    called by a family rooted elsewhere."""
    predicate, value = _of(deployment_id, definition_ids)
    roots = [
        UUID(str(row[0]))
        for row in conn.execute(
            "SELECT i.id FROM process_instance i JOIN process_definition d "
            f"ON d.id = i.definition_id WHERE {predicate} AND i.super_instance_id IS NULL "
            "ORDER BY i.id FOR UPDATE OF i",
            (value,),
        ).fetchall()
    ]
    outside = [
        (UUID(str(row[0])), UUID(str(row[1])))
        for row in conn.execute(
            "SELECT i.id, i.root_instance_id FROM process_instance i JOIN process_definition d "
            f"ON d.id = i.definition_id WHERE {predicate} "
            "AND i.super_instance_id IS NOT NULL AND NOT (i.root_instance_id = ANY(%s)) "
            "ORDER BY i.id",
            (value, roots),
        ).fetchall()
    ]
    members = [
        UUID(str(row[0]))
        for row in conn.execute(
            "SELECT id FROM process_instance WHERE root_instance_id = ANY(%s) ORDER BY id",
            (roots,),
        ).fetchall()
    ]
    return members, outside


@dataclass(frozen=True)
class Removed:
    """The definitions a deleted deployment took with it."""

    processes: list[tuple[str, str, str | None]]  # (id, key, tenant)
    decisions: list[str]


def delete_processes(conn: psycopg.Connection[Any], definition_ids: Sequence[str]) -> None:
    """Delete the process definitions with their start jobs, start subscriptions and job
    definitions; their instances must be gone."""
    ids = list(definition_ids)
    # Their start timers, and the suspensions scheduled for them.
    work_log.delete_jobs(
        conn,
        "DELETE FROM job WHERE definition_id = ANY(%s) AND kind = ANY(%s)",
        (ids, [JobKind.TIMER_START, JobKind.SUSPENSION]),
    )
    conn.execute("DELETE FROM event_subscription WHERE definition_id = ANY(%s)", (ids,))
    conn.execute("DELETE FROM job_definition WHERE definition_id = ANY(%s)", (ids,))
    conn.execute(f"DELETE FROM {PROCESSES} WHERE id = ANY(%s)", (ids,))


def delete(conn: psycopg.Connection[Any], deployment_id: UUID) -> Removed:
    """Delete the deployment with its files, its definitions, their start jobs, scheduled
    suspensions and start subscriptions, and the evaluations of its decisions; its instances
    must be gone."""
    processes = [
        (str(row[0]), str(row[1]), row[2])
        for row in conn.execute(
            f"SELECT id, key, tenant_id FROM {PROCESSES} WHERE deployment_id = %s",
            (deployment_id,),
        ).fetchall()
    ]
    delete_processes(conn, [row[0] for row in processes])
    conn.execute(
        f"DELETE FROM decision_evaluation WHERE definition_id IN "
        f"(SELECT id FROM {DECISIONS} WHERE deployment_id = %s)",
        (deployment_id,),
    )
    decisions = [
        str(row[0])
        for row in conn.execute(
            f"DELETE FROM {DECISIONS} WHERE deployment_id = %s RETURNING id", (deployment_id,)
        ).fetchall()
    ]
    conn.execute("DELETE FROM deployment_resource WHERE deployment_id = %s", (deployment_id,))
    conn.execute("DELETE FROM deployment WHERE id = %s", (deployment_id,))
    return Removed(processes, decisions)
