"""External tasks: workers fetch and lock work (long polling), then report back."""

from __future__ import annotations

from functools import partial

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from app import reads
from app.api import views
from app.api.body import Body
from app.api.http import (
    Answer,
    Op,
    Param,
    Reply,
    engine_of,
    get_one,
    idempotency,
    on_one,
    path_id,
    reply,
)
from app.api.paging import PAGE_PARAMS, created, listed
from app.api.schemas import (
    BOOLEAN,
    INTEGER,
    NO_BODY,
    RETRIES_BODY,
    STRING,
    VARIABLES_IN,
    array,
    ref,
    request,
)
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
from engine.loops import fetching
from engine.queries import work

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
        work.external_tasks,
        engine,
        topic=query.text("topic"),
        instance_id=query.uuid("instance_id"),
        worker_id=query.text("worker_id"),
        locked=query.flag("locked", digits=True),
        now=engine.clock(),
    )
    return await listed(query, fetch, created, views.external_task)


def _failure(request: Request, body: Body) -> FailExternalTask:
    return FailExternalTask(
        path_id(request),
        body.required_text("worker_id"),
        body.required_text("error_message"),
        body.text("error_details"),
        body.integer("retries", 0, minimum=0),
        body.integer(
            "retry_timeout_ms", 0, minimum=0, maximum=_settings(request).max_retry_timeout_ms
        ),
    )


def _bpmn_error(request: Request, body: Body) -> ExternalTaskBpmnError:
    return ExternalTaskBpmnError(
        path_id(request),
        body.required_text("worker_id"),
        body.required_text("error_code"),
        body.text("error_message") or "",
        body.variables(),
    )


def _extend_lock(request: Request, body: Body) -> ExtendLock:
    return ExtendLock(
        path_id(request),
        body.required_text("worker_id"),
        body.integer(
            "new_duration_ms", 0, minimum=1, maximum=_settings(request).max_lock_duration_ms
        ),
    )


RESULT = Answer[ExternalTaskResult](
    {"task_id": "task_id", "instance_id": "instance_id", "instance_state": "instance_state"},
    "ExternalTaskResult",
    "The task's instance after the report",
)

operations = [
    Op(
        "GET",
        "/external-tasks",
        list_tasks,
        "Query open external tasks, oldest first, with keyset pagination",
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
        body=FETCH_BODY,
        body_required=True,
        replies={200: Reply("The locked tasks (maybe none)", ref("LockedExternalTaskList"))},
    ),
    get_one(
        __name__,
        "get_task",
        "/external-tasks/{id}",
        "One external task",
        reads.external_task,
        views.external_task,
        "ExternalTask",
        "The task",
    ),
    on_one(
        __name__,
        "complete",
        "/external-tasks/{id}/complete",
        "Complete a task the worker holds",
        COMPLETE_BODY,
        lambda request, body: CompleteExternalTask(
            path_id(request), body.required_text("worker_id"), body.variables()
        ),
        RESULT,
    ),
    on_one(
        __name__,
        "failure",
        "/external-tasks/{id}/failure",
        "Report a failure: with retries left the task is fetched again after "
        "`retry_timeout_ms`; with none an incident opens",
        FAILURE_BODY,
        _failure,
        RESULT,
    ),
    on_one(
        __name__,
        "bpmn_error",
        "/external-tasks/{id}/bpmn-error",
        "Throw a BPMN error at the task (a business outcome a boundary event may catch)",
        BPMN_ERROR_BODY,
        _bpmn_error,
        RESULT,
    ),
    on_one(
        __name__,
        "extend_lock",
        "/external-tasks/{id}/extend-lock",
        "Extend the worker's lock to `new_duration_ms` from now",
        EXTEND_BODY,
        _extend_lock,
        RESULT,
    ),
    on_one(
        __name__,
        "unlock",
        "/external-tasks/{id}/unlock",
        "Release the lock",
        NO_BODY,
        lambda request, _: UnlockExternalTask(path_id(request)),
        RESULT,
    ),
    on_one(
        __name__,
        "set_retries",
        "/external-tasks/{id}/retries",
        "Set retries; above zero a failed task may be fetched again and its incident resolves",
        RETRIES_BODY,
        lambda request, body: SetExternalTaskRetries(
            path_id(request), body.integer("retries", 0, minimum=0)
        ),
        RESULT,
    ),
]
