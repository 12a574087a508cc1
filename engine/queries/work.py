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

user_task = query(task_store.get)
user_tasks = query(task_store.query)
external_task = query(external_task_store.get)
external_tasks = query(external_task_store.query)
incident = query(incident_store.get)
incidents = query(incident_store.query)
jobs = query(job_store.query)


@query
def job(conn: Connection, job_id: UUID) -> JobInfo | None:
    return job_store.get(conn, job_id)
