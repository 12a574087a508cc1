"""User tasks: the inbox query, one task, and completing, claiming and assigning."""

from __future__ import annotations

from functools import partial

from starlette.requests import Request
from starlette.responses import Response

from app import reads
from app.api import views
from app.api.body import Body
from app.api.http import Answer, Op, Param, Reply, engine_of, get_one, on_one, path_id
from app.api.paging import PAGE_PARAMS, created, listed
from app.api.schemas import NO_BODY, STRING, VARIABLES_IN, nullable, ref, request
from app.auth import principal_of
from app.params import Query
from engine.commands.tasks import AssignUserTask, CompleteUserTask, TaskResult
from engine.errors import BadRequest
from engine.queries import work

COMPLETE_BODY = request({"variables": VARIABLES_IN})
CLAIM_BODY = request({"user_id": STRING})
ASSIGNEE_BODY = request({"user_id": nullable(STRING)})


async def list_tasks(request: Request) -> Response:
    query = Query(request.query_params)
    state = query.text("state", "Open")
    fetch = partial(
        work.user_tasks,
        engine_of(request),
        instance_id=query.uuid("instance_id"),
        state=None if state == "any" else state,
        definition_key=query.text("definition_key"),
        assignee=query.text("assignee"),
        candidate_user=query.text("candidate_user"),
        candidate_group=query.text("candidate_group"),
    )
    return await listed(query, fetch, created, views.user_task)


def _claim(request: Request, body: Body) -> AssignUserTask:
    user = body.text("user_id") or principal_of(request).name
    return AssignUserTask(path_id(request), user)


def _set_assignee(request: Request, body: Body) -> AssignUserTask:
    if "user_id" not in body.data:
        raise BadRequest("field 'user_id' is required (null to unassign)", field="user_id")
    return AssignUserTask(path_id(request), body.text("user_id"), force=True)


RESULT = Answer[TaskResult](
    {"task_id": "task_id", "instance_id": "instance_id", "instance_state": "instance_state"},
    "TaskResult",
    "The task's instance after the command",
)

operations = [
    Op(
        "GET",
        "/user-tasks",
        list_tasks,
        "Query user tasks (open ones unless `state` says otherwise), with keyset pagination",
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
    get_one(
        __name__,
        "get_task",
        "/user-tasks/{id}",
        "One user task",
        reads.user_task,
        views.user_task,
        "UserTask",
        "The task",
    ),
    on_one(
        __name__,
        "complete",
        "/user-tasks/{id}/complete",
        "Complete the task; its token moves on",
        COMPLETE_BODY,
        lambda request, body: CompleteUserTask(path_id(request), body.variables()),
        RESULT,
    ),
    on_one(
        __name__,
        "claim",
        "/user-tasks/{id}/claim",
        "Claim the task for `user_id` (default: the caller); 409 if someone else holds it",
        CLAIM_BODY,
        _claim,
        RESULT,
    ),
    on_one(
        __name__,
        "unclaim",
        "/user-tasks/{id}/unclaim",
        "Release the task",
        NO_BODY,
        lambda request, _: AssignUserTask(path_id(request), None, force=True),
        RESULT,
    ),
    on_one(
        __name__,
        "set_assignee",
        "/user-tasks/{id}/assignee",
        "Set the assignee outright (null: nobody)",
        ASSIGNEE_BODY,
        _set_assignee,
        RESULT,
    ),
]
