"""Reads of the work instances leave: user tasks, external tasks, jobs and incidents, each by id
(None when there is none) or as a filtered list in keyset order."""

from __future__ import annotations

from uuid import UUID

from engine.queries import Connection, query
from engine.store import external_tasks as external_task_store
from engine.store import incidents as incident_store
from engine.store import jobs as job_store
from engine.store import tasks as task_store
from engine.store.external_tasks import ExternalTaskInfo
from engine.store.incidents import IncidentInfo
from engine.store.jobs import JobInfo
from engine.store.tasks import TaskRow

__all__ = [
    "ExternalTaskInfo",
    "IncidentInfo",
    "JobInfo",
    "TaskRow",
    "external_task",
    "external_tasks",
    "incident",
    "incidents",
    "job",
    "jobs",
    "user_task",
    "user_tasks",
]

user_tasks = query(task_store.query)
external_tasks = query(external_task_store.query)
incidents = query(incident_store.query)
jobs = query(job_store.query)
job = query(job_store.readable)


# Each read of one: None when there is none the request's principal may read.
@query
def user_task(conn: Connection, task_id: UUID) -> TaskRow | None:
    return task_store.get(conn, task_id, readable=True)


@query
def external_task(conn: Connection, task_id: UUID) -> ExternalTaskInfo | None:
    return external_task_store.get(conn, task_id, readable=True)


@query
def incident(conn: Connection, incident_id: UUID) -> IncidentInfo | None:
    return incident_store.get(conn, incident_id, readable=True)
