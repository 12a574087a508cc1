"""Keyset paging of the /api/v1 lists besides instances (user tasks, external tasks, incidents,
jobs, batches, decision evaluations): the `limit` and `after` parameters, read the one way, and
the page they name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from starlette.responses import Response

from app.api import views
from app.api.http import Param, call, reply
from app.api.schemas import INTEGER, STRING
from app.params import Query
from engine.db.paging import DEFAULT_LIMIT, MAX_LIMIT, Key, keyset

T = TypeVar("T")

PAGE_PARAMS = (
    Param("limit", INTEGER, f"page size, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})"),
    Param("after", STRING, "the `next` cursor of the previous page"),
)


class Fetch(Protocol[T]):
    """A read of at most `limit` rows after the key `after`, its filters bound."""

    def __call__(self, *, limit: int, after: Key | None) -> list[T]: ...


def created(row: Any) -> Key:
    """The key of a list ordered by creation: (created_at, id)."""
    key: Key = (row.created_at, row.id)
    return key


async def listed(
    query: Query,
    fetch: Fetch[T],
    key: Callable[[T], Key],
    view: Callable[[T], dict[str, Any]],
) -> Response:
    """The page `limit` and `after` name, `{"items": [...], "next": cursor}`: `fetch` reads the
    rows in `key`'s order, `view` shapes each."""
    limit = query.integer("limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
    found = await call(
        keyset,
        lambda n, after: fetch(limit=n, after=after),
        key,
        limit=limit,
        after=query.text("after"),
    )
    return reply(views.items([view(row) for row in found.items], found.next))
