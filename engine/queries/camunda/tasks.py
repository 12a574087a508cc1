"""Camunda's user tasks: the open ones, with their instance's state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.queries import Connection, fetch_all, query
from engine.queries.camunda.common import CamundaPage
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.states import InstanceState, TaskState
from engine.store import tasks as task_store
from engine.store.columns import select_list


@dataclass(frozen=True)
class TaskRow(task_store.TaskRow):
    """A user task and the state of its instance."""

    instance_state: str


TASK_SORT: dict[str, LiteralString] = {
    "id": "t.id",
    "name": "t.name",
    "nameCaseInsensitive": "lower(t.name)",
    "assignee": "t.assignee",
    "created": "t.created_at",
    "dueDate": "t.due_at",
    "priority": "t.priority",
    "instanceId": "t.instance_id",
    "processInstanceId": "t.instance_id",
    "executionId": "t.token_id",
    "processDefinitionId": "p.definition_id",
    "taskDefinitionKey": "t.node_id",
}


_TASK_COLUMNS = select_list(
    TaskRow, [("t", "user_task"), ("p", "process_instance")], {"instance_state": "p.state"}
)


@query
def user_tasks(
    conn: Connection,
    page: CamundaPage,
    *,
    task_id: UUID | None = None,
    instance_id: UUID | None = None,
    instance_ids: Sequence[UUID] | None = None,
    business_key: str | None = None,
    definition_id: str | None = None,
    definition_key: str | None = None,
    definition_keys: Sequence[str] | None = None,
    node_id: str | None = None,
    node_ids: Sequence[str] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    assignee: str | None = None,
    assignee_like: str | None = None,
    assigned: bool | None = None,
    candidate_user: str | None = None,
    candidate_group: str | None = None,
    candidate_groups: Sequence[str] | None = None,
    suspended: bool | None = None,
    priority: int | None = None,
    min_priority: int | None = None,
    max_priority: int | None = None,
    execution_id: UUID | None = None,
    count: bool = False,
) -> list[TaskRow] | int:
    """Open user tasks."""
    where = Where()
    where.state("t.state", TaskState.OPEN)
    where.equals("t.id", task_id)
    where.equals("t.instance_id", instance_id)
    where.any_of("t.instance_id", instance_ids or None)
    where.equals("p.business_key", business_key)
    where.equals("p.definition_id", definition_id)
    where.equals("p.definition_key", definition_key)
    where.any_of("p.definition_key", definition_keys or None)
    where.equals("t.node_id", node_id)
    where.any_of("t.node_id", node_ids or None)
    where.equals("t.name", name)
    where.like("t.name", name_like)
    where.equals("t.assignee", assignee)
    where.like("t.assignee", assignee_like)
    if assigned is not None:
        where.fixed("t.assignee IS NOT NULL" if assigned else "t.assignee IS NULL")
    where.when(candidate_user, "{} = ANY(t.candidate_users)")
    where.when(candidate_group, "{} = ANY(t.candidate_groups)")
    where.when(list(candidate_groups) if candidate_groups else None, "t.candidate_groups && {}")
    if suspended is not None:
        where.add("(p.state = {}) = {}", InstanceState.SUSPENDED, suspended)
    where.equals("t.priority", priority)
    where.at_least("t.priority", min_priority)
    where.at_most("t.priority", max_priority)
    where.equals("t.token_id", execution_id)
    source = sql.SQL("FROM user_task t JOIN process_instance p ON p.id = t.instance_id")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(f"SELECT {_TASK_COLUMNS} ")
        + source
        + where.sql()
        + order_by(page.sort, TASK_SORT, "t.created_at, t.id")
        + where.offset_limit(page.first, page.max)
    )
    return fetch_all(conn, TaskRow, statement, where.params())
