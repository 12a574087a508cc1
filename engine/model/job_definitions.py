"""The job definitions of a process, as Camunda makes them when it deploys one: one per
asynchronous continuation (before or after an activity) and one per timer event. A job names its
job definition by (definition, node, kind), and its id is derived from them alone."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from engine.model.definition import ProcessModel
from engine.model.events import BoundaryEvent, IntermediateCatchEvent, StartEvent
from engine.model.node import MultiInstance
from engine.states import JobKind

# The kinds of job a job definition makes (the engine's own jobs have none).
DEFINED_JOBS = (JobKind.ASYNC, JobKind.ASYNC_AFTER, JobKind.TIMER, JobKind.TIMER_START)
_NAMESPACE = uuid.UUID("5d7f6c1e-55a4-4d7e-9d0a-2f0c3b6a9e41")


@dataclass(frozen=True)
class JobDefinitionSpec:
    """A job definition of a node: the kind of job it makes (engine/states.py JobKind), Camunda's
    `jobType` and `jobConfiguration`."""

    node_id: str
    job_kind: JobKind
    job_type: str
    configuration: str


def job_definition_id(definition_id: str, node_id: str, job_kind: str) -> str:
    """The id of the job definition that makes a `job_kind` job of `node_id` in a definition."""
    return str(uuid.uuid5(_NAMESPACE, f"{definition_id}\n{node_id}\n{job_kind}"))


def job_definitions(model: ProcessModel) -> list[JobDefinitionSpec]:
    found = []
    for node in model.nodes:
        loop = getattr(node, "loop", None)
        if node.async_before or (isinstance(loop, MultiInstance) and loop.async_before):
            found.append(
                JobDefinitionSpec(node.id, JobKind.ASYNC, "async-continuation", "async-before")
            )
        if node.async_after:
            found.append(
                JobDefinitionSpec(node.id, JobKind.ASYNC_AFTER, "async-continuation", "async-after")
            )
        timer = getattr(node, "timer", None)
        if timer is None:
            continue
        configuration = f"{str(timer.kind).upper()}: {timer.text}"
        if isinstance(node, StartEvent):
            if node.parent is None:
                found.append(
                    JobDefinitionSpec(
                        node.id, JobKind.TIMER_START, "timer-start-event", configuration
                    )
                )
            else:
                found.append(
                    JobDefinitionSpec(
                        node.id, JobKind.TIMER, "timer-start-event-subprocess", configuration
                    )
                )
        elif isinstance(node, IntermediateCatchEvent):
            found.append(
                JobDefinitionSpec(
                    node.id, JobKind.TIMER, "timer-intermediate-transition", configuration
                )
            )
        elif isinstance(node, BoundaryEvent):
            found.append(
                JobDefinitionSpec(node.id, JobKind.TIMER, "timer-transition", configuration)
            )
    return found
