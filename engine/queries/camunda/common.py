"""What every Camunda list read shares: firstResult, maxResults and sortBy (`CamundaPage`), one
resource's list as a declaration (`CamundaList`: its rows, source, sortBy names and filters),
and the states of a running instance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, LiteralString, TypeVar

from psycopg import sql

from engine.queries import Connection, fetch_all
from engine.sql.filters import Covers, Filter, Where, order_by
from engine.sql.filters import count as count_rows
from engine.sql.filters import like_matches as like_matches  # app/camunda reads it here
from engine.states import InstanceState

RUNNING_STATES: tuple[str, ...] = (
    InstanceState.CREATED,
    InstanceState.ACTIVE,
    InstanceState.SUSPENDED,
    InstanceState.TERMINATING,
)

R = TypeVar("R")


@dataclass(frozen=True)
class CamundaPage:
    """`first`/`max`: Camunda's firstResult/maxResults; `sort`: (sortBy, descending) pairs."""

    first: int = 0
    max: int | None = None
    sort: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class CamundaList(Generic[R]):
    """One resource's list read: rows of `row` read by `columns` (a select list) from `source`
    (a FROM clause), Camunda's sortBy names and their expressions (`sort`) and the unique order
    that breaks ties and serves when none is asked (`order`), the resource's `filters` (see
    engine/sql/filters.py's `filters_of`), and the values of the `{}`s in `columns`, bound.
    `covers`: how a principal may read a row (engine/sql/covers.py); a read shows only the rows
    the request's principal may read."""

    row: type[R]
    columns: LiteralString
    source: LiteralString
    sort: Mapping[str, LiteralString]
    order: LiteralString
    filters: Mapping[str, Filter]
    column_values: tuple[Any, ...] = ()
    covers: Covers = field(kw_only=True)

    def read(
        self,
        conn: Connection,
        page: CamundaPage,
        values: Mapping[str, Any],
        *,
        count: bool,
        where: Where | None = None,
    ) -> list[R] | int:
        """The page of rows that the filters given in `values` (and the conditions already in
        `where`) let through, sorted as `page` asks; with `count`, how many rows they let
        through."""
        where = Where() if where is None else where
        where.apply(self.filters, values)
        where.authorized(self.covers)
        source = sql.SQL(self.source)
        if count:
            return count_rows(conn, sql.SQL("FROM ") + source, where)
        columns: sql.Composable = sql.SQL(self.columns)
        if self.column_values:
            columns = sql.SQL(self.columns).format(*map(where.bind, self.column_values))
        statement = (
            sql.SQL("SELECT ")
            + columns
            + sql.SQL(" FROM ")
            + source
            + where.sql()
            + order_by(page.sort, self.sort, self.order)
            + where.offset_limit(page.first, page.max)
        )
        return fetch_all(conn, self.row, statement, where.params())
