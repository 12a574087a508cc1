"""The web layer's reads of one thing that must exist. Every read goes through `engine/queries/`
(the functions `Engine`'s read methods call too); these add only NotFound, in the words the
Python API uses, when the row is not there."""

from __future__ import annotations

from typing import TypeVar
from uuid import UUID

from engine.api import Engine
from engine.errors import NotFound
from engine.language.forms import Form
from engine.language.variables import TypedValue, from_row
from engine.model import ProcessModel
from engine.queries import definitions as definition_reads
from engine.queries import forms as form_reads
from engine.queries import instances as instance_reads
from engine.queries import work
from engine.queries.definitions import DefinitionRow
from engine.queries.instances import InstanceInfo
from engine.queries.work import ExternalTaskInfo, IncidentInfo, JobInfo, TaskRow
from engine.states import InstanceState, TaskState

T = TypeVar("T")


def found(row: T | None, missing: str) -> T:
    """`row`, or NotFound saying `missing` when the read found nothing."""
    if row is None:
        raise NotFound(missing)
    return row


def instance(engine: Engine, instance_id: UUID) -> InstanceInfo:
    missing = f"process instance {instance_id} does not exist"
    return found(instance_reads.instance(engine, instance_id), missing)


def instance_state(engine: Engine, instance_id: UUID) -> InstanceState:
    """The instance's state: the cheapest read that says it exists."""
    state = instance_reads.state(engine, instance_id)
    return InstanceState(found(state, f"process instance {instance_id} does not exist"))


def definition(engine: Engine, definition_id: str) -> DefinitionRow:
    missing = f"process definition '{definition_id}' does not exist"
    return found(definition_reads.by_id(engine, definition_id), missing)


def latest_definition(engine: Engine, key: str) -> DefinitionRow:
    return found(definition_reads.latest(engine, key), f"process '{key}' is not deployed")


def definition_xml(engine: Engine, definition_id: str) -> tuple[str, str]:
    """(resource name, BPMN XML) of a definition as it was deployed."""
    missing = f"process definition '{definition_id}' does not exist"
    return found(definition_reads.source_xml(engine, definition_id), missing)


def model(engine: Engine, definition_id: str, key: str) -> ProcessModel:
    """The parsed process `key` of a deployed definition (parsed once, then cached)."""
    return definition_reads.model(engine, engine.definition_cache, definition_id, key)


def start_form(engine: Engine, definition: DefinitionRow) -> Form:
    """The generated form of a definition's none start event (no fields: it has none)."""
    return form_reads.start_form(engine, engine.definition_cache, definition)


def user_task(engine: Engine, task_id: UUID) -> TaskRow:
    return found(work.user_task(engine, task_id), f"user task {task_id} does not exist")


def task_form(engine: Engine, task_id: UUID) -> tuple[TaskRow, Form]:
    """An open user task with its generated form (no fields: the task has none)."""
    task = user_task(engine, task_id)
    if task.state != TaskState.OPEN:
        raise NotFound(f"user task {task_id} is not open")
    return task, form_reads.task_form(engine, engine.definition_cache, task)


def external_task(engine: Engine, task_id: UUID) -> ExternalTaskInfo:
    return found(work.external_task(engine, task_id), f"external task {task_id} does not exist")


def incident(engine: Engine, incident_id: UUID) -> IncidentInfo:
    return found(work.incident(engine, incident_id), f"incident {incident_id} does not exist")


def job(engine: Engine, job_id: UUID) -> JobInfo:
    return found(work.job(engine, job_id), f"job {job_id} does not exist")


def typed_variables(engine: Engine, instance_id: UUID) -> dict[str, TypedValue]:
    """The variables of the instance's root scope with their types (none for an instance that
    does not exist)."""
    rows = instance_reads.variables(engine, instance_id)
    return {name: from_row(type_name, value) for name, type_name, value in rows}
