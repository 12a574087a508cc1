"""Camunda's task filters: the saved views of the task inbox, read as the FILTER resource
(narrowed to the filters the principal holds READ on), and one filter by id whoever may read it
(for the 404 a missing filter answers before the 403 of one the caller may not read)."""

from __future__ import annotations

from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import ListPage
from engine.store.views import SavedViewRow

__all__ = ["FILTER_SORT", "SavedViewRow", "filter_by_id", "filters"]

# Camunda's sortBy of filters (its reference also lists firstResult and maxResults: by id).
FILTER_SORT: dict[str, LiteralString] = {
    "filterId": "v.id",
    "firstResult": "v.id",
    "maxResults": "v.id",
    "resourceType": "v.page",
    "name": "v.name",
    "owner": "v.owner",
}

_COLUMNS: LiteralString = (
    "v.id, v.owner, v.page, v.name, v.query, v.created_at, v.task_query, v.properties"
)


class FilterFilters(TypedDict, total=False):
    """Camunda's filters of filters (None: not filtered)."""

    filter_id: Annotated[UUID | None, Filter.equals("v.id")]
    # A resource type other than Task: no filter has it.
    other_resource_type: Annotated[bool | None, Filter.if_true("FALSE")]
    name: Annotated[str | None, Filter.equals("v.name")]
    name_like: Annotated[str | None, Filter.like("v.name")]
    owner: Annotated[str | None, Filter.equals("v.owner")]


_FILTERS = CamundaList(
    SavedViewRow,
    _COLUMNS,
    "saved_view v",
    FILTER_SORT,
    "v.id",
    filters_of(FilterFilters),
    covers=covers.filter("v.id"),
)


@query
def filters(
    conn: Connection, page: CamundaPage, *, count: bool = False, **given: Unpack[FilterFilters]
) -> list[SavedViewRow] | int:
    """The task filters the principal may read: every saved view of the task inbox."""
    where = Where()
    where.equals("v.page", ListPage.TASKS.value)
    return _FILTERS.read(conn, page, given, count=count, where=where)


@query
def filter_by_id(conn: Connection, view_id: UUID) -> SavedViewRow | None:
    """The task filter `view_id`, not narrowed: the caller checks READ on it (READ_FILTER)."""
    where = Where()
    where.equals("v.id", view_id)
    where.equals("v.page", ListPage.TASKS.value)
    rows = fetch_all(
        conn,
        SavedViewRow,
        sql.SQL("SELECT " + _COLUMNS + " FROM saved_view v") + where.sql(),
        where.params(),
    )
    return rows[0] if rows else None
