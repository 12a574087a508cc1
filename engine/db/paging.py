"""Keyset pages of the lists ordered by a (time, id) key: instances by start (newest first), user
tasks, external tasks and incidents by creation and jobs by due time (oldest first).

A page asks for one row more than it shows: if that row exists, the last shown row's key is the
opaque cursor of the next page, which continues strictly after it, so pages never repeat or skip
a row however many rows are added meanwhile."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar
from uuid import UUID

from engine.errors import BadRequest

T = TypeVar("T")
Key = tuple[datetime, UUID]

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


@dataclass(frozen=True)
class Page(Generic[T]):
    """Rows of one page and the cursor of the next one (None on the last page)."""

    items: list[T]
    next: str | None


def decode(after: str | None) -> Key | None:
    """The key a cursor names; a cursor that is not one is a 400 naming `after`."""
    if after is None:
        return None
    try:
        text = base64.urlsafe_b64decode(after + "=" * (-len(after) % 4)).decode()
        moment, _, row_id = text.partition("|")
        at = datetime.fromisoformat(moment)
        if at.tzinfo is None:
            raise ValueError("naive time")
        return at, UUID(row_id)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"'{after}' is not a valid page cursor", field="after") from exc


def encode(key: Key) -> str:
    """The opaque cursor of `key`: its time and id, base64 without padding."""
    at, row_id = key
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{row_id}".encode()).decode().rstrip("=")


def keyset(
    fetch: Callable[[int, Key | None], list[T]],
    key: Callable[[T], Key],
    *,
    limit: int = DEFAULT_LIMIT,
    after: str | None = None,
    max_limit: int = MAX_LIMIT,
) -> Page[T]:
    """One page: `fetch(n, after)` reads at most n rows strictly after the key `after`, in key
    order; `key` is a row's key."""
    if not 1 <= limit <= max_limit:
        raise BadRequest(f"limit must be between 1 and {max_limit}", field="limit")
    rows = fetch(limit + 1, decode(after))
    items = rows[:limit]
    return Page(items, encode(key(items[-1])) if len(rows) > limit else None)
