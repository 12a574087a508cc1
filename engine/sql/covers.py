"""Camunda's read rules, declared once as the `Cover`s a read passes to `Where.authorized`
(engine/sql/filters.py): which permission on which resource lets a principal see a row, and the
column (or the expression over indexed columns) that names that resource in the row.

- a process instance, and what belongs to it (incidents, jobs, external tasks, variables, event
  subscriptions): READ on the instance, or READ_INSTANCE on its definition's key;
- a process definition: READ on its key;
- a user task: READ on the task, or READ_TASK on its instance's definition key;
- history (historic instances and activities): READ_HISTORY on the definition key, or READ on the
  historic instance;
- a decision definition: READ on its key; an evaluation: READ_HISTORY on its key;
- a deployment: READ on it; a batch: READ on it.

A row that names its instance but not its definition key reaches the key through the instance's
primary key (`key_of`)."""

from __future__ import annotations

from typing import LiteralString

from engine.identity.permissions import PERMISSIONS, ResourceType
from engine.sql.filters import Cover

__all__ = [
    "batch",
    "decision",
    "decision_history",
    "definition",
    "deployment",
    "history",
    "history_of",
    "instance",
    "instances_of",
    "key_of",
    "key_of_definition",
    "task",
]

PD = ResourceType.PROCESS_DEFINITION
_PD = PERMISSIONS[PD]
READ = 2


def key_of(instance_id: LiteralString) -> LiteralString:
    """SQL: the definition key of the instance whose id is the column `instance_id`."""
    return "(SELECT ak.definition_key FROM process_instance ak WHERE ak.id = " + instance_id + ")"


def key_of_definition(definition_id: LiteralString) -> LiteralString:
    """SQL: the key of the definition whose id is the column `definition_id`."""
    return "(SELECT dk.key FROM process_definition dk WHERE dk.id = " + definition_id + ")"


def tenant_of_definition(definition_id: LiteralString) -> LiteralString:
    """SQL: the tenant of the definition whose id is the column `definition_id`."""
    return "(SELECT dt.tenant_id FROM process_definition dt WHERE dt.id = " + definition_id + ")"


def instances_of(key: LiteralString) -> tuple[Cover, ...]:
    """Counts of a definition's instances (the summaries): READ_INSTANCE on its key."""
    return (Cover(_PD["READ_INSTANCE"], PD, key),)


def instance(key: LiteralString, instance_id: LiteralString) -> tuple[Cover, ...]:
    """A process instance (or a row of one): `key` names its definition key, `instance_id` its
    id (a uuid column)."""
    return (
        Cover(_PD["READ_INSTANCE"], PD, key),
        Cover(READ, ResourceType.PROCESS_INSTANCE, instance_id, uuid=True),
    )


def definition(key: LiteralString) -> tuple[Cover, ...]:
    return (Cover(READ, PD, key),)


def task(key: LiteralString, task_id: LiteralString) -> tuple[Cover, ...]:
    return (
        Cover(_PD["READ_TASK"], PD, key),
        Cover(READ, ResourceType.TASK, task_id, uuid=True),
    )


def history(key: LiteralString, instance_id: LiteralString) -> tuple[Cover, ...]:
    return (
        Cover(_PD["READ_HISTORY"], PD, key),
        Cover(READ, ResourceType.HISTORIC_PROCESS_INSTANCE, instance_id, uuid=True),
    )


def history_of(key: LiteralString) -> tuple[Cover, ...]:
    """Counts of a definition's history (the summaries): READ_HISTORY on its key."""
    return (Cover(_PD["READ_HISTORY"], PD, key),)


def decision(key: LiteralString) -> tuple[Cover, ...]:
    return (Cover(READ, ResourceType.DECISION_DEFINITION, key),)


def decision_history(key: LiteralString) -> tuple[Cover, ...]:
    dd = ResourceType.DECISION_DEFINITION
    return (Cover(PERMISSIONS[dd]["READ_HISTORY"], dd, key),)


def deployment(deployment_id: LiteralString) -> tuple[Cover, ...]:
    return (Cover(READ, ResourceType.DEPLOYMENT, deployment_id, uuid=True),)


def batch(batch_id: LiteralString) -> tuple[Cover, ...]:
    return (Cover(READ, ResourceType.BATCH, batch_id, uuid=True),)
