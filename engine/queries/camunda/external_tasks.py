"""Camunda's external tasks: the open ones, and what a fetchAndLock answer carries beyond the
engine's fetch result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, fetch_dicts, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
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


class ExternalTaskFilters(TypedDict, total=False):
    """Camunda's filters of external tasks (None: not filtered, nor by an empty list)."""

    task_id: Annotated[UUID | None, Filter.equals("e.id")]
    task_ids: Annotated[Sequence[UUID] | None, Filter.any_given("e.id")]
    topic: Annotated[str | None, Filter.equals("e.topic")]
    worker_id: Annotated[str | None, Filter.equals("e.worker_id")]
    with_retries_left: Annotated[bool | None, Filter.holds("e.retries IS NULL OR e.retries > 0")]
    lock_expires_after: Annotated[datetime | None, Filter.above("e.lock_expires_at")]
    lock_expires_before: Annotated[datetime | None, Filter.below("e.lock_expires_at")]
    node_id: Annotated[str | None, Filter.equals("e.node_id")]
    node_ids: Annotated[Sequence[str] | None, Filter.any_given("e.node_id")]
    execution_id: Annotated[UUID | None, Filter.equals("e.token_id")]
    instance_id: Annotated[UUID | None, Filter.equals("e.instance_id")]
    instance_ids: Annotated[Sequence[UUID] | None, Filter.any_given("e.instance_id")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    suspended: Annotated[bool | None, Filter.holds("p.state = {}", InstanceState.SUSPENDED)]
    min_priority: Annotated[int | None, Filter.at_least("e.priority")]
    max_priority: Annotated[int | None, Filter.at_most("e.priority")]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("e.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("e.tenant_id IS NULL")]


_EXTERNAL_TASKS = CamundaList(
    ExternalTaskRow,
    select_list(
        ExternalTaskRow,
        [("e", "external_task"), ("p", "process_instance"), ("d", "process_definition")],
        {"instance_state": "p.state", "activity_instance_id": "t.visit_id"},
    ),
    "external_task e JOIN process_instance p ON p.id = e.instance_id "
    "JOIN process_definition d ON d.id = p.definition_id "
    "LEFT JOIN token t ON t.id = e.token_id",
    EXTERNAL_TASK_SORT,
    "e.created_at, e.id",
    filters_of(ExternalTaskFilters),
    covers=covers.instance("p.definition_key", "e.instance_id", tenant="e.tenant_id"),
)


@query
def external_tasks(
    conn: Connection,
    page: CamundaPage,
    now: datetime,
    *,
    locked: bool | None = None,
    count: bool = False,
    **filters: Unpack[ExternalTaskFilters],
) -> list[ExternalTaskRow] | int:
    """Open external tasks; `locked`: only those whose lock holds at `now` (False: the
    others)."""
    where = Where()
    where.state("e.state", TaskState.OPEN)
    if locked is not None:
        where.add("(e.worker_id IS NOT NULL AND e.lock_expires_at > {}) = {}", now, locked)
    return _EXTERNAL_TASKS.read(conn, page, filters, count=count, where=where)


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
