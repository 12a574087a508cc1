"""User tasks: the inbox query, one task, and completing, claiming and assigning."""

from __future__ import annotations

from functools import partial
from typing import Any

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
    path_id,
    reply,
    run,
    same_target,
)
from app.api.paging import PAGE_PARAMS, page
from app.api.schemas import STRING, VARIABLES_IN, nullable, ref, request
from app.auth import principal_of
from app.params import Query
from engine.commands.tasks import AssignUserTask, CompleteUserTask, TaskResult
from engine.errors import BadRequest
from engine.identity.accounts import Role

COMPLETE_BODY = request({"variables": VARIABLES_IN})
CLAIM_BODY = request({"user_id": STRING})
ASSIGNEE_BODY = request({"user_id": nullable(STRING)})
NO_BODY = request({})


async def list_tasks(request: Request) -> Response:
    query = Query(request.query_params)
    state = query.text("state", "Open")
    engine = engine_of(request)
    fetch = partial(
        engine.user_tasks,
        query.uuid("instance_id"),
        None if state == "any" else state,
        definition_key=query.text("definition_key"),
        assignee=query.text("assignee"),
        candidate_user=query.text("candidate_user"),
        candidate_group=query.text("candidate_group"),
    )
    found = await page(
        query,
        lambda limit, after: fetch(limit=limit, after=after),
        lambda t: (t.created_at, t.id),
    )
    return reply(views.items([views.user_task(t) for t in found.items], found.next))


async def get_task(request: Request) -> Response:
    return reply(views.user_task(await call(engine_of(request).user_task, path_id(request))))


def _result(request: Request, result: TaskResult) -> Response:
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
    command = CompleteUserTask(path_id(request), body.variables())
    return _result(request, await run(request, command))


async def claim(request: Request) -> Response:
    body = await Body.read(request, CLAIM_BODY)
    user = body.text("user_id") or principal_of(request).name
    return _result(request, await run(request, AssignUserTask(path_id(request), user)))


async def unclaim(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    command = AssignUserTask(path_id(request), None, force=True)
    return _result(request, await run(request, command))


async def set_assignee(request: Request) -> Response:
    body = await Body.read(request, ASSIGNEE_BODY)
    if "user_id" not in body.data:
        raise BadRequest("field 'user_id' is required (null to unassign)", field="user_id")
    command = AssignUserTask(path_id(request), body.text("user_id"), force=True)
    return _result(request, await run(request, command))


_RESULT = {200: Reply("The task's instance after the command", ref("TaskResult"))}


def _command(path: str, handler: Handler, summary: str, body: dict[str, Any]) -> Op:
    return Op("POST", path, handler, summary, Role.OPERATOR, body=body, replies=_RESULT)


operations = [
    Op(
        "GET",
        "/user-tasks",
        list_tasks,
        "Query user tasks (open ones unless `state` says otherwise), with keyset pagination",
        Role.VIEWER,
        query=(
            Param("instance_id", STRING),
            Param("state", STRING, "Open (default), Completed, Retired, or any"),
            Param("definition_key", STRING),
            Param("assignee", STRING),
            Param("candidate_user", STRING),
            Param("candidate_group", STRING),
            *PAGE_PARAMS,
        ),
        replies={200: Reply("A page of user tasks, oldest first", ref("UserTaskPage"))},
    ),
    Op(
        "GET",
        "/user-tasks/{id}",
        get_task,
        "One user task",
        Role.VIEWER,
        replies={200: Reply("The task", ref("UserTask"))},
    ),
    _command(
        "/user-tasks/{id}/complete",
        complete,
        "Complete the task; its token moves on",
        COMPLETE_BODY,
    ),
    _command(
        "/user-tasks/{id}/claim",
        claim,
        "Claim the task for `user_id` (default: the caller); 409 if someone else holds it",
        CLAIM_BODY,
    ),
    _command("/user-tasks/{id}/unclaim", unclaim, "Release the task", NO_BODY),
    _command(
        "/user-tasks/{id}/assignee",
        set_assignee,
        "Set the assignee outright (null: nobody)",
        ASSIGNEE_BODY,
    ),
]
