"""External tasks: fetch-and-lock with long polling, the worker's reports, queries.

A long poll is the engine's waiting fetch (engine/loops/fetching.py): it waits without holding a
thread, and gives up early when the client has gone. Its statements run in worker threads of their
own
limiter, so that many waiting workers cannot starve other requests of threads.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any
from uuid import UUID

import anyio
import anyio.to_thread
from starlette.responses import Response

from app.camunda import dto
from app.camunda.dto import Json
from app.camunda.errors import CamundaError, invalid_request, rest_error, suspended_error
from app.camunda.http import Call, Endpoint, json_response, listing, no_content, only
from app.camunda.variables import stored_to_dto, to_typed_map
from app.params import as_uuid
from app.shutdown import Shutdown
from engine.api import Engine
from engine.commands.external_tasks import FetchAndLock, TopicRequest
from engine.errors import (
    BadRequest,
    Conflict,
    InterlockError,
    InvariantViolation,
    InvariantViolationKind,
    NotFound,
    Suspended,
)
from engine.language.json_input import INT64_MAX, INT64_MIN
from engine.loops import fetching
from engine.queries.camunda import external_tasks as external_task_reads
from engine.queries.camunda.common import CamundaPage

MAX_ASYNC_RESPONSE_MS = 1_800_000
LONG_POLL_THREADS = 100
UNSUPPORTED_TOPIC_FILTERS = ("processDefinitionVersionTag",)
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


def _limiter() -> anyio.CapacityLimiter:
    loop = asyncio.get_running_loop()
    found = _limiters.get(loop)
    if found is None:
        found = _limiters[loop] = anyio.CapacityLimiter(LONG_POLL_THREADS)
    return found


def _topics(call: Call, max_lock_ms: int) -> list[TopicRequest]:
    topics = call.field("topics", [])
    if not isinstance(topics, list):
        raise invalid_request("'topics' must be a list")
    requests = []
    for topic in topics:
        if not isinstance(topic, dict) or not isinstance(topic.get("topicName"), str):
            raise invalid_request("every topic needs a 'topicName'")
        name = topic["topicName"]
        for key in UNSUPPORTED_TOPIC_FILTERS:
            if topic.get(key) not in (None, "", [], {}):
                raise invalid_request(
                    f"topic '{name}': the '{key}' filter is not supported by Interlock"
                )
        duration = topic.get("lockDuration")
        if isinstance(duration, bool) or not isinstance(duration, int | float):
            raise invalid_request(f"topic '{name}' needs a numeric 'lockDuration'")
        if not 0 < duration <= max_lock_ms:
            raise invalid_request(
                f"topic '{name}': 'lockDuration' must be from 1 to {max_lock_ms} milliseconds, "
                f"not {duration!r}"
            )
        names = topic.get("variables")
        if names is not None and (
            not isinstance(names, list) or not all(isinstance(n, str) for n in names)
        ):
            raise invalid_request(f"topic '{name}': 'variables' must be a list of names")
        tenant_ids = topic.get("tenantIdIn")
        if tenant_ids is not None and (
            not isinstance(tenant_ids, list) or not all(isinstance(t, str) for t in tenant_ids)
        ):
            raise invalid_request(f"topic '{name}': 'tenantIdIn' must be a list of tenant ids")
        without = topic.get("withoutTenantId", False)
        if not isinstance(without, bool):
            raise invalid_request(f"topic '{name}': 'withoutTenantId' must be true or false")
        requests.append(
            TopicRequest(
                name,
                int(duration),
                tuple(names) if names is not None else None,
                tuple(tenant_ids) if tenant_ids else None,
                without,
                # As Camunda's: the list, when given, wins over the single one.
                _texts(topic, "processDefinitionIdIn") or _texts(topic, "processDefinitionId"),
                _texts(topic, "processDefinitionKeyIn") or _texts(topic, "processDefinitionKey"),
                _text(topic, "businessKey"),
                _variables(topic),
            )
        )
    return requests


def _text(topic: dict[str, Any], key: str) -> str | None:
    value = topic.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid_request(f"topic '{topic['topicName']}': '{key}' must be a string")
    return value


def _texts(topic: dict[str, Any], key: str) -> tuple[str, ...] | None:
    """A topic's filter naming one (`...Id`) or several (`...In`) values; None: not given."""
    value = topic.get(key)
    if value is None:
        return None
    if key.endswith("In"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid_request(f"topic '{topic['topicName']}': '{key}' must be a list of ids")
        return tuple(value)
    return (t,) if (t := _text(topic, key)) is not None else None


def _variables(topic: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    """`processVariables`: names and the values their instance variables must equal."""
    value = topic.get("processVariables")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid_request(
            f"topic '{topic['topicName']}': 'processVariables' must be an object of values"
        )
    return tuple(value.items()) or None


def _deserialized_topics(call: Call) -> frozenset[str]:
    """The topics whose `deserializeValues` is true: their Object values go out as JSON, the
    others' as JSON text (Camunda's default for a worker is false)."""
    topics = call.field("topics") or []
    named: set[str] = set()
    for topic in topics if isinstance(topics, list) else []:
        if isinstance(topic, dict) and isinstance(topic.get("topicName"), str):
            flag = topic.get("deserializeValues", False)
            if not isinstance(flag, bool):
                raise invalid_request(
                    f"topic '{topic['topicName']}': 'deserializeValues' must be true or false"
                )
            if flag:
                named.add(topic["topicName"])
    return frozenset(named)


def _locked(
    engine: Engine, found: list[dict[str, Any]], deserialized: frozenset[str]
) -> list[Json]:
    details = (
        external_task_reads.locked_task_details(engine, [UUID(t["id"]) for t in found])
        if found
        else {}
    )
    return [
        dto.locked_external_task(
            task,
            {
                name: stored_to_dto(
                    value["type"], value["value"], serialized=task["topic"] not in deserialized
                )
                for name, value in task["variables"].items()
            },
            details.get(UUID(task["id"])),
        )
        for task in found
    ]


async def fetch_and_lock(call: Call) -> Response:
    worker_id = call.body_text("workerId")
    if not worker_id:
        raise invalid_request("workerId is null")
    settings = call.engine.executor.settings
    max_tasks = call.body_int("maxTasks", 1, minimum=0, maximum=settings.max_fetch_tasks) or 0
    use_priority = call.body_flag("usePriority", False)
    timeout_ms = call.body_int("asyncResponseTimeout", 0, maximum=INT64_MAX) or 0
    if timeout_ms > MAX_ASYNC_RESPONSE_MS:
        raise invalid_request(
            "The asynchronous response timeout cannot be set to a value greater than "
            f"{MAX_ASYNC_RESPONSE_MS} milliseconds"
        )
    topics = _topics(call, settings.max_lock_duration_ms)
    deserialized = _deserialized_topics(call)
    shutdown: Shutdown | None = getattr(call.request.app.state, "shutdown", None)
    if not topics or max_tasks < 1 or (shutdown is not None and shutdown.draining):
        # A server shutting down locks nothing more: the worker asks again, elsewhere.
        return json_response([])
    limiter = _limiter()

    async def gone() -> bool:
        """The client left, or the server began shutting down: end a long poll empty."""
        return (shutdown is not None and shutdown.draining) or await call.request.is_disconnected()

    async def in_thread(fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn, limiter=limiter)

    command = FetchAndLock(worker_id, max_tasks, tuple(topics), use_priority)
    try:
        found = await fetching.fetch_and_lock_async(
            call.engine,
            command,
            max(timeout_ms, 0) / 1000,
            gone=gone,
            run_blocking=in_thread,
        )
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    return json_response(await in_thread(lambda: _locked(call.engine, found, deserialized)))


# -- reports --------------------------------------------------------------------------------------


def _missing(task_id: str) -> CamundaError:
    return rest_error(404, f"External task with id {task_id} does not exist")


def _report(call: Call, action: str, run: Callable[[str], Any]) -> Response:
    """Run a worker's report and answer as Camunda does: 204, 404 for a task that is gone, 400
    (with X-Invariant-Violation) when another worker holds it."""
    task_id = call.path["id"]
    worker_id = call.body_text("workerId")
    if not worker_id:
        raise invalid_request("workerId is null")
    try:
        run(worker_id)
    except NotFound as exc:
        raise _missing(task_id) from exc
    except InvariantViolation as exc:
        if exc.kind is not InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT:
            raise rest_error(500, exc.message, exc) from exc
        holder = _holder(call, task_id)
        refused = action.format(id=task_id, worker=worker_id)
        if holder == worker_id:
            # The holder of a task with an incident, after its lock expired.
            message = f"{refused}'. Its lock on the task has expired."
        else:
            message = f"{refused}'. It is locked by worker '{holder}'."
        raise rest_error(400, message, exc) from exc
    except Suspended as exc:
        raise suspended_error(f"ExternalTask with id '{task_id}': {exc.message}") from exc
    except Conflict as exc:
        if "task_id" in exc.detail:
            raise _missing(task_id) from exc
        raise rest_error(500, exc.message, exc) from exc
    except BadRequest as exc:
        raise rest_error(400, exc.message, exc) from exc
    except InterlockError as exc:
        raise rest_error(500, exc.message, exc) from exc
    return no_content()


def _holder(call: Call, task_id: str) -> str | None:
    rows = external_task_reads.external_tasks(
        call.engine, CamundaPage(), call.engine.clock(), task_id=as_uuid(task_id)
    )
    assert isinstance(rows, list)
    return rows[0].worker_id if rows else None


def complete(call: Call) -> Response:
    variables = to_typed_map(call.field("variables"))
    local_variables = to_typed_map(call.field("localVariables"), "localVariables")
    return _report(
        call,
        "External Task {id} cannot be completed by worker '{worker}",
        lambda worker: call.engine.complete_external_task(
            call.path["id"], worker, variables, local_variables
        ),
    )


def failure(call: Call) -> Response:
    retries = call.body_int("retries", 0) or 0
    longest = call.engine.executor.settings.max_retry_timeout_ms
    retry_timeout = call.body_int("retryTimeout", 0, minimum=0, maximum=longest) or 0
    message = call.body_text("errorMessage") or ""
    details = call.body_text("errorDetails")
    return _report(
        call,
        "Failure of External Task {id} cannot be reported by worker '{worker}",
        lambda worker: call.engine.fail_external_task(
            call.path["id"],
            worker,
            message,
            details=details,
            retries=retries,
            retry_timeout_ms=retry_timeout,
        ),
    )


def bpmn_error(call: Call) -> Response:
    code = call.body_text("errorCode")
    if not code:
        raise invalid_request("errorCode is null")
    message = call.body_text("errorMessage") or ""
    variables = to_typed_map(call.field("variables"))
    return _report(
        call,
        "Bpmn error of External Task {id} cannot be reported by worker '{worker}",
        lambda worker: call.engine.external_task_bpmn_error(
            call.path["id"], worker, code, message, variables
        ),
    )


def extend_lock(call: Call) -> Response:
    longest = call.engine.executor.settings.max_lock_duration_ms
    duration = call.body_int("newDuration", 0, minimum=0, maximum=longest) or 0
    return _report(
        call,
        "Lock of External Task {id} cannot be extended by worker '{worker}",
        lambda worker: call.engine.extend_lock(call.path["id"], worker, duration),
    )


def unlock(call: Call) -> Response:
    task_id = call.path["id"]
    try:
        call.engine.unlock_external_task(task_id)
    except (NotFound, Conflict) as exc:
        raise _missing(task_id) from exc
    return no_content()


def set_retries(call: Call) -> Response:
    task_id = call.path["id"]
    retries = call.body_int("retries")
    if retries is None:
        raise invalid_request("The number of retries cannot be null.")
    try:
        call.engine.set_external_task_retries(task_id, retries)
    except (NotFound, Conflict) as exc:
        raise _missing(task_id) from exc
    except BadRequest as exc:
        raise invalid_request(exc.message) from exc
    return no_content()


# -- queries --------------------------------------------------------------------------------------


def _query(
    call: Call, *, task_id: UUID | None = None, count: bool = False
) -> list[external_task_reads.ExternalTaskRow] | int:
    locked = call.flag("locked")
    if call.flag("notLocked"):
        locked = False
    retries_left = call.flag("withRetriesLeft")
    if call.flag("noRetriesLeft"):
        retries_left = False
    suspended = call.flag("suspended")
    if call.flag("active"):
        suspended = False
    priority_min = call.integer("priorityHigherThanOrEquals", minimum=INT64_MIN, maximum=INT64_MAX)
    priority_max = call.integer("priorityLowerThanOrEquals", minimum=INT64_MIN, maximum=INT64_MAX)
    return external_task_reads.external_tasks(
        call.engine,
        call.page(external_task_reads.EXTERNAL_TASK_SORT),
        call.engine.clock(),
        task_id=task_id or call.uuid("externalTaskId"),
        task_ids=call.uuids("externalTaskIdIn"),
        topic=call.text("topicName"),
        worker_id=call.text("workerId"),
        locked=locked,
        with_retries_left=retries_left,
        lock_expires_after=call.date("lockExpirationAfter"),
        lock_expires_before=call.date("lockExpirationBefore"),
        node_id=call.text("activityId"),
        node_ids=call.csv("activityIdIn"),
        execution_id=call.uuid("executionId"),
        instance_id=call.uuid("processInstanceId"),
        instance_ids=call.uuids("processInstanceIdIn"),
        definition_id=call.text("processDefinitionId"),
        suspended=suspended,
        min_priority=priority_min,
        max_priority=priority_max,
        tenant_ids=call.csv("tenantIdIn"),
        without_tenant=call.flag("withoutTenantId"),
        count=count,
    )


def _one(call: Call) -> external_task_reads.ExternalTaskRow:
    """The path's task, or Camunda's 404."""
    task_id = call.path["id"]
    row = only(call, _query, task_id=as_uuid(task_id))
    if row is None:
        raise _missing(task_id)
    return row


def get_external_task(call: Call) -> Response:
    return json_response(dto.external_task(_one(call)))


def error_details(call: Call) -> Response:
    """The full text of the task's last failure, as its worker reported it (none: 204)."""
    details = _one(call).error_details
    if details is None:
        return Response(status_code=204)
    return Response(details, media_type="text/plain")


endpoints = [
    # Narrowed to the tasks the worker may lock (engine/store/external_tasks.py), never refused.
    Endpoint("/external-task/fetchAndLock", "POST", fetch_and_lock, body="json"),
    Endpoint("/external-task/{id}/complete", "POST", complete, body="json"),
    Endpoint("/external-task/{id}/failure", "POST", failure, body="json"),
    Endpoint("/external-task/{id}/bpmnError", "POST", bpmn_error, body="json"),
    Endpoint("/external-task/{id}/extendLock", "POST", extend_lock, body="json"),
    Endpoint("/external-task/{id}/unlock", "POST", unlock),
    Endpoint("/external-task/{id}/retries", "PUT", set_retries, body="json"),
    Endpoint("/external-task/{id}/errorDetails", "GET", error_details),
    *listing("/external-task", _query, dto.external_task),
    Endpoint("/external-task/{id}", "GET", get_external_task),
]
