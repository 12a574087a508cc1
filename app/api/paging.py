"""Keyset paging of the /api/v1 lists besides instances (user tasks, external tasks, incidents,
jobs): the `limit` and `after` parameters, read the one way, and the page they name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from app.api.http import Param, call
from app.api.schemas import INTEGER, STRING
from app.params import Query
from engine.db.paging import DEFAULT_LIMIT, MAX_LIMIT, Key, Page, keyset

T = TypeVar("T")

PAGE_PARAMS = (
    Param("limit", INTEGER, f"page size, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})"),
    Param("after", STRING, "the `next` cursor of the previous page"),
)


async def page(
    query: Query, fetch: Callable[[int, Key | None], list[T]], key: Callable[[T], Key]
) -> Page[T]:
    """The page `limit` and `after` name: `fetch(n, after)` reads n rows after the key."""
    limit = query.integer("limit", DEFAULT_LIMIT, minimum=1, maximum=MAX_LIMIT)
    return await call(keyset, fetch, key, limit=limit, after=query.text("after"))
