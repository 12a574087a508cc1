"""Camunda's external tasks: the open ones, and what a fetchAndLock answer carries beyond the
engine's fetch result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, fetch_dicts, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import InstanceState, TaskState
from engine.store.columns import select_list
from engine.store.external_tasks import ExternalTaskInfo


@dataclass(frozen=True)
class ExternalTaskRow(ExternalTaskInfo):
    """An external task with its definition's version tag, its instance's state and the
    activity instance of its token."""

    version_tag: str | None
    instance_state: str
    activity_instance_id: UUID | None


EXTERNAL_TASK_SORT: dict[str, LiteralString] = {
    "id": "e.id",
    "lockExpirationTime": "e.lock_expires_at",
    "processInstanceId": "e.instance_id",
    "processDefinitionId": "p.definition_id",
    "processDefinitionKey": "p.definition_key",
    "taskPriority": "e.priority",
    "createTime": "e.created_at",
}

_EXTERNAL_COLUMNS = sql.SQL(
    "SELECT "
    + select_list(
        ExternalTaskRow,
        [("e", "external_task"), ("p", "process_instance"), ("d", "process_definition")],
        {"instance_state": "p.state", "activity_instance_id": "t.visit_id"},
    )
    + " "
)
_EXTERNAL_FROM = sql.SQL(
    "FROM external_task e JOIN process_instance p ON p.id = e.instance_id "
    "JOIN process_definition d ON d.id = p.definition_id "
    "LEFT JOIN token t ON t.id = e.token_id"
)


@query
def external_tasks(
    conn: Connection,
    page: CamundaPage,
    now: datetime,
    *,
    task_id: UUID | None = None,
    task_ids: Sequence[UUID] | None = None,
    topic: str | None = None,
    worker_id: str | None = None,
    locked: bool | None = None,
    with_retries_left: bool | None = None,
    lock_expires_after: datetime | None = None,
    lock_expires_before: datetime | None = None,
    node_id: str | None = None,
    node_ids: Sequence[str] | None = None,
    execution_id: UUID | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    definition_id: str | None = None,
    suspended: bool | None = None,
    min_priority: int | None = None,
    max_priority: int | None = None,
    count: bool = False,
) -> list[ExternalTaskRow] | int:
    """Open external tasks."""
    where = Where()
    where.state("e.state", TaskState.OPEN)
    where.equals("e.id", task_id)
    where.any_of("e.id", task_ids or None)
    where.equals("e.topic", topic)
    where.equals("e.worker_id", worker_id)
    if locked is not None:
        where.add("(e.worker_id IS NOT NULL AND e.lock_expires_at > {}) = {}", now, locked)
    if with_retries_left is not None:
        where.add("(e.retries IS NULL OR e.retries > 0) = {}", with_retries_left)
    where.above("e.lock_expires_at", lock_expires_after)
    where.below("e.lock_expires_at", lock_expires_before)
    where.equals("e.node_id", node_id)
    where.any_of("e.node_id", node_ids or None)
    where.equals("e.token_id", execution_id)
    where.equals("e.instance_id", instance_id)
    where.any_of("e.instance_id", instance_ids or None)
    where.equals("p.definition_id", definition_id)
    if suspended is not None:
        where.add("(p.state = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.at_least("e.priority", min_priority)
    where.at_most("e.priority", max_priority)
    if count:
        return count_rows(conn, _EXTERNAL_FROM, where)
    statement = (
        _EXTERNAL_COLUMNS
        + _EXTERNAL_FROM
        + where.sql()
        + order_by(page.sort, EXTERNAL_TASK_SORT, "e.created_at, e.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, ExternalTaskRow, statement, where.params())


@dataclass(frozen=True)
class LockedTaskDetails:
    token_id: UUID
    activity_instance_id: UUID | None
    version_tag: str | None


@query
def locked_task_details(
    conn: Connection, task_ids: Sequence[UUID]
) -> dict[UUID, LockedTaskDetails]:
    """What a fetchAndLock answer carries beyond the engine's fetch result."""
    rows = fetch_dicts(
        conn,
        "SELECT e.id, e.token_id, t.visit_id AS activity_instance_id, d.version_tag "
        "FROM external_task e "
        "JOIN process_instance p ON p.id = e.instance_id "
        "JOIN process_definition d ON d.id = p.definition_id "
        "LEFT JOIN token t ON t.id = e.token_id WHERE e.id = ANY(%s)",
        (list(task_ids),),
    )
    return {
        row["id"]: LockedTaskDetails(
            token_id=row["token_id"],
            activity_instance_id=row["activity_instance_id"],
            version_tag=row["version_tag"],
        )
        for row in rows
    }
