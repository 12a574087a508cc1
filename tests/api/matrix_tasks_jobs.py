"""The authorization matrix's rows for /engine-rest's task changes, task notes, jobs and job
definitions (tests/api/matrix_table.py adds them to its table), from Camunda 7's rules:

- creating a standalone task: CREATE on tasks;
- delegating a task: TASK_ASSIGN (or UPDATE) on the task, or TASK_ASSIGN on its definition;
- resolving one, throwing a BPMN error or escalation from it, commenting on it: TASK_WORK (or
  UPDATE) on the task, or TASK_WORK (or UPDATE_TASK) on its definition;
- changing a task's details, attaching a file to it or deleting an attachment: UPDATE on the
  task, or UPDATE_TASK on its definition;
- a job's due date, priority and suspension: UPDATE_INSTANCE on its definition, or UPDATE on
  its instance;
- a job definition's suspension (one, or those of a key) and priority: UPDATE on its process
  definition; its jobs' retries: RETRY_JOB (or UPDATE_INSTANCE) on it, as for a job's retries.

Each call has a fresh target: a fresh review task, a fresh timer job, a definition deployed for
it alone (whose job definition the call changes, with an instance whose job it governs)."""

from __future__ import annotations

import uuid
from typing import Any

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.task_changes import DelegateUserTask
from engine.commands.task_notes import AddTaskAttachment
from engine.model import ProcessModel
from tests.api import processes
from tests.api.matrix_routes import (
    PROCESS_DEFINITION,
    PROCESS_INSTANCE,
    REVIEW,
    TASK,
    Make,
    Resource,
    Row,
    Surface,
    Target,
    creating,
    instance_rows,
    on_job,
    on_task,
    scalar,
    task,
    unique,
)

R = Surface.REST
PD, PI = PROCESS_DEFINITION, PROCESS_INSTANCE


def notes_of(task_id: str) -> Any:
    """A task's comments and attachments."""
    return lambda engine: scalar(
        engine,
        "SELECT (SELECT json_agg(to_jsonb(c) ORDER BY c.id) FROM task_comment c"
        "  WHERE c.task_id = %s),"
        " (SELECT json_agg(id ORDER BY id) FROM task_attachment a WHERE a.task_id = %s)",
        uuid.UUID(task_id),
        uuid.UUID(task_id),
    )


def _named(grant: str, task_id: str) -> str:
    return {"key": REVIEW, "task": task_id}[grant]


def on_notes(path: str, grant: str, **request: Any) -> Make:
    """A fresh review task, its notes changed; the grant names the definition key or the
    task."""

    def make(engine: Engine) -> Target:
        task_id, _ = task(engine)
        return Target(
            path.format(task_id), dict(request), _named(grant, task_id), notes_of(task_id)
        )

    return make


def on_attachment(grant: str) -> Make:
    """A fresh review task with one attachment, deleted."""

    def make(engine: Engine) -> Target:
        task_id, _ = task(engine)
        made = engine.run(AddTaskAttachment(uuid.UUID(task_id), attachment_name="a", url="x"))
        path = f"/task/{task_id}/attachment/{made.id}"
        return Target(path, {}, _named(grant, task_id), notes_of(task_id))

    return make


def on_delegated(path: str, grant: str, **request: Any) -> Make:
    """A fresh review task delegated to someone else, resolved."""

    def make(engine: Engine) -> Target:
        task_id, instance_id = task(engine)
        engine.run(DelegateUserTask(uuid.UUID(task_id), "someone"))
        named = _named(grant, task_id)
        return Target(path.format(task_id), dict(request), named, instance_rows(instance_id))

    return make


def escalated(key: str) -> ProcessModel:
    """start -> a user task, whose escalation `X` a boundary event catches -> end."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .user_task("review", "Review it")
        .end_event("end")
        .chain("start", "review", "end")
        .boundary_event("caught", "review", escalation_code="X", cancel_activity=False)
        .end_event("escalated")
        .chain("caught", "escalated")
        .build()
    )


def on_escalating(path: str, grant: str, **request: Any) -> Make:
    """A fresh task of a process deployed for the call, which catches the escalation `X`; the
    grant names its key or the task."""

    def make(engine: Engine) -> Target:
        key = unique("matrix-escalated")
        engine.deploy(escalated(key))
        handle = engine.start_latest(key)
        task_id, instance_id = str(handle.user_tasks()[0].id), str(handle.id)
        named = key if grant == "key" else task_id
        return Target(path.format(task_id), dict(request), named, instance_rows(instance_id))

    return make


def on_job_definition(path: str, **request: Any) -> Make:
    """A timer process deployed for the call, with one waiting instance: its job definition;
    the grant names its key."""

    def make(engine: Engine) -> Target:
        key = unique("matrix-timed")
        engine.deploy(processes.timer(key))
        instance_id = str(engine.start_latest(key).id)
        definition = scalar(engine, "SELECT id FROM job_definition WHERE definition_key = %s", key)
        jobs = instance_rows(instance_id)

        def probe(e: Engine) -> Any:
            row = scalar(e, "SELECT to_jsonb(d) FROM job_definition d WHERE d.id = %s", definition)
            return row, jobs(e)

        return Target(path.format(definition), dict(request), key, probe)

    return make


def on_job_definitions_of_key(path: str, **fields: Any) -> Make:
    """A timer process deployed for the call, with one waiting instance: every job definition of
    its key (named in the body with `fields`); the grant names the key."""

    def make(engine: Engine) -> Target:
        key = unique("matrix-timed")
        engine.deploy(processes.timer(key))
        instance_id = str(engine.start_latest(key).id)
        jobs = instance_rows(instance_id)

        def probe(e: Engine) -> Any:
            rows = scalar(
                e,
                "SELECT json_agg(to_jsonb(d) ORDER BY d.id) FROM job_definition d "
                "WHERE d.definition_key = %s",
                key,
            )
            return rows, jobs(e)

        return Target(path, {"json": {"processDefinitionKey": key, **fields}}, key, probe)

    return make


def _row(
    resource: Resource, permission: str, method: str, route: str, make: Make, status: int
) -> Row:
    return Row(resource, permission, R, method, route, make, status)


ATTACHED = {"data": {"attachment-name": "a", "attachment-type": "text/plain"},
            "files": {"content": ("a.txt", b"attached", "text/plain")}}  # fmt: skip
DETAILS = {"name": "Renamed", "priority": 7}
DUE = {"duedate": "2031-01-31T12:00:00.000+0000"}

TASKS_JOBS_ROWS: list[Row] = [
    # ---- a standalone task: CREATE on tasks ---
    _row(TASK, "CREATE", "POST", "/task/create",
         creating("/task/create", "user_task", lambda: {"json": {"name": "Standalone"}}), 204),
    # ---- delegating: TASK_ASSIGN on the task or on its definition ---
    _row(TASK, "TASK_ASSIGN", "POST", "/task/{id}/delegate",
         on_task("/task/{}/delegate", "task", json={"userId": "someone"}), 204),
    _row(PD, "TASK_ASSIGN", "POST", "/task/{id}/delegate",
         on_task("/task/{}/delegate", "key", json={"userId": "someone"}), 204),
    # ---- working on it: TASK_WORK on the task or on its definition ---
    _row(TASK, "TASK_WORK", "POST", "/task/{id}/resolve",
         on_delegated("/task/{}/resolve", "task", json={}), 204),
    _row(PD, "TASK_WORK", "POST", "/task/{id}/resolve",
         on_delegated("/task/{}/resolve", "key", json={}), 204),
    _row(TASK, "TASK_WORK", "POST", "/task/{id}/bpmnError",
         on_task("/task/{}/bpmnError", "task", json={"errorCode": "E"}), 204),
    _row(PD, "TASK_WORK", "POST", "/task/{id}/bpmnError",
         on_task("/task/{}/bpmnError", "key", json={"errorCode": "E"}), 204),
    _row(TASK, "TASK_WORK", "POST", "/task/{id}/bpmnEscalation",
         on_escalating("/task/{}/bpmnEscalation", "task", json={"escalationCode": "X"}), 204),
    _row(PD, "TASK_WORK", "POST", "/task/{id}/bpmnEscalation",
         on_escalating("/task/{}/bpmnEscalation", "key", json={"escalationCode": "X"}), 204),
    _row(TASK, "TASK_WORK", "POST", "/task/{id}/comment/create",
         on_notes("/task/{}/comment/create", "task", json={"message": "noted"}), 200),
    _row(PD, "TASK_WORK", "POST", "/task/{id}/comment/create",
         on_notes("/task/{}/comment/create", "key", json={"message": "noted"}), 200),
    # ---- changing it: UPDATE on the task, or UPDATE_TASK on its definition ---
    _row(TASK, "UPDATE", "PUT", "/task/{id}", on_task("/task/{}", "task", json=DETAILS), 204),
    _row(PD, "UPDATE_TASK", "PUT", "/task/{id}", on_task("/task/{}", "key", json=DETAILS), 204),
    _row(TASK, "UPDATE", "POST", "/task/{id}/attachment/create",
         on_notes("/task/{}/attachment/create", "task", **ATTACHED), 200),
    _row(PD, "UPDATE_TASK", "POST", "/task/{id}/attachment/create",
         on_notes("/task/{}/attachment/create", "key", **ATTACHED), 200),
    _row(TASK, "UPDATE", "DELETE", "/task/{id}/attachment/{attachmentId}",
         on_attachment("task"), 204),
    _row(PD, "UPDATE_TASK", "DELETE", "/task/{id}/attachment/{attachmentId}",
         on_attachment("key"), 204),
    # ---- a job: UPDATE_INSTANCE on its definition, or UPDATE on its instance ---
    _row(PD, "UPDATE_INSTANCE", "PUT", "/job/{id}/duedate",
         on_job("/job/{}/duedate", True, json=DUE), 204),
    _row(PI, "UPDATE", "PUT", "/job/{id}/duedate",
         on_job("/job/{}/duedate", False, json=DUE), 204),
    _row(PD, "UPDATE_INSTANCE", "PUT", "/job/{id}/priority",
         on_job("/job/{}/priority", True, json={"priority": 7}), 204),
    _row(PI, "UPDATE", "PUT", "/job/{id}/priority",
         on_job("/job/{}/priority", False, json={"priority": 7}), 204),
    _row(PD, "UPDATE_INSTANCE", "PUT", "/job/{id}/suspended",
         on_job("/job/{}/suspended", True, json={"suspended": True}), 204),
    _row(PI, "UPDATE", "PUT", "/job/{id}/suspended",
         on_job("/job/{}/suspended", False, json={"suspended": True}), 204),
    # ---- a job definition: UPDATE on its process definition ---
    _row(PD, "UPDATE", "PUT", "/job-definition/{id}/suspended",
         on_job_definition("/job-definition/{}/suspended", json={"suspended": True}), 204),
    _row(PD, "UPDATE", "PUT", "/job-definition/suspended",
         on_job_definitions_of_key("/job-definition/suspended", suspended=True,
                                   includeJobs=True), 204),
    # Retries are Camunda's RETRY_JOB (or UPDATE_INSTANCE) on the definition, as a job's are
    # (its SetJobRetriesCmd checks checkUpdateRetriesProcessInstanceByProcessDefinitionId).
    _row(PD, "RETRY_JOB", "PUT", "/job-definition/{id}/retries",
         on_job_definition("/job-definition/{}/retries", json={"retries": 5}), 204),
    _row(PD, "UPDATE", "PUT", "/job-definition/{id}/jobPriority",
         on_job_definition("/job-definition/{}/jobPriority", json={"priority": 9}), 204),
]  # fmt: skip
