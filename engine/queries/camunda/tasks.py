"""Camunda's user tasks: the open ones, with their instance's state."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, LiteralString, TypedDict, Unpack
from uuid import UUID

from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaList, CamundaPage
from engine.queries.camunda.instances import VariableFilter, variable_clauses
from engine.sql import covers
from engine.sql.filters import Filter, Where, filters_of
from engine.states import InstanceState, TaskState
from engine.store import tasks as task_store
from engine.store.columns import select_list


@dataclass(frozen=True)
class TaskRow(task_store.TaskRow):
    """A user task and the state of its instance."""

    instance_state: str | None
    tenant_id: str | None = None
    description: str | None = None
    owner: str | None = None
    delegation_state: str | None = None
    follow_up_at: datetime | None = None
    parent_task_id: UUID | None = None
    # Whether the task has comments, attachments (Camunda's `comment`, `attachment`).
    has_comment: bool = False
    has_attachment: bool = False


TASK_SORT: dict[str, LiteralString] = {
    "id": "t.id",
    "name": "t.name",
    "nameCaseInsensitive": "lower(t.name)",
    "assignee": "t.assignee",
    "created": "t.created_at",
    "dueDate": "t.due_at",
    "followUpDate": "t.follow_up_at",
    "description": "t.description",
    "priority": "t.priority",
    "instanceId": "t.instance_id",
    "processInstanceId": "t.instance_id",
    "executionId": "t.token_id",
    "processDefinitionId": "p.definition_id",
    "taskDefinitionKey": "t.node_id",
}


# The variables `v` of the task's instance's root scope, and the task's own (its activity
# instance's locals): Camunda's `processVariables` and `taskVariables`.
_PROCESS_SCOPE: LiteralString = "v.instance_id = t.instance_id AND v.scope_key = ''"
_TASK_SCOPE: LiteralString = "v.instance_id = t.instance_id AND v.scope_key = t.token_id::text"


def _variables_in(scope: LiteralString) -> Filter:
    return Filter(lambda where, filters: variable_clauses(where, scope, filters))


class TaskFilters(TypedDict, total=False):
    """Camunda's filters of user tasks (None: not filtered; an empty list neither)."""

    task_id: Annotated[UUID | None, Filter.equals("t.id")]
    instance_id: Annotated[UUID | None, Filter.equals("t.instance_id")]
    instance_ids: Annotated[Sequence[UUID] | None, Filter.any_given("t.instance_id")]
    business_key: Annotated[str | None, Filter.equals("p.business_key")]
    definition_id: Annotated[str | None, Filter.equals("p.definition_id")]
    definition_key: Annotated[str | None, Filter.equals("p.definition_key")]
    definition_keys: Annotated[Sequence[str] | None, Filter.any_given("p.definition_key")]
    node_id: Annotated[str | None, Filter.equals("t.node_id")]
    node_ids: Annotated[Sequence[str] | None, Filter.any_given("t.node_id")]
    name: Annotated[str | None, Filter.equals("t.name")]
    name_like: Annotated[str | None, Filter.like("t.name")]
    assignee: Annotated[str | None, Filter.equals("t.assignee")]
    assignee_like: Annotated[str | None, Filter.like("t.assignee")]
    assigned: Annotated[bool | None, Filter.present("t.assignee")]
    # A candidate directly or through a group they are a member of.
    candidate_user: Annotated[str | None, Filter.condition(task_store.CANDIDATE_OF)]
    candidate_group: Annotated[
        str | None, Filter.condition("t.candidate_groups @> ARRAY[{}]::text[]")
    ]
    candidate_groups: Annotated[Sequence[str] | None, Filter.overlaps("t.candidate_groups")]
    # True: with candidate groups (users); False: without any.
    with_candidate_groups: Annotated[
        bool | None, Filter.holds("cardinality(t.candidate_groups) > 0")
    ]
    with_candidate_users: Annotated[bool | None, Filter.holds("cardinality(t.candidate_users) > 0")]
    # The assignee or a candidate user (not the owner).
    involved_user: Annotated[
        str | None, Filter.condition("(t.assignee = {} OR t.candidate_users @> ARRAY[{}]::text[])")
    ]
    # Camunda's candidate queries answer the unassigned tasks unless `includeAssignedTasks`.
    candidates_unassigned: Annotated[bool | None, Filter.if_true("t.assignee IS NULL")]
    suspended: Annotated[bool | None, Filter.holds("p.state = {}", InstanceState.SUSPENDED)]
    priority: Annotated[int | None, Filter.equals("t.priority")]
    min_priority: Annotated[int | None, Filter.at_least("t.priority")]
    max_priority: Annotated[int | None, Filter.at_most("t.priority")]
    execution_id: Annotated[UUID | None, Filter.equals("t.token_id")]
    description: Annotated[str | None, Filter.equals("t.description")]
    description_like: Annotated[str | None, Filter.like("t.description")]
    owner: Annotated[str | None, Filter.equals("t.owner")]
    delegation_state: Annotated[str | None, Filter.equals("t.delegation_state")]
    parent_task_id: Annotated[UUID | None, Filter.equals("t.parent_task_id")]
    # Camunda's dueDate/dueBefore/dueAfter and the follow-up's: before and after are exclusive.
    due: Annotated[datetime | None, Filter.equals("t.due_at")]
    due_before: Annotated[datetime | None, Filter.below("t.due_at")]
    due_after: Annotated[datetime | None, Filter.above("t.due_at")]
    without_due: Annotated[bool | None, Filter.if_true("t.due_at IS NULL")]
    follow_up: Annotated[datetime | None, Filter.equals("t.follow_up_at")]
    follow_up_before: Annotated[datetime | None, Filter.below("t.follow_up_at")]
    follow_up_after: Annotated[datetime | None, Filter.above("t.follow_up_at")]
    # Camunda's followUpBeforeOrNotExistent: before the moment, or with no follow-up date.
    follow_up_before_or_none: Annotated[
        datetime | None, Filter.condition("(t.follow_up_at IS NULL OR t.follow_up_at < {})")
    ]
    created_before: Annotated[datetime | None, Filter.below("t.created_at")]
    created_after: Annotated[datetime | None, Filter.above("t.created_at")]
    process_variables: Annotated[Sequence[VariableFilter] | None, _variables_in(_PROCESS_SCOPE)]
    task_variables: Annotated[Sequence[VariableFilter] | None, _variables_in(_TASK_SCOPE)]
    # The console inbox's "inbox" view: held by the user, or unassigned and they a candidate.
    held_or_candidate: Annotated[str | None, Filter.condition(task_store.HELD_OR_CANDIDATE_OF)]
    tenant_ids: Annotated[Sequence[str] | None, Filter.any_given("t.tenant_id")]
    without_tenant: Annotated[bool | None, Filter.if_true("t.tenant_id IS NULL")]


_TASKS = CamundaList(
    TaskRow,
    select_list(
        TaskRow,
        [("t", "user_task"), ("p", "process_instance")],
        {
            "node_id": task_store.NODE_ID,
            "instance_state": "p.state",
            "has_comment": "EXISTS (SELECT 1 FROM task_comment c WHERE c.task_id = t.id)",
            "has_attachment": "EXISTS (SELECT 1 FROM task_attachment a WHERE a.task_id = t.id)",
        },
    ),
    # A standalone task has no instance: its instance's columns are null.
    "user_task t LEFT JOIN process_instance p ON p.id = t.instance_id",
    TASK_SORT,
    "t.created_at, t.id",
    filters_of(TaskFilters),
    covers=covers.task("p.definition_key", "t.id", tenant="t.tenant_id"),
)


@query
def user_tasks(
    conn: Connection, page: CamundaPage, *, count: bool = False, **filters: Unpack[TaskFilters]
) -> list[TaskRow] | int:
    """Open user tasks."""
    where = Where()
    where.state("t.state", TaskState.OPEN)
    return _TASKS.read(conn, page, filters, count=count, where=where)
