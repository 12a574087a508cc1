"""Camunda's read rules, declared once as the `Cover`s a read passes to `Where.authorized`
(engine/sql/filters.py): which permission on which resource lets a principal see a row, and the
column (or the expression over indexed columns) that names that resource in the row.

- a process instance, and what belongs to it (incidents, jobs, external tasks, variables, event
  subscriptions): READ on the instance, or READ_INSTANCE on its definition's key;
- a process definition: READ on its key;
- a user task: READ on the task, or READ_TASK on its instance's definition key (a standalone
  task, of no instance: READ on the task only);
- history (historic instances and activities): READ_HISTORY on the definition key, or READ on the
  historic instance;
- a decision definition: READ on its key; an evaluation: READ_HISTORY on its key;
- a deployment: READ on it; a batch: READ on it; a task filter: READ on it;
- a user, a group, a tenant, an authorization: READ on it (a user always reads themselves, as
  Camunda grants every user on creation, and their groups: engine/identity/grants.py).

A row that names its instance but not its definition key reaches the key through the instance's
primary key (`key_of`).

Every cover set names the row's tenant too (`tenant`, a column or `tenant_of`): a principal who
sees only some tenants sees a row of another tenant under no grant. A read passes the set to
`Where.authorized`, which narrows by both, so no authorized read can leave tenants out."""

from __future__ import annotations

from typing import LiteralString

from engine.identity.permissions import PERMISSIONS, READ, ResourceType
from engine.sql.filters import Cover, Covers

__all__ = [
    "authorization",
    "batch",
    "decision",
    "decision_history",
    "definition",
    "deployment",
    "fetchable",
    "filter",
    "group",
    "historic_task",
    "history",
    "history_of",
    "instance",
    "instances_of",
    "key_of",
    "key_of_definition",
    "task",
    "tenant",
    "tenant_of",
    "tenant_of_definition",
    "user",
]

PD = ResourceType.PROCESS_DEFINITION
_PD = PERMISSIONS[PD]


def key_of(instance_id: LiteralString) -> LiteralString:
    """SQL: the definition key of the instance whose id is the column `instance_id`."""
    return "(SELECT ak.definition_key FROM process_instance ak WHERE ak.id = " + instance_id + ")"


def key_of_definition(definition_id: LiteralString) -> LiteralString:
    """SQL: the key of the definition whose id is the column `definition_id`."""
    return "(SELECT dk.key FROM process_definition dk WHERE dk.id = " + definition_id + ")"


def tenant_of(instance_id: LiteralString) -> LiteralString:
    """SQL: the tenant of the instance whose id is the column `instance_id`."""
    return "(SELECT at.tenant_id FROM process_instance at WHERE at.id = " + instance_id + ")"


def tenant_of_definition(definition_id: LiteralString) -> LiteralString:
    """SQL: the tenant of the definition whose id is the column `definition_id`."""
    return "(SELECT dt.tenant_id FROM process_definition dt WHERE dt.id = " + definition_id + ")"


def instances_of(key: LiteralString, *, tenant: LiteralString) -> Covers:
    """Counts of a definition's instances (the summaries): READ_INSTANCE on its key."""
    return Covers((Cover(_PD["READ_INSTANCE"], PD, key),), tenant)


def instance(key: LiteralString, instance_id: LiteralString, *, tenant: LiteralString) -> Covers:
    """A process instance (or a row of one): `key` names its definition key, `instance_id` its
    id (a uuid column)."""
    return Covers(
        (
            Cover(_PD["READ_INSTANCE"], PD, key),
            Cover(READ, ResourceType.PROCESS_INSTANCE, instance_id, uuid=True),
        ),
        tenant,
    )


def fetchable(key: LiteralString, instance_id: LiteralString, *, tenant: LiteralString) -> Covers:
    """External tasks a worker's fetch may lock (Camunda's fetch narrowing, not a read): READ
    and UPDATE on the instance, or READ_INSTANCE and UPDATE_INSTANCE on its definition's key."""
    on_instance = PERMISSIONS[ResourceType.PROCESS_INSTANCE]
    return Covers(
        (
            Cover(_PD["READ_INSTANCE"] | _PD["UPDATE_INSTANCE"], PD, key),
            Cover(
                READ | on_instance["UPDATE"], ResourceType.PROCESS_INSTANCE, instance_id, uuid=True
            ),
        ),
        tenant,
    )


def definition(key: LiteralString, *, tenant: LiteralString) -> Covers:
    return Covers((Cover(READ, PD, key),), tenant)


def task(key: LiteralString, task_id: LiteralString, *, tenant: LiteralString) -> Covers:
    """A user task: READ_TASK on its definition's key (`key`: null for a standalone task, which
    only READ on the task itself reaches), or READ on the task."""
    return Covers(
        (
            Cover(_PD["READ_TASK"], PD, key, only_where=key + " IS NOT NULL"),
            Cover(READ, ResourceType.TASK, task_id, uuid=True),
        ),
        tenant,
    )


def history(key: LiteralString, instance_id: LiteralString, *, tenant: LiteralString) -> Covers:
    return Covers(
        (
            Cover(_PD["READ_HISTORY"], PD, key),
            Cover(READ, ResourceType.HISTORIC_PROCESS_INSTANCE, instance_id, uuid=True),
        ),
        tenant,
    )


def historic_task(key: LiteralString, task_id: LiteralString, *, tenant: LiteralString) -> Covers:
    """A user task's history: READ_HISTORY on its definition's key, or READ on the task's
    HistoricTask resource."""
    return Covers(
        (
            Cover(_PD["READ_HISTORY"], PD, key, only_where=key + " IS NOT NULL"),
            Cover(READ, ResourceType.HISTORIC_TASK, task_id, uuid=True),
        ),
        tenant,
    )


def history_of(key: LiteralString, *, tenant: LiteralString) -> Covers:
    """Counts of a definition's history (the summaries): READ_HISTORY on its key."""
    return Covers((Cover(_PD["READ_HISTORY"], PD, key),), tenant)


def decision(key: LiteralString, *, tenant: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.DECISION_DEFINITION, key),), tenant)


def decision_history(key: LiteralString, *, tenant: LiteralString) -> Covers:
    dd = ResourceType.DECISION_DEFINITION
    return Covers((Cover(PERMISSIONS[dd]["READ_HISTORY"], dd, key),), tenant)


def deployment(deployment_id: LiteralString, *, tenant: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.DEPLOYMENT, deployment_id, uuid=True),), tenant)


def batch(batch_id: LiteralString, *, tenant: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.BATCH, batch_id, uuid=True),), tenant)


def user(user_id: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.USER, user_id),), None)


def group(group_id: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.GROUP, group_id),), None)


def tenant(tenant_id: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.TENANT, tenant_id),), None)


def authorization(authorization_id: LiteralString) -> Covers:
    return Covers((Cover(READ, ResourceType.AUTHORIZATION, authorization_id, uuid=True),), None)


def filter(view_id: LiteralString) -> Covers:
    """A task filter (a saved view of the task inbox): READ on it; filters have no tenant."""
    return Covers((Cover(READ, ResourceType.FILTER, view_id, uuid=True),), None)
