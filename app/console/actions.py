"""Console mutations. Each is a POST (CSRF-checked by the middleware), needs an operator, runs
one of the engine's commands, and answers with its result or its error in place.

An action is a function of the engine, the operator, the form's fields and the id the path
names; `routes` binds each to its path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import act, json_object, parse_int, typed_value
from engine.api import Engine
from engine.commands.instances import (
    CancelInstance,
    ResumeInstance,
    SetVariables,
    SuspendInstance,
)
from engine.errors import BadRequest
from engine.identity.accounts import Principal

Form = Mapping[str, str]
Action = Callable[[Engine, Principal, Form, UUID], str]


def cancel_instance(engine: Engine, who: Principal, form: Form, instance_id: UUID) -> str:
    state = engine.run(CancelInstance(instance_id)).state
    return f"Instance cancelled: it is now {state}."


def suspend_instance(engine: Engine, who: Principal, form: Form, instance_id: UUID) -> str:
    engine.run(SuspendInstance(instance_id))
    return "Instance suspended: no token moves until it is resumed."


def resume_instance(engine: Engine, who: Principal, form: Form, instance_id: UUID) -> str:
    engine.run(ResumeInstance(instance_id))
    return "Instance resumed."


def set_variable(engine: Engine, who: Principal, form: Form, instance_id: UUID) -> str:
    name = form.get("name", "").strip()
    if not name:
        raise BadRequest("a variable needs a name")
    value = typed_value(form.get("type", "string"), form.get("value", ""))
    engine.run(SetVariables(instance_id, {name: value}))
    return f"Variable '{name}' set ({value.type})."


def retry_incident(engine: Engine, who: Principal, form: Form, incident_id: UUID) -> str:
    engine.retry_incident(incident_id)
    return "Retried: the stopped path runs again."


def resolve_incident(engine: Engine, who: Principal, form: Form, incident_id: UUID) -> str:
    engine.resolve_incident(incident_id)
    return "Incident marked resolved; the token stays where it stopped."


def execute_job(engine: Engine, who: Principal, form: Form, job_id: UUID) -> str:
    outcome = engine.execute_job(job_id)
    return f"Job run now: {outcome}."


def set_job_retries(engine: Engine, who: Principal, form: Form, job_id: UUID) -> str:
    retries = parse_int(form.get("retries"), "retries")
    engine.set_job_retries(job_id, retries)
    return f"Job retries set to {retries}."


def claim_task(engine: Engine, who: Principal, form: Form, task_id: UUID) -> str:
    engine.claim_task(task_id, who.name)
    return f"Task claimed by {who.name}."


def unclaim_task(engine: Engine, who: Principal, form: Form, task_id: UUID) -> str:
    engine.unclaim_task(task_id)
    return "Task released."


def complete_task(engine: Engine, who: Principal, form: Form, task_id: UUID) -> str:
    variables = json_object(form.get("variables", ""), "variables")
    engine.complete_task(task_id, variables)
    return "Task completed."


def set_external_retries(engine: Engine, who: Principal, form: Form, task_id: UUID) -> str:
    retries = parse_int(form.get("retries"), "retries")
    engine.set_external_task_retries(task_id, retries)
    return f"External task retries set to {retries}."


def unlock_external(engine: Engine, who: Principal, form: Form, task_id: UUID) -> str:
    engine.unlock_external_task(task_id)
    return "Lock released: any worker may fetch the task again."


def _post(path: str, action: Action) -> Route:
    """The POST route running `action` on the id in `path` (its one parameter, a UUID)."""

    async def endpoint(request: Request) -> Response:
        (target,) = request.path_params.values()
        return await act(request, lambda engine, who, form: action(engine, who, form, target))

    return Route(path, endpoint, methods=["POST"], name=action.__name__)


routes = [
    _post("/instances/{instance_id:uuid}/cancel", cancel_instance),
    _post("/instances/{instance_id:uuid}/suspend", suspend_instance),
    _post("/instances/{instance_id:uuid}/resume", resume_instance),
    _post("/instances/{instance_id:uuid}/variables", set_variable),
    _post("/incidents/{incident_id:uuid}/retry", retry_incident),
    _post("/incidents/{incident_id:uuid}/resolve", resolve_incident),
    _post("/jobs/{job_id:uuid}/execute", execute_job),
    _post("/jobs/{job_id:uuid}/retries", set_job_retries),
    _post("/tasks/{task_id:uuid}/claim", claim_task),
    _post("/tasks/{task_id:uuid}/unclaim", unclaim_task),
    _post("/tasks/{task_id:uuid}/complete", complete_task),
    _post("/external-tasks/{task_id:uuid}/retries", set_external_retries),
    _post("/external-tasks/{task_id:uuid}/unlock", unlock_external),
]
