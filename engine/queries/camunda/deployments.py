"""Camunda's deployments: the list with its filters and sorting, one by id, and its files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, fetch_one, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of


@dataclass(frozen=True)
class DeploymentRow:
    id: UUID
    name: str | None
    source: str | None
    created_at: datetime
    tenant_id: str | None = None


@dataclass(frozen=True)
class ResourceRow:
    """One file of a deployment, without its bytes."""

    id: UUID
    name: str
    deployment_id: UUID


DEPLOYMENT_SORT: dict[str, LiteralString] = {
    "id": "d.id",
    "name": "d.name",
    "deploymentTime": "d.created_at",
    "tenantId": "d.tenant_id",
}


class DeploymentFilters(TypedDict, total=False):
    """Camunda's filters of deployments (None: not filtered)."""

    deployment_id: Annotated[UUID | None, Filter.equals("d.id")]
    name: Annotated[str | None, Filter.equals("d.name")]
    name_like: Annotated[str | None, Filter.like("d.name")]
    source: Annotated[str | None, Filter.equals("d.source")]
    without_source: Annotated[bool | None, Filter.if_true("d.source IS NULL")]
    before: Annotated[datetime | None, Filter.below("d.created_at")]
    after: Annotated[datetime | None, Filter.above("d.created_at")]
    without_tenant: Annotated[bool | None, Filter.if_true("d.tenant_id IS NULL")]


_DEPLOYMENTS = CamundaList(
    DeploymentRow,
    "d.id, d.name, d.source, d.created_at, d.tenant_id",
    "deployment d",
    DEPLOYMENT_SORT,
    "d.created_at, d.id",
    filters_of(DeploymentFilters),
    covers=covers.deployment("d.id", tenant="d.tenant_id"),
)


@query
def deployments(
    conn: Connection,
    page: CamundaPage,
    *,
    tenant_ids: Sequence[str] | None = None,
    with_untenanted: bool = False,
    count: bool = False,
    **filters: Unpack[DeploymentFilters],
) -> list[DeploymentRow] | int:
    """Deployments the filters let through; `tenant_ids` (with `with_untenanted`, those of no
    tenant as well), as Camunda's tenantIdIn and includeDeploymentsWithoutTenantId."""
    where = Where()
    if tenant_ids:
        nullable = " OR d.tenant_id IS NULL" if with_untenanted else ""
        where.add("(d.tenant_id = ANY({})" + nullable + ")", list(tenant_ids))
    return _DEPLOYMENTS.read(conn, page, filters, count=count, where=where)


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


def _readable_files(deployment_id: UUID) -> Where:
    where = Where()
    where.equals("r.deployment_id", deployment_id)
    where.authorized(covers.deployment("r.deployment_id", tenant="d.tenant_id"))
    return where


@query
def resources(conn: Connection, deployment_id: UUID) -> list[ResourceRow]:
    """The files of the deployment, by name (none: there is no such deployment the request's
    principal may read, or it has no file)."""
    where = _readable_files(deployment_id)
    statement = (
        sql.SQL(
            "SELECT r.id, r.name, r.deployment_id FROM deployment_resource r "
            "JOIN deployment d ON d.id = r.deployment_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY r.name, r.id")
    )
    return fetch_all(conn, ResourceRow, statement, where.params())


@dataclass(frozen=True)
class ResourceData:
    name: str
    content: bytes


@query
def resource_data(
    conn: Connection,
    deployment_id: UUID,
    resource_id: UUID | None = None,
    *,
    name: str | None = None,
) -> ResourceData | None:
    """The bytes of one file of the deployment, as uploaded: by id, or by its name."""
    where = _readable_files(deployment_id)
    where.equals("r.id", resource_id)
    where.equals("r.name", name)
    statement = (
        sql.SQL(
            "SELECT r.name, r.content FROM deployment_resource r "
            "JOIN deployment d ON d.id = r.deployment_id"
        )
        + where.sql()
    )
    return fetch_one(conn, ResourceData, statement, where.params())


@dataclass(frozen=True)
class DeployedRow:
    """A process or decision definition a deployment created (`kind`: "process" or
    "decision")."""

    kind: str
    id: str
    key: str
    version: int
    name: str | None
    resource_name: str


@query
def deployed(conn: Connection, deployment_id: UUID) -> list[DeployedRow]:
    """The process and decision definitions of the deployment the request's principal may read,
    processes first, by key."""
    found: list[DeployedRow] = []
    for kind, table, readable in (
        ("process", "process_definition", covers.definition("key", tenant="tenant_id")),
        ("decision", "decision_definition", covers.decision("key", tenant="tenant_id")),
    ):
        where = Where()
        where.equals("deployment_id", deployment_id)
        where.authorized(readable)
        statement = (
            sql.SQL("SELECT {} AS kind, id, key, version, name, resource_name FROM {}").format(
                sql.Literal(kind), sql.Identifier(table)
            )
            + where.sql()
            + sql.SQL(" ORDER BY key, version")
        )
        found += fetch_all(conn, DeployedRow, statement, where.params())
    return found
