"""External tasks: workers fetch and lock work (long polling), then report back."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from app.api import views
from app.api.body import Body
from app.api.http import (
    Handler,
    Op,
    Param,
    Reply,
    call,
    engine_of,
    idempotency,
    path_id,
    reply,
    run,
    same_target,
)
from app.api.paging import PAGE_PARAMS, page
from app.api.schemas import BOOLEAN, INTEGER, STRING, VARIABLES_IN, array, ref, request
from app.params import Query
from engine.commands.external_tasks import (
    CompleteExternalTask,
    ExtendLock,
    ExternalTaskBpmnError,
    ExternalTaskResult,
    FailExternalTask,
    FetchAndLock,
    SetExternalTaskRetries,
    TopicRequest,
    UnlockExternalTask,
)
from engine.core.settings import EngineSettings
from engine.errors import BadRequest
from engine.identity.accounts import Role
from engine.loops import fetching

MAX_TIMEOUT_MS = 60_000

TOPIC = request(
    {"topic": STRING, "lock_duration_ms": INTEGER, "variables": array(STRING)},
    required=("topic", "lock_duration_ms"),
)
FETCH_BODY = request(
    {
        "worker_id": STRING,
        "max_tasks": INTEGER,
        "use_priority": BOOLEAN,
        "topics": array(TOPIC),
        "timeout_ms": {
            **INTEGER,
            "description": f"wait up to this long for work (at most {MAX_TIMEOUT_MS})",
        },
    },
    required=("worker_id", "topics"),
)
COMPLETE_BODY = request({"worker_id": STRING, "variables": VARIABLES_IN}, required=("worker_id",))
FAILURE_BODY = request(
    {
        "worker_id": STRING,
        "error_message": STRING,
        "error_details": STRING,
        "retries": INTEGER,
        "retry_timeout_ms": INTEGER,
    },
    required=("worker_id", "error_message"),
)
BPMN_ERROR_BODY = request(
    {
        "worker_id": STRING,
        "error_code": STRING,
        "error_message": STRING,
        "variables": VARIABLES_IN,
    },
    required=("worker_id", "error_code"),
)
EXTEND_BODY = request(
    {"worker_id": STRING, "new_duration_ms": INTEGER}, required=("worker_id", "new_duration_ms")
)
RETRIES_BODY = request({"retries": INTEGER}, required=("retries",))
NO_BODY = request({})


def _settings(request: Request) -> EngineSettings:
    return engine_of(request).executor.settings


def _topics(body: Body, settings: EngineSettings) -> tuple[TopicRequest, ...]:
    topics = tuple(
        TopicRequest(
            entry.required_text("topic"),
            entry.integer("lock_duration_ms", 0, minimum=1, maximum=settings.max_lock_duration_ms),
            entry.strings("variables"),
        )
        for entry in body.objects("topics", TOPIC)
    )
    if not topics:
        raise BadRequest("field 'topics' must list at least one topic", field="topics")
    return topics


async def fetch_and_lock(request: Request) -> Response:
    body = await Body.read(request, FETCH_BODY)
    settings = _settings(request)
    command = FetchAndLock(
        worker_id=body.required_text("worker_id"),
        max_tasks=body.integer("max_tasks", 1, minimum=1, maximum=settings.max_fetch_tasks),
        topics=_topics(body, settings),
        use_priority=body.boolean("use_priority", True),
        roll_back_if_empty=True,
    )
    timeout = min(body.integer("timeout_ms", 0, minimum=0), MAX_TIMEOUT_MS) / 1000
    locked = await fetching.fetch_and_lock_async(
        engine_of(request),
        command,
        timeout,
        idempotency_key=await idempotency(request, command),
        gone=request.is_disconnected,
        run_blocking=run_in_threadpool,
    )
    return reply(views.items([views.locked_task(t) for t in locked]))


async def list_tasks(request: Request) -> Response:
    query = Query(request.query_params)
    engine = engine_of(request)
    fetch = partial(
        engine.external_tasks,
        topic=query.text("topic"),
        instance_id=query.uuid("instance_id"),
        worker_id=query.text("worker_id"),
        locked=query.flag("locked", digits=True),
    )
    found = await page(
        query,
        lambda limit, after: fetch(limit=limit, after=after),
        lambda t: (t.created_at, t.id),
    )
    return reply(views.items([views.external_task(t) for t in found.items], found.next))


async def get_task(request: Request) -> Response:
    return reply(
        views.external_task(await call(engine_of(request).external_task, path_id(request)))
    )


def _result(request: Request, result: ExternalTaskResult) -> Response:
    same_target(request, str(path_id(request)), result.task_id)
    return reply(
        {
            "task_id": result.task_id,
            "instance_id": result.instance_id,
            "instance_state": result.instance_state,
        }
    )


async def complete(request: Request) -> Response:
    body = await Body.read(request, COMPLETE_BODY)
    command = CompleteExternalTask(
        path_id(request), body.required_text("worker_id"), body.variables()
    )
    return _result(request, await run(request, command))


async def failure(request: Request) -> Response:
    body = await Body.read(request, FAILURE_BODY)
    command = FailExternalTask(
        path_id(request),
        body.required_text("worker_id"),
        body.required_text("error_message"),
        body.text("error_details"),
        body.integer("retries", 0, minimum=0),
        body.integer(
            "retry_timeout_ms", 0, minimum=0, maximum=_settings(request).max_retry_timeout_ms
        ),
    )
    return _result(request, await run(request, command))


async def bpmn_error(request: Request) -> Response:
    body = await Body.read(request, BPMN_ERROR_BODY)
    command = ExternalTaskBpmnError(
        path_id(request),
        body.required_text("worker_id"),
        body.required_text("error_code"),
        body.text("error_message") or "",
        body.variables(),
    )
    return _result(request, await run(request, command))


async def extend_lock(request: Request) -> Response:
    body = await Body.read(request, EXTEND_BODY)
    command = ExtendLock(
        path_id(request),
        body.required_text("worker_id"),
        body.integer(
            "new_duration_ms", 0, minimum=1, maximum=_settings(request).max_lock_duration_ms
        ),
    )
    return _result(request, await run(request, command))


async def unlock(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, UnlockExternalTask(path_id(request))))


async def set_retries(request: Request) -> Response:
    body = await Body.read(request, RETRIES_BODY)
    command = SetExternalTaskRetries(path_id(request), body.integer("retries", 0, minimum=0))
    return _result(request, await run(request, command))


_RESULT = {200: Reply("The task's instance after the report", ref("ExternalTaskResult"))}


def _report(path: str, handler: Handler, summary: str, body: dict[str, Any]) -> Op:
    return Op("POST", path, handler, summary, Role.OPERATOR, body=body, replies=_RESULT)


operations = [
    Op(
        "GET",
        "/external-tasks",
        list_tasks,
        "Query open external tasks, oldest first, with keyset pagination",
        Role.VIEWER,
        query=(
            Param("topic", STRING),
            Param("instance_id", STRING),
            Param("worker_id", STRING),
            Param("locked", BOOLEAN, "true: locked by a worker now; false: available"),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of open external tasks", ref("ExternalTaskPage"))},
    ),
    Op(
        "POST",
        "/external-tasks/fetch-and-lock",
        fetch_and_lock,
        "Lock up to `max_tasks` tasks of the topics for the worker, waiting up to `timeout_ms` "
        "for work to appear",
        Role.OPERATOR,
        body=FETCH_BODY,
        body_required=True,
        replies={200: Reply("The locked tasks (maybe none)", ref("LockedExternalTaskList"))},
    ),
    Op(
        "GET",
        "/external-tasks/{id}",
        get_task,
        "One external task",
        Role.VIEWER,
        replies={200: Reply("The task", ref("ExternalTask"))},
    ),
    _report(
        "/external-tasks/{id}/complete",
        complete,
        "Complete a task the worker holds",
        COMPLETE_BODY,
    ),
    _report(
        "/external-tasks/{id}/failure",
        failure,
        "Report a failure: with retries left the task is fetched again after "
        "`retry_timeout_ms`; with none an incident opens",
        FAILURE_BODY,
    ),
    _report(
        "/external-tasks/{id}/bpmn-error",
        bpmn_error,
        "Throw a BPMN error at the task (a business outcome a boundary event may catch)",
        BPMN_ERROR_BODY,
    ),
    _report(
        "/external-tasks/{id}/extend-lock",
        extend_lock,
        "Extend the worker's lock to `new_duration_ms` from now",
        EXTEND_BODY,
    ),
    _report("/external-tasks/{id}/unlock", unlock, "Release the lock", NO_BODY),
    _report(
        "/external-tasks/{id}/retries",
        set_retries,
        "Set retries; above zero a failed task may be fetched again and its incident resolves",
        RETRIES_BODY,
    ),
]
