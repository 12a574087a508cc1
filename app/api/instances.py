"""Process instances: the filtered, paginated list; one instance with its tokens, history and
variables; and the commands on a whole instance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from uuid import UUID

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
    call,
    engine_of,
    get_one,
    on_one,
    path_id,
    reply,
)
from app.api.schemas import (
    BOOLEAN,
    INTEGER,
    NO_BODY,
    STRING,
    TIME,
    VARIABLES_IN,
    ref,
    request,
)
from app.params import Query
from engine.api import Engine
from engine.commands.instances import (
    CancelInstance,
    InstanceResult,
    ResumeInstance,
    SetVariables,
    SuspendInstance,
)
from engine.core.executor import Command
from engine.errors import BadRequest
from engine.language.json_input import JsonSyntaxError, loads
from engine.language.variables import TypedValue
from engine.queries import instances as instance_reads
from engine.queries import tokens as token_reads
from engine.queries.instances import MAX_LIMIT, InstanceFilter
from engine.queries.tokens import TokenPath, TokenPosition

SET_VARIABLES_BODY = request({"variables": VARIABLES_IN}, required=("variables",))
T = TypeVar("T")


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
        instance_reads.page, engine_of(request), where, limit=limit, after=query.text("after")
    )
    return reply(views.items([views.instance(i) for i in page.items], page.next))


def _tokens(engine: Engine, instance_id: UUID) -> list[TokenPosition]:
    """Live positions (the read says when the instance does not exist)."""
    return token_reads.positions(engine, engine.definition_cache, instance_id)


def _history(engine: Engine, instance_id: UUID) -> list[TokenPath]:
    reads.instance_state(engine, instance_id)
    return token_reads.paths(engine, instance_id)


def _variables(engine: Engine, instance_id: UUID) -> dict[str, TypedValue]:
    reads.instance_state(engine, instance_id)
    return reads.typed_variables(engine, instance_id)


def _listed(view: Callable[[T], dict[str, Any]]) -> Callable[[list[T]], dict[str, Any]]:
    return lambda rows: views.items([view(row) for row in rows])


def _set_variables(request: Request, body: Body) -> SetVariables:
    values = body.variables()
    if not values:
        raise BadRequest("field 'variables' must name at least one variable", field="variables")
    return SetVariables(path_id(request), values)


RESULT = Answer[InstanceResult](
    {"id": "instance_id", "definition_id": "definition_id", "state": "state"},
    "InstanceResult",
    "The instance after the command",
)


def _command(name: str, summary: str, command: Callable[[UUID], Command[InstanceResult]]) -> Op:
    """POST /instances/{id}/`name`, no body: `command` on the instance."""
    path = f"/instances/{{id}}/{name}"
    build = lambda request, _: command(path_id(request))  # noqa: E731
    return on_one(__name__, name, path, summary, NO_BODY, build, RESULT)


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
operations = [
    Op(
        "GET",
        "/instances",
        list_instances,
        "List instances, newest first, with filters and keyset pagination",
        query=LIST_PARAMS,
        replies={200: Reply("A page of instances", ref("InstancePage"))},
    ),
    get_one(
        __name__,
        "get_instance",
        "/instances/{id}",
        "One instance",
        reads.instance,
        views.instance,
        "Instance",
        "The instance",
    ),
    get_one(
        __name__,
        "get_tokens",
        "/instances/{id}/tokens",
        "Where the instance's live tokens are",
        _tokens,
        _listed(views.token),
        "TokenList",
        "Live tokens",
    ),
    get_one(
        __name__,
        "get_history",
        "/instances/{id}/history",
        "Every track's path, with fork and merge lineage",
        _history,
        _listed(views.track),
        "TrackList",
        "Tracks",
    ),
    get_one(
        __name__,
        "get_variables",
        "/instances/{id}/variables",
        "The instance's variables",
        _variables,
        views.variables,
        "Variables",
        "Typed variables",
    ),
    on_one(
        __name__,
        "set_variables",
        "/instances/{id}/variables",
        "Set (create or overwrite) variables",
        SET_VARIABLES_BODY,
        _set_variables,
        RESULT,
    ),
    _command("cancel", "Cancel: every token terminates", CancelInstance),
    _command("suspend", "Suspend: nothing moves until resumed", SuspendInstance),
    _command("resume", "Resume a suspended instance", ResumeInstance),
]
