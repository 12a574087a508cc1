"""The instance list: filters, a sort and keyset pagination (newest first unless sorted).

By default rows come ordered by (started_at DESC, id DESC), which the indexes on (started_at, id)
and (state, started_at, id) serve directly (roots only: the first, skipping the few called
instances); a page continues strictly after the cursor's row, so pages never repeat or skip a
row however many instances start meanwhile.

A list sorted by another column (`InstanceSort`: ended, state, business key, definition key),
ascending or descending, orders by that column and then the id, which breaks ties (state and
definition key, of few distinct values, by the start before the id: the indexes on (state,
started_at, id) and (definition_key, started_at, id) serve them); its cursor names the sort, the
last row's values of the columns and its id. Empty values (a running instance's end, no business
key) sort after every value ascending and before them descending, as PostgreSQL orders NULLs, so
one index on (column, id) serves both directions (migration 0041 adds those of the end and the
business key).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, LiteralString
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from engine.db.paging import Page
from engine.db.paging import decode as decode_key
from engine.db.paging import encode as encode_key
from engine.errors import BadRequest
from engine.sql import covers
from engine.sql.filters import Where, count
from engine.states import IncidentState, InstanceState
from engine.store import retrying
from engine.store.columns import fetch_where
from engine.store.instance_reads import InstanceInfo

MAX_LIMIT = 500


class InstanceSort(StrEnum):
    """The columns the instance list sorts by (the console's `sort` parameter)."""

    STARTED = "started"
    ENDED = "ended"
    STATE = "state"
    BUSINESS_KEY = "business_key"
    DEFINITION = "definition"


@dataclass(frozen=True)
class SortColumn:
    """How one sort reads: its columns (the sorted one, then for a column of few distinct
    values the start, so that an existing index on (column, started_at, id) serves it), whether
    the first may be NULL, a row's values of them, and which are times (a cursor writes those as
    ISO text)."""

    columns: tuple[LiteralString, ...]
    nullable: bool
    values: Callable[[InstanceInfo], tuple[Any, ...]]
    times: tuple[bool, ...]


SORT_COLUMNS: dict[InstanceSort, SortColumn] = {
    InstanceSort.STARTED: SortColumn(("p.started_at",), False, lambda i: (i.started_at,), (True,)),
    InstanceSort.ENDED: SortColumn(("p.ended_at",), True, lambda i: (i.ended_at,), (True,)),
    InstanceSort.STATE: SortColumn(
        ("p.state", "p.started_at"), False, lambda i: (i.state, i.started_at), (False, True)
    ),
    InstanceSort.BUSINESS_KEY: SortColumn(
        ("p.business_key",), True, lambda i: (i.business_key,), (False,)
    ),
    InstanceSort.DEFINITION: SortColumn(
        ("p.definition_key", "p.started_at"),
        False,
        lambda i: (i.definition_key, i.started_at),
        (False, True),
    ),
}

# A cursor's key: the values of the sort's columns, then the id.
SortKey = tuple[Any, ...]


@dataclass(frozen=True)
class Sort:
    """A sort of the list: by `by`, descending or not. The default: newest first."""

    by: InstanceSort = InstanceSort.STARTED
    descending: bool = True

    @property
    def default(self) -> bool:
        return self == Sort()

    @property
    def spec(self) -> SortColumn:
        return SORT_COLUMNS[self.by]

    def key(self, row: InstanceInfo) -> SortKey:
        """`row`'s place in this order: its values of the columns, then its id."""
        return (*self.spec.values(row), row.id)

    def order(self) -> LiteralString:
        direction: LiteralString = " DESC" if self.descending else " ASC"
        return ", ".join(column + direction for column in (*self.spec.columns, "p.id"))

    def encode(self, key: SortKey) -> str:
        """The opaque cursor after `key`: the sort, the values and the id, base64 without
        padding (the default sort's cursors are engine/db/paging.py's)."""
        if self.default:
            return encode_key((key[0], key[1]))
        values = [v.isoformat() if isinstance(v, datetime) else v for v in key[:-1]]
        text = json.dumps([self.by.value, self.descending, values, str(key[-1])])
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    def decode(self, after: str | None) -> SortKey | None:
        """The key a cursor of this sort names; any other text is a 400 naming `after`."""
        if after is None:
            return None
        if self.default:
            return decode_key(after)
        spec = self.spec
        try:
            text = base64.urlsafe_b64decode(after + "=" * (-len(after) % 4)).decode()
            by, descending, values, row_id = json.loads(text)
            if by != self.by.value or descending is not self.descending:
                raise ValueError("a cursor of another sort")
            if not isinstance(values, list) or len(values) != len(spec.columns):
                raise ValueError("not the values of the sort's columns")
            found: list[Any] = []
            for n, (value, time) in enumerate(zip(values, spec.times, strict=True)):
                if value is None and not (n == 0 and spec.nullable):
                    raise ValueError("no value")
                if value is not None and not isinstance(value, str):
                    raise ValueError("not a value of the column")
                found.append(datetime.fromisoformat(value) if time and value else value)
            return (*found, UUID(row_id))
        except (binascii.Error, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise BadRequest(f"'{after}' is not a valid page cursor", field="after") from exc

    def after(self, found: Where, key: SortKey | None) -> None:
        """Only the rows strictly after `key` in this order. NULLs come last ascending and
        first descending (PostgreSQL's order, which one index on (column, id) serves both
        ways); only a sort of one column may meet them."""
        if key is None:
            return
        columns = ", ".join((*self.spec.columns, "p.id"))
        marks = ", ".join("{}" for _ in key)
        first = self.spec.columns[0]
        if key[0] is None:
            # Among the NULLs: after the id; descending, every non-NULL row follows too.
            if self.descending:
                found.add(
                    "((" + first + " IS NULL AND p.id < {}) OR " + first + " IS NOT NULL)", key[-1]
                )
            else:
                found.add(first + " IS NULL AND p.id > {}", key[-1])
        elif self.descending:
            found.add("(" + columns + ") < (" + marks + ")", *key)
        elif self.spec.nullable:
            found.add("((" + columns + ") > (" + marks + ") OR " + first + " IS NULL)", *key)
        else:
            found.add("(" + columns + ") > (" + marks + ")", *key)


_SELECT = (
    "SELECT p.id, p.definition_id, p.definition_key, p.business_key, p.state, p.started_at, "
    "p.ended_at, p.super_instance_id, p.super_token_id, p.root_instance_id "
    "FROM process_instance p"
)


@dataclass(frozen=True)
class InstanceFilter:
    """Every field narrows the list; None means "any". `variables`: (name, JSON value) pairs
    that an instance's top-level variables must all equal. `root_only`: only instances nobody
    called (False: only called ones); `super_instance_id`: only the instances it called."""

    definition_key: str | None = None
    definition_id: str | None = None
    version: int | None = None
    state: str | None = None
    business_key: str | None = None
    has_incident: bool | None = None
    started_after: datetime | None = None
    started_before: datetime | None = None
    variables: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    root_only: bool | None = None
    super_instance_id: UUID | None = None
    # A job or external task failed and has retries left (see engine/store/retrying.py).
    retrying: bool | None = None
    # Only instances that have not ended (what a batch over the list can still change).
    unfinished: bool = False

    def __post_init__(self) -> None:
        if self.version is not None and self.definition_key is None:
            raise BadRequest("filtering by version needs a definition key", field="version")


def _where(where: InstanceFilter, version_id: str | None) -> Where:
    """`version_id`: the definition id of `where`'s key and version, looked up beforehand, so
    the planner sees the value (and how many instances have it) when it picks an index."""
    found = Where()
    if version_id is not None:
        found.equals("p.definition_id", version_id)
    else:
        found.equals("p.definition_key", where.definition_key)
    found.equals("p.definition_id", where.definition_id)
    found.equals("p.state", where.state)
    if where.unfinished:
        # The states that have not ended, named: the index on (state, started_at, id) serves it.
        found.any_of("p.state", [s.value for s in InstanceState if not s.is_final])
    found.equals("p.business_key", where.business_key)
    if where.has_incident is not None:
        found.exists(
            "SELECT 1 FROM incident i WHERE i.instance_id = p.id AND i.state = {}",
            IncidentState.OPEN,
            negated=not where.has_incident,
        )
    if where.retrying is not None:
        # Retrying ones: the few failed rows' instance ids, deduplicated, then each instance by
        # its key, and the page sorted from those (whatever the planner reckons of the failed
        # rows, it expects a few distinct instances of them); the others: each row of the list's
        # order probes the two small indexes.
        found.fixed(
            "p.id IN (" + retrying.RETRYING_IDS + ")"
            if where.retrying
            else "NOT EXISTS (SELECT 1 FROM job j WHERE j.instance_id = p.id AND "
            + retrying.JOB_RETRYING
            + ") AND NOT EXISTS (SELECT 1 FROM external_task e WHERE e.instance_id = p.id AND "
            + retrying.TASK_RETRYING
            + ")"
        )
    # Roots: the index on (started_at, id), skipping the called instances.
    found.is_null("p.super_instance_id", where.root_only)
    found.equals("p.super_instance_id", where.super_instance_id)
    found.at_least("p.started_at", where.started_after)
    found.below("p.started_at", where.started_before)
    for name, value in where.variables:
        found.exists(
            "SELECT 1 FROM variable v WHERE v.instance_id = p.id "
            "AND v.scope_key = '' AND v.name = {} AND v.value = {}",
            name,
            Jsonb(value),
        )
    found.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    return found


def matching(where: InstanceFilter) -> Where:
    """The conditions of `where` on `process_instance p`, for a read of its own (a count, a
    grouping) over the instances the list would show."""
    return _where(where, None)


def list_page(
    conn: psycopg.Connection[Any],
    where: InstanceFilter,
    *,
    limit: int = 50,
    after: str | None = None,
    sort: Sort | None = None,
) -> Page[InstanceInfo]:
    """One page of instances matching `where` in the order `sort` (None: newest first), after
    the cursor `after`."""
    order = sort or Sort()
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    rows = rows_after(conn, where, order.decode(after), limit + 1, order)
    items = rows[:limit]
    return Page(items, order.encode(order.key(items[-1])) if len(rows) > limit else None)


def rows_after(
    conn: psycopg.Connection[Any],
    where: InstanceFilter,
    after: SortKey | None,
    limit: int,
    sort: Sort | None = None,
) -> list[InstanceInfo]:
    """At most `limit` instances matching `where` in the order `sort` (None: newest first),
    strictly after the key `after` (the values of the sort's columns and the id): the statement
    of a page, and of each batch of an export of the whole list."""
    order = sort or Sort()
    version_id = _version_id(conn, where)
    if version_id == "":
        return []
    found = _where(where, version_id)
    order.after(found, after)
    return fetch_where(conn, InstanceInfo, _SELECT, found, order.order(), limit)


def _version_id(conn: psycopg.Connection[Any], where: InstanceFilter) -> str | None:
    """The definition id of `where`'s key and version; None when it names no version, "" when
    no definition has them (nothing matches)."""
    if where.definition_key is None or where.version is None:
        return None
    row = conn.execute(
        "SELECT id FROM process_definition WHERE key = %s AND version = %s",
        (where.definition_key, where.version),
    ).fetchone()
    return "" if row is None else str(row[0])


def count_matching(conn: psycopg.Connection[Any], where: InstanceFilter) -> int:
    """How many instances `where` matches (the caller may read), by one COUNT."""
    version_id = _version_id(conn, where)
    if version_id == "":
        return 0
    found = _where(where, version_id)
    return count(conn, sql.SQL(" FROM process_instance p"), found)


def of_definitions_in_state(
    conn: psycopg.Connection[Any], definition_ids: list[str], state: str, limit: int
) -> list[UUID]:
    """Up to `limit` ids of the instances of `definition_ids` in `state`, in id order."""
    where = Where()
    where.add("definition_id = ANY({})", definition_ids)
    where.add("state = {}", state)
    query = (
        sql.SQL("SELECT id FROM process_instance")
        + where.sql()
        + sql.SQL(" ORDER BY id")
        + where.limit(limit)
    )
    return [row[0] for row in conn.execute(query, where.params()).fetchall()]
