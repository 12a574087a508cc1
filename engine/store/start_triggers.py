"""Start events triggered by time, messages, signals and conditions belong to the latest version
of a key: their jobs and subscriptions have no instance."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from engine.language import timers
from engine.model import ProcessModel, StartEvent
from engine.semantics import waits
from engine.sql.filters import Where
from engine.states import DefinitionState, JobKind, SubscriptionKind, WorkLogState
from engine.store import work_log
from engine.store.columns import fetch_all


@dataclass(frozen=True)
class StartSubscription:
    definition_id: str
    definition_key: str
    node_id: str


def replace(
    conn: psycopg.Connection[Any],
    model: ProcessModel,
    definition_id: str,
    now: datetime,
    default_retries: int,
    timer_limits: timers.TimerLimits,
) -> None:
    """The new version of `model.key` takes over the start triggers of the previous ones."""
    older = "SELECT id FROM process_definition WHERE key = %s"
    work_log.delete_jobs(
        conn,
        f"DELETE FROM job WHERE kind = %s AND definition_id IN ({older})",
        (JobKind.TIMER_START, model.key),
    )
    conn.execute(
        f"DELETE FROM event_subscription WHERE instance_id IS NULL AND definition_id IN ({older})",
        (model.key,),
    )
    for node in model.children(None):
        if not isinstance(node, StartEvent):
            continue
        if node.timer is not None:
            job = waits.timer_job(
                node.timer,
                None,
                node.id,
                {},
                now,
                waits.retries_of(node.retry_cycle, default_retries),
                kind=JobKind.TIMER_START,
                limits=timer_limits,
                priority=waits.resolve_priority(
                    node.job_priority if node.job_priority is not None else model.job_priority,
                    node.id,
                    "camunda:jobPriority",
                    {},
                    None,
                    now,
                ),
            )
            conn.execute(
                "INSERT INTO job (id, kind, node_id, definition_id, due_at, retries, timer_text, "
                "repetitions_left, created_at, priority, tenant_id) VALUES (%s, %s, %s, %s, %s, "
                "%s, %s, %s, %s, %s, (SELECT tenant_id FROM process_definition WHERE id = %s))",
                (
                    job.id,
                    job.kind,
                    job.node_id,
                    definition_id,
                    job.due_at,
                    job.retries,
                    job.timer_text,
                    job.repetitions_left,
                    now,
                    job.priority,
                    definition_id,
                ),
            )
            owner = work_log.Owner(None, definition_id, None)
            work_log.insert(conn, [work_log.job_row(job, WorkLogState.CREATED, now, owner)])
        condition = node.conditional.condition.source if node.conditional is not None else None
        for kind, name in (
            (SubscriptionKind.MESSAGE, node.message_name),
            (SubscriptionKind.SIGNAL, node.signal_name),
            (SubscriptionKind.CONDITIONAL, condition),
        ):
            if name is not None:
                conn.execute(
                    "INSERT INTO event_subscription (id, kind, name, node_id, definition_id, "
                    "created_at) VALUES (gen_random_uuid(), %s, %s, %s, %s, %s)",
                    (kind, name, node.id, definition_id, now),
                )


def find(
    conn: psycopg.Connection[Any],
    kind: str,
    name: str,
    *,
    tenant_id: str | None = None,
    without_tenant: bool = False,
    or_none: bool = False,
    narrowed: bool = True,
) -> list[StartSubscription]:
    """The start events waiting for `name`, of tenant `tenant_id` (with `or_none`, and of
    none; or, `without_tenant`, of none; neither: of any), of active definitions: a suspended
    one's wait unanswered; `narrowed`: only of the tenants the request's principal sees (see
    `subscriptions.waiting_instances`)."""
    where = Where()
    where.fixed("s.instance_id IS NULL")
    where.add("d.state = {}", DefinitionState.ACTIVE)
    where.add("s.kind = {}", kind)
    where.add("s.name = {}", name)
    where.tenant("d.tenant_id", tenant_id, without_tenant, or_none=or_none)
    if narrowed:
        where.tenants("d.tenant_id")
    query = (
        sql.SQL(
            "SELECT s.definition_id, d.key AS definition_key, s.node_id FROM event_subscription s "
            "JOIN process_definition d ON d.id = s.definition_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY d.key, d.tenant_id NULLS FIRST")
    )
    return fetch_all(conn, StartSubscription, query, where.params())


def conditional(
    conn: psycopg.Connection[Any], definition_id: str | None
) -> list[StartSubscription]:
    """The conditional start events of the latest versions (of `definition_id` alone, if
    given), by key, of active definitions."""
    where = Where()
    where.fixed("s.instance_id IS NULL")
    where.add("d.state = {}", DefinitionState.ACTIVE)
    where.add("s.kind = {}", SubscriptionKind.CONDITIONAL)
    where.equals("s.definition_id", definition_id)
    query = (
        sql.SQL(
            "SELECT s.definition_id, d.key AS definition_key, s.node_id FROM event_subscription s "
            "JOIN process_definition d ON d.id = s.definition_id"
        )
        + where.sql()
        + sql.SQL(" ORDER BY d.key, s.node_id")
    )
    return fetch_all(conn, StartSubscription, query, where.params())
