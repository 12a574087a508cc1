"""Camunda's process definition list: its filters, sorting and paging in one statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import DefinitionState
from engine.store.definitions import DefinitionRow

DEFINITION_SORT: dict[str, LiteralString] = {
    # Interlock's definitions have no category: Camunda's is the file's target namespace.
    "category": "d.key",
    "key": "d.key",
    "id": "d.id",
    "name": "d.name",
    "version": "d.version",
    "deploymentId": "d.deployment_id",
    "versionTag": "d.version_tag",
    "tenantId": "d.tenant_id",
}

# No later version of the same key and tenant.
_LATEST: LiteralString = (
    "NOT EXISTS (SELECT 1 FROM process_definition n WHERE n.key = d.key "
    "AND n.tenant_id IS NOT DISTINCT FROM d.tenant_id AND n.version > d.version)"
)


class DefinitionFilters(TypedDict, total=False):
    """Camunda's filters of process definitions (None: not filtered)."""

    definition_id: Annotated[str | None, Filter.equals("d.id")]
    definition_ids: Annotated[Sequence[str] | None, Filter.any_of("d.id")]
    key: Annotated[str | None, Filter.equals("d.key")]
    keys: Annotated[Sequence[str] | None, Filter.any_of("d.key")]
    key_like: Annotated[str | None, Filter.like("d.key")]
    name: Annotated[str | None, Filter.equals("d.name")]
    name_like: Annotated[str | None, Filter.like("d.name")]
    deployment_id: Annotated[UUID | None, Filter.equals("d.deployment_id")]
    resource_name: Annotated[str | None, Filter.equals("d.resource_name")]
    version: Annotated[int | None, Filter.equals("d.version")]
    version_tag: Annotated[str | None, Filter.equals("d.version_tag")]
    latest_version: Annotated[bool | None, Filter.if_true(_LATEST)]
    without_tenant: Annotated[bool | None, Filter.if_true("d.tenant_id IS NULL")]


_DEFINITIONS = CamundaList(
    DefinitionRow,
    "d.id, d.key, d.version, d.name, d.version_tag, d.deployment_id, d.resource_name, "
    "d.content_hash, d.created_at, d.history_ttl_days, d.tenant_id, d.state",
    "process_definition d",
    DEFINITION_SORT,
    "d.key, d.version, d.id",
    filters_of(DefinitionFilters),
    covers=covers.definition("d.key", tenant="d.tenant_id"),
)


@query
def process_definitions(
    conn: Connection,
    page: CamundaPage,
    *,
    suspended: bool | None = None,
    tenant_ids: Sequence[str] | None = None,
    with_untenanted: bool = False,
    count: bool = False,
    **filters: Unpack[DefinitionFilters],
) -> list[DefinitionRow] | int:
    """The process definitions the filters let through, of the request's principal's; `suspended`
    (True: suspended, False: active); `tenant_ids` (with `with_untenanted`, those of no tenant as
    well), as Camunda's tenantIdIn and includeProcessDefinitionsWithoutTenantId."""
    where = Where()
    if suspended is not None:
        where.equals("d.state", DefinitionState.SUSPENDED if suspended else DefinitionState.ACTIVE)
    if tenant_ids:
        nullable = " OR d.tenant_id IS NULL" if with_untenanted else ""
        where.add("(d.tenant_id = ANY({})" + nullable + ")", list(tenant_ids))
    return _DEFINITIONS.read(conn, page, filters, count=count, where=where)
