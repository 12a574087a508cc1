"""The instances an operation over many of them selects by a query rather than by id."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, query


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
    newest first, at most `limit` of them."""
    conditions: list[sql.Composable] = [sql.SQL("p.ended_at IS NULL")]
    params: dict[str, Any] = {"limit": limit}
    for column, value in (
        ("definition_id", definition_id),
        ("definition_key", definition_key),
        ("business_key", business_key),
    ):
        if value is not None:
            conditions.append(
                sql.SQL("p.{} = {}").format(sql.Identifier(column), sql.Placeholder(column))
            )
            params[column] = value
    if ids is not None:
        conditions.append(sql.SQL("p.id = ANY(%(ids)s)"))
        params["ids"] = list(ids)
    statement = (
        sql.SQL("SELECT p.id FROM process_instance p WHERE ")
        + sql.SQL(" AND ").join(conditions)
        + sql.SQL(" ORDER BY p.started_at DESC, p.id DESC LIMIT %(limit)s")
    )
    return [row[0] for row in conn.execute(statement, params).fetchall()]
