"""What every API module shares: an operation is declared once (path, method, parameters, body
and response schemas, and the gate it needs besides an authenticated caller, app/gates.py) and
becomes both a route and its entry in the OpenAPI document.

The route checks the caller passes its gate and rejects unknown query parameters before the
handler runs; what a caller may change or read is decided by authorizations, in the command or
the read;
handlers run engine calls off the event loop and answer JSON.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.api.body import Body
from app.api.schemas import Schema, ref
from app.auth import principal_of, require
from app.gates import Gate
from engine.api import Engine
from engine.core.executor import MAX_IDEMPOTENCY_KEY, Command, Idempotency, Result, fingerprint
from engine.errors import BadRequest, Conflict, NotFound
from engine.language.json_input import text_problem

Handler = Callable[[Request], Awaitable[Response]]
R = TypeVar("R", bound=Result)
T = TypeVar("T")

IDEMPOTENCY_HEADER = "Idempotency-Key"
_PATH_PARAM = re.compile(r"{(\w+)(?::(\w+))?}")


@dataclass(frozen=True)
class Param:
    """A query parameter."""

    name: str
    schema: Schema
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Reply:
    """One documented response: its description and the schema of its body (None: no body)."""

    description: str
    schema: Schema | None = None
    media_type: str = "application/json"


@dataclass(frozen=True)
class Op:
    method: Literal["GET", "POST", "DELETE"]
    path: str
    handler: Handler
    summary: str
    query: tuple[Param, ...] = ()
    body: Schema | None = None
    body_media_type: str = "application/json"
    body_required: bool = False
    replies: Mapping[int, Reply] = field(default_factory=dict)
    gate: Gate = Gate.SIGNED_IN

    @property
    def openapi_path(self) -> str:
        return _PATH_PARAM.sub(r"{\1}", self.path)

    @property
    def path_params(self) -> list[tuple[str, str]]:
        """(name, convertor) of each path parameter; convertor '' for plain text."""
        return [(m.group(1), m.group(2) or "") for m in _PATH_PARAM.finditer(self.path)]

    @property
    def is_mutation(self) -> bool:
        return self.method != "GET"

    def route(self) -> Route:
        allowed = {p.name for p in self.query}
        op = self

        async def endpoint(request: Request) -> Response:
            require(request, op.gate)
            unknown = sorted(set(request.query_params) - allowed)
            if unknown:
                raise BadRequest(
                    f"unknown query parameter '{unknown[0]}'"
                    + (f"; known: {', '.join(sorted(allowed))}" if allowed else ""),
                    field=unknown[0],
                )
            return await op.handler(request)

        return Route(self.path, endpoint, methods=[self.method], name=f"{self.method} {self.path}")


def engine_of(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking engine call in the thread pool, off the event loop."""
    return await run_in_threadpool(fn, *args, **kwargs)


def idempotency_key(request: Request) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable():
        raise BadRequest(
            f"the {IDEMPOTENCY_HEADER} header must be 1 to {MAX_IDEMPOTENCY_KEY} printable "
            "characters",
            field=IDEMPOTENCY_HEADER,
        )
    return key


async def idempotency(request: Request, command: Command[Any]) -> Idempotency | None:
    """The request's idempotency key, scoped to the caller and bound to the request: its method,
    path, query and body. The same key from another caller is another key; from the same caller
    with another request it is refused (422)."""
    key = idempotency_key(request)
    if key is None:
        return None
    try:
        body = await request.body()
    except RuntimeError:
        # A multipart body was streamed into the command as it was parsed (uploaded files): the
        # command, which holds every part, stands for it.
        body = repr(command).encode()
    digest = fingerprint(
        request.method, request.url.path, str(sorted(request.query_params.multi_items())), body
    )
    return Idempotency(key, principal_of(request).name, digest)


async def run(request: Request, command: Command[R]) -> R:
    """Run `command` through the executor with the request's idempotency key: a repeated request
    with the same key gets the first result back and changes nothing."""
    key = await idempotency(request, command)
    engine = engine_of(request)
    return await run_in_threadpool(lambda: engine.run(command, key))


def same_target(request: Request, expected: str, replayed: str) -> None:
    """A replayed result must be about the resource the request names: an idempotency key reused
    for another target is a conflict, not that target's answer."""
    if expected != replayed:
        raise Conflict(
            f"idempotency key '{request.headers.get(IDEMPOTENCY_HEADER)}' was used for {replayed}",
            idempotency_key=request.headers.get(IDEMPOTENCY_HEADER),
        )


def reply(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def path_text(request: Request, name: str) -> str:
    """A text path parameter; one that no text column can hold (a NUL character) is a 400."""
    value: str = request.path_params[name]
    problem = text_problem(value)
    if problem is not None:
        raise BadRequest(f"path parameter '{name}' {problem}", field=name)
    return value


def path_id(request: Request, name: str = "id") -> UUID:
    """A UUID path parameter; anything else names no resource (404)."""
    raw = path_text(request, name)
    try:
        return UUID(raw)
    except ValueError:
        raise NotFound(f"'{raw}' is not a valid id") from None


def _named(handler: Handler, module: str, name: str) -> Handler:
    """`handler` as the function `name` of `module`: the OpenAPI document's operationId and tag
    come from them."""
    handler.__module__, handler.__name__, handler.__qualname__ = module, name, name
    return handler


def get_one(
    module: str,
    name: str,
    path: str,
    summary: str,
    read: Callable[[Engine, UUID], T],
    view: Callable[[T], dict[str, Any]],
    reply_schema: str,
    description: str,
) -> Op:
    """GET `path`, the handler `name` of `module`: the row `read(engine, id)` finds
    for the path's id (it raises NotFound when there is none), as `view` shapes it."""

    async def handler(request: Request) -> Response:
        return reply(view(await call(read, engine_of(request), path_id(request))))

    replies = {200: Reply(description, ref(reply_schema))}
    return Op("GET", path, _named(handler, module, name), summary, replies=replies)


@dataclass(frozen=True)
class Answer(Generic[R]):
    """What a command on the resource a path names answers: `fields` maps each JSON field to the
    result's attribute, the first one the id of that resource."""

    fields: Mapping[str, str]
    schema: str
    description: str

    @property
    def replies(self) -> dict[int, Reply]:
        return {200: Reply(self.description, ref(self.schema))}

    def respond(self, request: Request, result: R) -> Response:
        """The result as JSON, once it is known to be about the resource the path names (a
        replayed idempotency key used for another one is a 409)."""
        shown = {name: getattr(result, attribute) for name, attribute in self.fields.items()}
        same_target(request, str(path_id(request)), next(iter(shown.values())))
        return reply(shown)


def on_one(
    module: str,
    name: str,
    path: str,
    summary: str,
    body: Schema,
    command: Callable[[Request, Body], Command[R]],
    answer: Answer[R],
    *,
    body_required: bool = False,
) -> Op:
    """POST `path`, the handler `name` of `module`: the body read against `body`,
    then `command(request, body)` run with the request's idempotency key, answered as `answer`
    says."""

    async def handler(request: Request) -> Response:
        read = await Body.read(request, body)
        return answer.respond(request, await run(request, command(request, read)))

    return Op(
        "POST",
        path,
        _named(handler, module, name),
        summary,
        body=body,
        body_required=body_required,
        replies=answer.replies,
    )
