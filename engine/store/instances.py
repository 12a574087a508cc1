"""The instance list: filters and keyset pagination, newest first.

Rows come ordered by (started_at DESC, id DESC), which the indexes on (started_at, id) and
(state, started_at, id) serve directly, and for roots only the partial index on (started_at, id)
of instances nobody called; a page continues strictly after the cursor's row, so
pages never repeat or skip a row however many instances start meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from engine.db.paging import Key, Page, keyset
from engine.errors import BadRequest
from engine.sql import covers
from engine.sql.filters import Where, count
from engine.states import IncidentState, InstanceState
from engine.store import retrying
from engine.store.columns import fetch_where
from engine.store.instance_reads import InstanceInfo

MAX_LIMIT = 500

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


def _where(where: InstanceFilter, after: Key | None, version_id: str | None) -> Where:
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
    # Roots: served by the partial index on (started_at, id) of instances nobody called.
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
    found.keyset("(p.started_at, p.id)", after, descending=True)
    found.authorized(covers.instance("p.definition_key", "p.id", tenant="p.tenant_id"))
    return found


def matching(where: InstanceFilter) -> Where:
    """The conditions of `where` on `process_instance p`, for a read of its own (a count, a
    grouping) over the instances the list would show."""
    return _where(where, None, None)


def list_page(
    conn: psycopg.Connection[Any],
    where: InstanceFilter,
    *,
    limit: int = 50,
    after: str | None = None,
) -> Page[InstanceInfo]:
    """One page of instances matching `where`, newest first, after the cursor `after`."""
    return keyset(
        lambda n, key: rows_after(conn, where, key, n),
        lambda i: (i.started_at, i.id),
        limit=limit,
        after=after,
        max_limit=MAX_LIMIT,
    )


def rows_after(
    conn: psycopg.Connection[Any], where: InstanceFilter, after: Key | None, limit: int
) -> list[InstanceInfo]:
    """At most `limit` instances matching `where`, newest first, strictly after `after`: the
    statement of a page, and of each batch of an export of the whole list."""
    version_id = _version_id(conn, where)
    if version_id == "":
        return []
    found = _where(where, after, version_id)
    order = "p.started_at DESC, p.id DESC"
    return fetch_where(conn, InstanceInfo, _SELECT, found, order, limit)


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
    found = _where(where, None, version_id)
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
