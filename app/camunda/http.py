"""How a Camunda endpoint is declared: path, method, the gate it needs, and a handler that gets a
`Call` (engine, path and query parameters, parsed body). Plain handlers run in a worker thread;
coroutine handlers run on the event loop. Every error leaves as Camunda's `{type, message}`."""

from __future__ import annotations

import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.auth import require
from app.camunda.dto import Json
from app.camunda.errors import CamundaError, engine_error, invalid_request, translate
from app.gates import Gate
from app.json_body import BodyProblem, BodyRefused, json_object
from app.params import Query
from engine.api import Engine
from engine.core.executor import Command
from engine.errors import Conflict, NotFound
from engine.language.json_input import INT32_MAX, INT32_MIN, text_problem
from engine.queries.camunda.common import CamundaPage

log = logging.getLogger("interlock.camunda")

# Resources sent as plain form fields (no file name) may be whole BPMN files.
MAX_FORM_PART_BYTES = 16 * 1024 * 1024
BodyKind = Literal["none", "json", "form"]
Handler = Callable[["Call"], Response] | Callable[["Call"], Awaitable[Response]]
T = TypeVar("T")


@dataclass
class Call(Query):
    """One request to an endpoint. Its query parameters are read with the shared readers of
    app/params.py; an id filter that names no id Interlock issues matches nothing."""

    unknown_ids_match_nothing: ClassVar[bool] = True

    request: Request
    engine: Engine
    path: dict[str, str]
    query: QueryParams
    base: str
    body: Any = None
    form: FormData | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def page(self, sortable: dict[str, str]) -> CamundaPage:
        """Camunda's paging: firstResult and maxResults are Integers (negative counts as 0)."""
        first = self.integer("firstResult") or 0
        maximum = self.integer("maxResults")
        sort_by, sort_order = self.text("sortBy"), self.text("sortOrder")
        if (sort_by is None) != (sort_order is None):
            raise invalid_request(
                "Only a single sorting parameter specified. sortBy and sortOrder required"
            )
        sort: tuple[tuple[str, bool], ...] = ()
        sort_by = self.one_of("sortBy", sortable)
        sort_order = self.one_of("sortOrder", ("asc", "desc"))
        if sort_by is not None:
            sort = ((sort_by, sort_order == "desc"),)
        return CamundaPage(first=first, max=maximum, sort=sort)

    # -- body -----------------------------------------------------------------------------------

    def field(self, name: str, default: Any = None) -> Any:
        if isinstance(self.body, dict):
            value = self.body.get(name, default)
            return default if value is None else value
        return default

    def body_text(self, name: str) -> str | None:
        value = self.field(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise invalid_request(f"'{name}' must be a string")
        return value

    def body_int(
        self,
        name: str,
        default: int | None = None,
        *,
        minimum: int = INT32_MIN,
        maximum: int = INT32_MAX,
    ) -> int | None:
        """An integer field (a whole JSON number), from `minimum` to `maximum`: by default
        Camunda's Integer; a Long field passes wider bounds."""
        value = self.field(name, default)
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise invalid_request(f"'{name}' must be an integer, not {value!r}")
        number = int(value)
        if not minimum <= number <= maximum:
            raise invalid_request(
                f"'{name}' must be an integer from {minimum} to {maximum}, not {value!r}"
            )
        return number

    def body_flag(self, name: str, default: bool = False) -> bool:
        value = self.field(name, default)
        if not isinstance(value, bool):
            raise invalid_request(f"'{name}' must be a boolean, not {value!r}")
        return value


def listed(rows: list[T] | int) -> list[T]:
    """The rows of a query asked for rows rather than their count."""
    assert isinstance(rows, list)
    return rows


def only(call: Call, query: Callable[..., list[T] | int], **key: Any) -> T | None:
    """The row `query` finds by `key` alone: the request's own query parameters are set aside."""
    rows = listed(query(unfiltered(call), **key))
    return rows[0] if rows else None


def unfiltered(call: Call) -> Call:
    """`call` without its query parameters, for a read by key alone; the request's own call
    keeps them."""
    return dataclasses.replace(call, query=QueryParams())


def found(row: T | None, missing: str) -> T:
    """`row`, or Camunda's 404 saying `missing` when there is none."""
    if row is None:
        raise invalid_request(missing, 404)
    return row


def run_found(
    call: Call,
    command: Command[Any],
    missing: str | None,
    *,
    conflict_is_engine_error: bool = False,
) -> Response:
    """Run `command` on the path's resource: 204 No Content, or Camunda's 404 saying `missing`
    when the engine finds no such resource (None: the engine's own words). With
    `conflict_is_engine_error`, a Conflict answers as Camunda's engine refuses (500
    ProcessEngineException with the engine's message). Any other engine error answers as
    app/errors.py's table says (a refused field: a 400 InvalidRequestException with the
    engine's message)."""
    try:
        call.engine.run(command)
    except NotFound as exc:
        raise invalid_request(missing if missing is not None else exc.message, 404) from exc
    except Conflict as exc:
        if conflict_is_engine_error:
            raise engine_error(exc.message) from exc
        raise
    return no_content()


def json_response(content: Any, status: int = 200) -> Response:
    """Exactly `Content-Type: application/json`, as Camunda's clients compare it."""
    return JSONResponse(content, status_code=status, media_type="application/json")


def no_content() -> Response:
    return Response(status_code=204)


def base_url(request: Request) -> str:
    """The root of absolute links: the configured public URL, else the address this server is
    bound to; never the request's Host header, which the caller chooses."""
    root = request.scope.get("root_path", "")
    public = getattr(getattr(request.app.state, "settings", None), "public_url", None)
    if public:
        return f"{str(public).rstrip('/')}{root}"
    server = request.scope.get("server")
    if not server or server[1] is None:
        return str(root)
    host, port = str(server[0]), int(server[1])
    if ":" in host:
        host = f"[{host}]"
    scheme = request.scope.get("scheme", "http")
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}{'' if port == default else f':{port}'}{root}"


@dataclass(frozen=True)
class Endpoint:
    """One Camunda endpoint: its path and method, its handler, how its body is read, and the gate
    it needs besides an authenticated caller (app/gates.py: mostly none, the command or the
    read deciding by authorizations). Each module lists its endpoints; app/camunda/__init__.py
    makes them routes."""

    path: str
    method: str
    handler: Handler
    body: BodyKind = "none"
    gate: Gate = Gate.SIGNED_IN

    def route(self) -> Route:
        handler, gate, body = self.handler, self.gate, self.body

        async def endpoint(request: Request) -> Response:
            return await _serve(request, handler, gate, body)

        endpoint.__name__ = handler.__name__
        return Route(self.path, endpoint, methods=[self.method])


async def _serve(request: Request, handler: Handler, gate: Gate, body: BodyKind) -> Response:
    call: Call | None = None
    try:
        require(request, gate)
        _check_path(request)
        call = Call(
            request=request,
            engine=request.app.state.engine,
            path=dict(request.path_params),
            query=request.query_params,
            base=base_url(request),
        )
        if body == "json":
            call.body = await _json_body(request)
        elif body == "form":
            call.form = await request.form(max_part_size=MAX_FORM_PART_BYTES)
        if inspect.iscoroutinefunction(handler):
            result: Response = await handler(call)
        else:
            result = await run_in_threadpool(handler, call)  # type: ignore[arg-type]
        return result
    except Exception as exc:
        error = translate(exc)
        if error.status >= 500 and not isinstance(exc, CamundaError):
            log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return error.response()
    finally:
        if call is not None and call.form is not None:
            await call.form.close()


def _check_path(request: Request) -> None:
    for name, value in request.path_params.items():
        problem = text_problem(value) if isinstance(value, str) else None
        if problem is not None:
            raise invalid_request(f"Path parameter '{name}': the value {problem}")


async def _json_body(request: Request) -> Any:
    """The body's JSON object, read by the one reader of both APIs (see app/json_body.py)."""
    try:
        return await json_object(request)
    except BodyRefused as exc:
        raise _refusal(exc) from exc


def _refusal(exc: BodyRefused) -> CamundaError:
    """/engine-rest's words for a body refused as a whole."""
    match exc.problem:
        case BodyProblem.NOT_JSON:
            return invalid_request(f"The request body is not valid JSON: {exc.reason}")
        case BodyProblem.REFUSED | BodyProblem.TOO_LARGE:
            return invalid_request(f"The request body is refused: {exc.reason}")
        case _:
            return invalid_request("The request body must be a JSON object")


async def not_found(request: Request) -> Response:
    """Camunda's answer for a path it does not serve (JAX-RS's NotFoundException)."""
    return CamundaError(404, "NotFoundException", "HTTP 404 Not Found").response()


class Rows(Protocol[T]):
    """A resource's query: the rows the call's parameters find, or with `count` their number."""

    def __call__(self, call: Call, *, count: bool) -> list[T] | int: ...


def listing(
    path: str,
    rows: Rows[T],
    dto: Callable[[T], Json] | None = None,
    *,
    shown: Callable[[Call, list[T]], list[Json]] | None = None,
    count: Callable[[Call], int] | None = None,
    gate: Gate = Gate.SIGNED_IN,
) -> list[Endpoint]:
    """A resource's list and count: GET `path`, the rows `rows` finds, each as `dto` shapes it
    (or the whole list as `shown` does); GET `path`/count, `{"count": n}` from `rows` (or from
    `count`, a cheaper way to the same number)."""

    def list_rows(call: Call) -> Response:
        found = listed(rows(call, count=False))
        if shown is not None:
            return json_response(shown(call, found))
        assert dto is not None
        return json_response([dto(row) for row in found])

    def count_rows(call: Call) -> Response:
        return json_response({"count": count(call) if count else rows(call, count=True)})

    name = path.strip("/").replace("/", "_").replace("-", "_")
    list_rows.__name__, count_rows.__name__ = f"list_{name}", f"count_{name}"
    return [
        Endpoint(path, "GET", list_rows, gate=gate),
        Endpoint(f"{path}/count", "GET", count_rows, gate=gate),
    ]
