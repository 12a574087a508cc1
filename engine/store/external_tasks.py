"""External tasks outside an instance command: fetch-and-lock, look-ups, queries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from engine.core.runtime import InstanceRun
from engine.observe import metrics
from engine.sql import covers
from engine.sql.filters import Where, state_literal
from engine.states import InstanceState, TaskState
from engine.store import runs
from engine.store.columns import fetch_where, select_list


@dataclass(frozen=True)
class ExternalTaskInfo:
    id: UUID
    instance_id: UUID
    token_id: UUID
    node_id: str
    topic: str
    state: str
    priority: int
    worker_id: str | None
    lock_expires_at: datetime | None
    retries: int | None
    error_message: str | None
    error_details: str | None
    created_at: datetime
    definition_id: str
    definition_key: str
    business_key: str | None
    tenant_id: str | None


# One ordered index scan per topic (see the partial indexes on external_task), so a fetch reads a
# few rows however long the backlog. The instance check is a scalar subquery on purpose: it runs
# per candidate row instead of becoming a join that reads every open task of the topic.
_FETCH_AND_LOCK = """
WITH picked AS (
    SELECT c.id
    FROM {topics}
    CROSS JOIN LATERAL (
        SELECT e.id, e.priority, e.created_at FROM external_task e
        WHERE e.state = {open} AND e.topic = t.topic{narrowing}
          AND (e.lock_expires_at IS NULL OR e.lock_expires_at <= %(now)s)
          AND (e.retries IS NULL OR e.retries > 0)
          AND (SELECT p.state FROM process_instance p WHERE p.id = e.instance_id) = {active}
          {authorized}
        ORDER BY {order}
        LIMIT %(max_tasks)s
        FOR UPDATE OF e SKIP LOCKED
    ) AS c
    ORDER BY {order_c}
    LIMIT %(max_tasks)s
),
locked AS (
    UPDATE external_task e
    SET worker_id = %(worker)s, lock_expires_at = %(now)s + d.ms * interval '1 millisecond'
    FROM picked, jsonb_to_recordset(%(durations)s::jsonb) AS d(topic text, ms bigint)
    WHERE e.id = picked.id AND d.topic = e.topic
    RETURNING e.*
)
SELECT {columns}, {instance}
FROM locked e JOIN process_instance p ON p.id = e.instance_id
ORDER BY {order}
"""
# An `ExternalTaskInfo` read from the task `e` and its instance `p`.
_COLUMNS = select_list(ExternalTaskInfo, [("e", "external_task"), ("p", "process_instance")])
_FROM = "external_task e JOIN process_instance p ON p.id = e.instance_id"

# Open tasks, as the partial indexes of the fetch name them (see engine/sql/filters.py); the
# instance's state is written the same way, so the statement takes the same parameters as ever.
_OPEN = state_literal(TaskState.OPEN)
_ACTIVE = state_literal(InstanceState.ACTIVE)

# Each locked task's instance loads with it, as `runs.load_run` would load it: the report on the
# task can then run over that snapshot without loading again (see engine/core/snapshots.py).
_INSTANCE = f"{runs.instance_columns('p')}, {runs.loaded_columns('p')}"


# The topics of a fetch: a plain list, or with each topic's narrowing (a fetch that names
# tenants, definitions, a business key or variables); only the latter carries the conditions, so
# a fetch without them plans as it always has.
_TOPICS = "unnest(%(topics)s::text[]) AS t(topic)"
_NARROWED_TOPICS = (
    "jsonb_to_recordset(%(durations)s::jsonb) AS t(topic text, tenants text[], bare boolean, "
    "definition_ids text[], definition_keys text[], business_key text, variables jsonb)"
)
# Variables: each given one is an instance variable of that name with an equal value.
_NARROWING_CONDITIONS = """
          AND (t.tenants IS NULL OR e.tenant_id = ANY(t.tenants))
          AND (t.bare IS NOT TRUE OR e.tenant_id IS NULL)
          AND (t.definition_keys IS NULL OR e.definition_key = ANY(t.definition_keys))
          AND (t.definition_ids IS NULL OR (SELECT p.definition_id FROM process_instance p
                                            WHERE p.id = e.instance_id) = ANY(t.definition_ids))
          AND (t.business_key IS NULL OR (SELECT p.business_key FROM process_instance p
                                          WHERE p.id = e.instance_id) = t.business_key)
          AND (t.variables IS NULL OR NOT EXISTS (
              SELECT 1 FROM jsonb_each(t.variables) AS w(name, value)
              WHERE NOT EXISTS (
                  SELECT 1 FROM variable v
                  WHERE v.instance_id = e.instance_id AND v.scope_key = ''
                    AND v.name = w.name AND v.value = w.value)))"""


@dataclass(frozen=True)
class Narrowing:
    """A topic's tasks narrowed to some tenants' (None: any) or with `without_tenant` to those of
    none, to instances of some definitions (by id or key), of a business key, or whose instance
    variables equal `variables` (None: not narrowed)."""

    tenant_ids: Sequence[str] | None = None
    without_tenant: bool = False
    definition_ids: Sequence[str] | None = None
    definition_keys: Sequence[str] | None = None
    business_key: str | None = None
    variables: Mapping[str, Any] | None = None

    def narrows(self) -> bool:
        return self != Narrowing()

    def record(self, topic: str, ms: int) -> dict[str, Any]:
        """The topic's row of the fetch's recordset."""
        return {
            "topic": topic,
            "ms": ms,
            "tenants": list(self.tenant_ids) if self.tenant_ids is not None else None,
            "bare": self.without_tenant,
            "definition_ids": list(self.definition_ids) if self.definition_ids else None,
            "definition_keys": list(self.definition_keys) if self.definition_keys else None,
            "business_key": self.business_key,
            "variables": dict(self.variables) if self.variables else None,
        }


# Where a narrowed fetch adds its worker's covers (`_narrowed`); nothing for an unrestricted one.
_AUTHORIZED = "/* authorized */"
# The tasks a worker may lock: those of instances they may READ and UPDATE (Camunda's rule).
FETCHABLE_BY = covers.fetchable("e.definition_key", "e.instance_id", tenant="e.tenant_id")


def _narrowed(statement: str) -> tuple[str | sql.Composed, dict[str, Any]]:
    """`statement` with the current actor's fetch covers in its candidates' conditions
    (engine/sql/filters.py `Where.authorized`) and their values, or as it is when they add
    nothing: a fetch of the engine's own, or of a worker who may lock every task, plans as it
    always has."""
    where = Where()
    where.authorized(FETCHABLE_BY)
    if where.sql() == sql.SQL(""):
        return statement, {}
    head, tail = statement.split(_AUTHORIZED)
    narrowed = sql.SQL(head) + sql.SQL("\n          AND ") + where.conditions() + sql.SQL(tail)
    return narrowed, where.params()


def _fetch_and_lock(order: str, *, narrowed: bool = False) -> str:
    """The fetch-and-lock statement taking tasks in `order` (columns of the table), with each
    topic's narrowing conditions when `narrowed`."""
    return _FETCH_AND_LOCK.format(
        topics=_NARROWED_TOPICS if narrowed else _TOPICS,
        narrowing=_NARROWING_CONDITIONS if narrowed else "",
        order=", ".join(f"e.{key}" for key in order.split(", ")),
        order_c=", ".join(f"c.{key}" for key in order.split(", ")),
        columns=_COLUMNS,
        instance=_INSTANCE,
        open=_OPEN,
        active=_ACTIVE,
        authorized=_AUTHORIZED,
    )


FETCH_BY_PRIORITY = _fetch_and_lock("priority DESC, created_at, id")
FETCH_OLDEST_FIRST = _fetch_and_lock("created_at, id")
FETCH_BY_PRIORITY_NARROWED = _fetch_and_lock("priority DESC, created_at, id", narrowed=True)
FETCH_OLDEST_FIRST_NARROWED = _fetch_and_lock("created_at, id", narrowed=True)


# Where a fetched row's instance columns begin.
_WIDTH = len(fields(ExternalTaskInfo))

# Mirrors the fetch-and-lock statement's conditions. A read: a long poll woken for another topic's
# task, or for one another worker got first, looks without locking (and notifying) anything.
FETCHABLE = f"""
SELECT EXISTS (
    SELECT 1 FROM external_task e
    WHERE e.state = {_OPEN} AND e.topic = ANY(%(topics)s)
      AND (e.lock_expires_at IS NULL OR e.lock_expires_at <= %(now)s)
      AND (e.retries IS NULL OR e.retries > 0)
      AND (SELECT p.state FROM process_instance p WHERE p.id = e.instance_id) = {_ACTIVE}
      {_AUTHORIZED})
"""


def any_fetchable(conn: psycopg.Connection[Any], topics: list[str], now: datetime) -> bool:
    """Whether a fetch of `topics` would lock anything now."""
    statement, covered = _narrowed(FETCHABLE)  # what this worker's fetch would lock
    row = conn.execute(statement, {**covered, "topics": topics, "now": now}).fetchone()
    return bool(row and row[0])


def fetch_and_lock(
    conn: psycopg.Connection[Any],
    *,
    worker_id: str,
    lock_ms_by_topic: dict[str, int],
    max_tasks: int,
    use_priority: bool,
    now: datetime,
    narrowing: Mapping[str, Narrowing] | None = None,
) -> list[tuple[ExternalTaskInfo, InstanceRun]]:
    """Lock up to `max_tasks` available tasks of the topics for `worker_id`, each for its topic's
    duration, and return each with its instance as loaded in the same statement (the task in it
    shows the lock just taken). Tasks another worker is locking right now are skipped, never
    waited for. `narrowing` narrows a topic's tasks (see `Narrowing`)."""
    narrowed = narrowing or {}
    durations = [
        narrowed.get(topic, Narrowing()).record(topic, ms) for topic, ms in lock_ms_by_topic.items()
    ]
    if any(n.narrows() for n in narrowed.values()):
        statement = FETCH_BY_PRIORITY_NARROWED if use_priority else FETCH_OLDEST_FIRST_NARROWED
    else:
        statement = FETCH_BY_PRIORITY if use_priority else FETCH_OLDEST_FIRST
    text, covered = _narrowed(statement)
    cur = conn.execute(
        text,
        {
            **covered,
            "topics": list(lock_ms_by_topic),
            "now": now,
            "max_tasks": max_tasks,
            "worker": worker_id,
            "durations": json.dumps(durations),
            **runs.LOAD_STATES,
            "extra": [],
        },
        prepare=True,
    )
    rows = cur.fetchall()
    # The task's fields by their columns' names (known once the rows came, in a pipeline too);
    # the instance's columns follow them.
    names = [column.name for column in cur.description or ()][:_WIDTH]
    locked = []
    for row in rows:
        task = ExternalTaskInfo(**dict(zip(names, row, strict=False)))
        run = runs.run_of(row[_WIDTH:], now)
        # The statement's snapshot predates its own update of the task.
        loaded = run.external_tasks[task.id]
        if loaded.worker_id is not None:
            # Still held by a worker when this fetch took it: that worker's lock had expired.
            metrics.EXTERNAL_TASK_LOCK_EXPIRIES.inc()
        loaded.worker_id = loaded.loaded_worker_id = task.worker_id
        loaded.lock_expires_at = task.lock_expires_at
        locked.append((task, run))
    metrics.EXTERNAL_TASKS_LOCKED.inc(len(locked))
    return locked


# The external tasks the request's principal may read: those of instances they may read.
READABLE = covers.instance("p.definition_key", "e.instance_id", tenant="e.tenant_id")


def get(
    conn: psycopg.Connection[Any], task_id: UUID, *, readable: bool = False
) -> ExternalTaskInfo | None:
    """The external task; with `readable`, only if the request's principal may read it."""
    where = Where()
    where.equals("e.id", task_id)
    if readable:
        where.authorized(READABLE)
    select = f"SELECT {_COLUMNS} FROM {_FROM}"
    found = fetch_where(conn, ExternalTaskInfo, select, where, "e.id", 1)
    return found[0] if found else None


def query(
    conn: psycopg.Connection[Any],
    *,
    topic: str | None = None,
    instance_id: UUID | None = None,
    worker_id: str | None = None,
    locked: bool | None = None,
    now: datetime | None = None,
    limit: int = 1000,
    after: tuple[datetime, UUID] | None = None,
) -> list[ExternalTaskInfo]:
    """Open external tasks matching the filters, oldest first; with `after` (created_at, id),
    only those that come after it (the next page)."""
    where = Where()
    where.state("e.state", TaskState.OPEN)
    where.equals("e.topic", topic)
    where.equals("e.instance_id", instance_id)
    where.equals("e.worker_id", worker_id)
    if locked is not None:
        where.add("(e.worker_id IS NOT NULL AND e.lock_expires_at > {}) = {}", now, locked)
    where.keyset("(e.created_at, e.id)", after, descending=False)
    where.authorized(READABLE)
    select = f"SELECT {_COLUMNS} FROM {_FROM}"
    return fetch_where(conn, ExternalTaskInfo, select, where, "e.created_at, e.id", limit)


def state_of(conn: psycopg.Connection[Any], task_id: UUID) -> str | None:
    row = conn.execute("SELECT state FROM external_task WHERE id = %s", (task_id,)).fetchone()
    return row[0] if row else None
