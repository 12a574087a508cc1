"""Console mutations. Each is a POST (CSRF-checked by the middleware), needs an operator, runs
one of the engine's commands, and answers with its result or its error in place."""

from __future__ import annotations

from collections.abc import Mapping
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console.common import act, json_object, parse_int, typed_value
from engine.accounts import Principal
from engine.api import Engine
from engine.commands.instances import SetVariables
from engine.errors import BadRequest

Form = Mapping[str, str]


def _id(request: Request, name: str) -> UUID:
    value: UUID = request.path_params[name]
    return value


async def cancel_instance(request: Request) -> Response:
    instance_id = _id(request, "instance_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        state = engine.instance(instance_id).cancel()
        return f"Instance cancelled: it is now {state.value}."

    return await act(request, work)


async def suspend_instance(request: Request) -> Response:
    instance_id = _id(request, "instance_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.instance(instance_id).suspend()
        return "Instance suspended: no token moves until it is resumed."

    return await act(request, work)


async def resume_instance(request: Request) -> Response:
    instance_id = _id(request, "instance_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.instance(instance_id).resume()
        return "Instance resumed."

    return await act(request, work)


async def set_variable(request: Request) -> Response:
    instance_id = _id(request, "instance_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        name = form.get("name", "").strip()
        if not name:
            raise BadRequest("a variable needs a name")
        value = typed_value(form.get("type", "string"), form.get("value", ""))
        engine.run(SetVariables(instance_id, {name: value}))
        return f"Variable '{name}' set ({value.type})."

    return await act(request, work)


async def retry_incident(request: Request) -> Response:
    incident_id = _id(request, "incident_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.retry_incident(incident_id)
        return "Retried: the stopped path runs again."

    return await act(request, work)


async def resolve_incident(request: Request) -> Response:
    incident_id = _id(request, "incident_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.resolve_incident(incident_id)
        return "Incident marked resolved; the token stays where it stopped."

    return await act(request, work)


async def execute_job(request: Request) -> Response:
    job_id = _id(request, "job_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        outcome = engine.execute_job(job_id)
        return f"Job run now: {outcome}."

    return await act(request, work)


async def set_job_retries(request: Request) -> Response:
    job_id = _id(request, "job_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        retries = parse_int(form.get("retries"), "retries")
        engine.set_job_retries(job_id, retries)
        return f"Job retries set to {retries}."

    return await act(request, work)


async def claim_task(request: Request) -> Response:
    task_id = _id(request, "task_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.claim_task(task_id, who.name)
        return f"Task claimed by {who.name}."

    return await act(request, work)


async def unclaim_task(request: Request) -> Response:
    task_id = _id(request, "task_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.unclaim_task(task_id)
        return "Task released."

    return await act(request, work)


async def complete_task(request: Request) -> Response:
    task_id = _id(request, "task_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        variables = json_object(form.get("variables", ""), "variables")
        engine.complete_task(task_id, variables)
        return "Task completed."

    return await act(request, work)


async def set_external_retries(request: Request) -> Response:
    task_id = _id(request, "task_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        retries = parse_int(form.get("retries"), "retries")
        engine.set_external_task_retries(task_id, retries)
        return f"External task retries set to {retries}."

    return await act(request, work)


async def unlock_external(request: Request) -> Response:
    task_id = _id(request, "task_id")

    def work(engine: Engine, who: Principal, form: Form) -> str:
        engine.unlock_external_task(task_id)
        return "Lock released: any worker may fetch the task again."

    return await act(request, work)


def _post(path: str, endpoint: object) -> Route:
    return Route(path, endpoint, methods=["POST"])  # type: ignore[arg-type]


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
