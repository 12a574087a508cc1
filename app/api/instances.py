"""Process instances: the filtered, paginated list; one instance with its tokens, history and
variables; and the commands on a whole instance."""

from __future__ import annotations

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
from app.api.schemas import BOOLEAN, INTEGER, STRING, TIME, VARIABLES_IN, ref, request
from app.params import Query
from engine.api import InstanceHandle
from engine.commands.instances import (
    CancelInstance,
    InstanceResult,
    ResumeInstance,
    SetVariables,
    SuspendInstance,
)
from engine.errors import BadRequest
from engine.identity.accounts import Role
from engine.language.json_input import JsonSyntaxError, loads
from engine.queries.instances import MAX_LIMIT, InstanceFilter

SET_VARIABLES_BODY = request({"variables": VARIABLES_IN}, required=("variables",))
NO_BODY = request({})


def variable_filter(text: str) -> tuple[str, Any]:
    """`name:value`; the value is JSON when it parses as JSON, else the text itself. JSON that
    holds what no variable can (NaN, Infinity, 1e999, ...) is a 400."""
    name, sep, raw = text.partition(":")
    if not sep or not name:
        raise BadRequest(f"query parameter 'var' expects name:value, got '{text}'", field="var")
    try:
        value: Any = loads(raw)
    except JsonSyntaxError:
        value = raw
    except BadRequest as exc:
        problem = exc.message.removeprefix("the value ")
        raise BadRequest(
            f"query parameter 'var': the value of '{name}' {problem}", field="var"
        ) from None
    return name, value


def instance_filter(query: Query) -> InstanceFilter:
    return InstanceFilter(
        definition_key=query.text("definition_key"),
        definition_id=query.text("definition_id"),
        version=query.integer("version", minimum=0),
        state=query.text("state"),
        business_key=query.text("business_key"),
        has_incident=query.flag("has_incident", digits=True),
        retrying=query.flag("retrying", digits=True),
        started_after=query.date("started_after", offset_required=True),
        started_before=query.date("started_before", offset_required=True),
        variables=tuple(variable_filter(v) for v in query.texts("var")),
        root_only=query.flag("root_only", digits=True),
        super_instance_id=query.uuid("called_by"),
    )


async def list_instances(request: Request) -> Response:
    query = Query(request.query_params)
    where = instance_filter(query)
    limit = query.integer("limit", 50, minimum=1, maximum=MAX_LIMIT)
    page = await call(
        engine_of(request).list_instances, where, limit=limit, after=query.text("after")
    )
    return reply(views.items([views.instance(i) for i in page.items], page.next))


async def _handle(request: Request) -> InstanceHandle:
    return await call(engine_of(request).instance, path_id(request))


async def get_instance(request: Request) -> Response:
    handle = InstanceHandle(engine_of(request), path_id(request))
    return reply(views.instance(await call(handle.info)))


async def get_tokens(request: Request) -> Response:
    handle = await _handle(request)
    return reply(views.items([views.token(t) for t in await call(handle.tokens)]))


async def get_history(request: Request) -> Response:
    handle = await _handle(request)
    return reply(views.items([views.track(t) for t in await call(handle.history)]))


async def get_variables(request: Request) -> Response:
    handle = await _handle(request)
    return reply(views.variables(await call(handle.typed_variables)))


def _result(request: Request, result: InstanceResult) -> Response:
    same_target(request, str(path_id(request)), result.instance_id)
    return reply(
        {"id": result.instance_id, "definition_id": result.definition_id, "state": result.state}
    )


async def set_variables(request: Request) -> Response:
    body = await Body.read(request, SET_VARIABLES_BODY)
    values = body.variables()
    if not values:
        raise BadRequest("field 'variables' must name at least one variable", field="variables")
    return _result(request, await run(request, SetVariables(path_id(request), values)))


async def cancel(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, CancelInstance(path_id(request))))


async def suspend(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, SuspendInstance(path_id(request))))


async def resume(request: Request) -> Response:
    await Body.read(request, NO_BODY)
    return _result(request, await run(request, ResumeInstance(path_id(request))))


LIST_PARAMS = (
    Param("definition_key", STRING, "process key"),
    Param("definition_id", STRING, "exact definition id"),
    Param("version", INTEGER, "definition version (with definition_key)"),
    Param("state", STRING, "Created, Active, Suspended, Completed, Terminating or Terminated"),
    Param("business_key", STRING),
    Param("has_incident", BOOLEAN, "true: with an open incident; false: without"),
    Param(
        "retrying",
        BOOLEAN,
        "true: a job or external task failed and has retries left; false: none has",
    ),
    Param("started_after", TIME, "started at or after this time"),
    Param("started_before", TIME, "started before this time"),
    Param(
        "var",
        STRING,
        "name:value, repeatable: a top-level variable equals the value (JSON, else text)",
    ),
    Param("root_only", BOOLEAN, "true: only instances nobody called; false: only called ones"),
    Param("called_by", STRING, "only the instances this instance called (an instance id)"),
    Param("limit", INTEGER, f"page size, 1 to {MAX_LIMIT} (default 50)"),
    Param("after", STRING, "the `next` cursor of the previous page"),
)
_RESULT = {200: Reply("The instance after the command", ref("InstanceResult"))}


def _command(path: str, handler: Handler, summary: str, body: dict[str, Any] = NO_BODY) -> Op:
    return Op("POST", path, handler, summary, Role.OPERATOR, body=body, replies=_RESULT)


operations = [
    Op(
        "GET",
        "/instances",
        list_instances,
        "List instances, newest first, with filters and keyset pagination",
        Role.VIEWER,
        query=LIST_PARAMS,
        replies={200: Reply("A page of instances", ref("InstancePage"))},
    ),
    Op(
        "GET",
        "/instances/{id}",
        get_instance,
        "One instance",
        Role.VIEWER,
        replies={200: Reply("The instance", ref("Instance"))},
    ),
    Op(
        "GET",
        "/instances/{id}/tokens",
        get_tokens,
        "Where the instance's live tokens are",
        Role.VIEWER,
        replies={200: Reply("Live tokens", ref("TokenList"))},
    ),
    Op(
        "GET",
        "/instances/{id}/history",
        get_history,
        "Every track's path, with fork and merge lineage",
        Role.VIEWER,
        replies={200: Reply("Tracks", ref("TrackList"))},
    ),
    Op(
        "GET",
        "/instances/{id}/variables",
        get_variables,
        "The instance's variables",
        Role.VIEWER,
        replies={200: Reply("Typed variables", ref("Variables"))},
    ),
    _command(
        "/instances/{id}/variables",
        set_variables,
        "Set (create or overwrite) variables",
        SET_VARIABLES_BODY,
    ),
    _command("/instances/{id}/cancel", cancel, "Cancel: every token terminates"),
    _command("/instances/{id}/suspend", suspend, "Suspend: nothing moves until resumed"),
    _command("/instances/{id}/resume", resume, "Resume a suspended instance"),
]
