"""The instances an operation over many of them selects by a query rather than by id."""

from __future__ import annotations

from collections.abc import Collection
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, query
from engine.sql import covers
from engine.sql.filters import Where


@query
def running_instance_ids(
    conn: Connection,
    *,
    definition_id: str | None = None,
    definition_key: str | None = None,
    business_key: str | None = None,
    ids: Collection[UUID] | None = None,
    limit: int,
) -> list[UUID]:
    """The instances that have not ended and match every filter given (`ids`: only those),
    newest first, at most `limit` of them, of those the request's principal may read."""
    where = Where()
    where.fixed("p.ended_at IS NULL")
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    where.equals("p.business_key", business_key)
    where.any_of("p.id", None if ids is None else list(ids))
    where.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    statement = (
        sql.SQL("SELECT p.id FROM process_instance p")
        + where.sql()
        + sql.SQL(" ORDER BY p.started_at DESC, p.id DESC")
        + where.limit(limit)
    )
    return [row[0] for row in conn.execute(statement, where.params()).fetchall()]
