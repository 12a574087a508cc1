"""What every console page shares: rendering with the caller's permissions (`can`, `passes`) and
CSRF token, the one way mutations run and report, and the filters templates use."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from app import gates
from app.auth import csrf_token, principal_of, require
from app.console.json_view import json_tree
from app.errors import status_of
from app.gates import Gate
from app.outage import HEADERS as OUTAGE_HEADERS
from app.templating import templates
from engine.api import Engine
from engine.core import actors, permits
from engine.errors import (
    AuthorizationDenied,
    BadRequest,
    DatabaseUnavailable,
    InterlockError,
    InvariantViolation,
)
from engine.identity.accounts import Principal
from engine.language import json_input
from engine.language.variables import (
    VARIABLE_TYPES,
    FileValue,
    TypedValue,
    VariableType,
    typed,
)
from engine.states import BatchType, OutboxEvent

# Every event type the outbox carries; pages listen for these on their stream.
EVENT_TYPES = tuple(OutboxEvent)

# What an invariant violation means, in the words an operator would use.
PLAIN_INVARIANTS = {
    "TokenFinalizedTwice": "this token has already finished",
    "JoinIncomplete": "the join would fire before all its branches arrived",
    "ExternalTaskLeaseConflict": "another worker holds this external task",
    "TokenInvalidTransition": "the token cannot make that move from where it is now",
    "TokenClaimConflict": "someone else is running this token right now",
    "StaleWrite": "someone changed this instance at the same moment; look again and retry",
    "InstanceInvalidTransition": "the instance cannot make that move from where it is now",
}

# What an operator may type into a form: neither binary values (uploaded over the APIs) nor
# objects (a client's type name) are typed as text.
EDITABLE_TYPES = tuple(
    t for t in VARIABLE_TYPES if not t.binary and t not in (VariableType.NULL, VariableType.OBJECT)
) + (VariableType.NULL,)


def engine_of(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def can(name: str, **facts: Any) -> bool:
    """Whether the request's principal holds the permit `name` of engine/core/permits.py on the
    resource the facts name (its keywords: `permits.facts_of`): exactly when the command that
    declares it would be allowed. Templates ask it to show a control only to who may use it,
    for example `can("RETRY_JOB", instance=i.instance_id, definition=i.definition_key)`."""
    found = getattr(permits, name, None)
    if not isinstance(found, permits.Permit):
        raise KeyError(f"no permit named {name!r} in engine/core/permits.py")
    return permits.holds(actors.current(), found, **facts)


def can_batch(batch_type: str) -> bool:
    """Whether the request's principal may create a batch of `batch_type`: the permit creating
    it declares, and what its type asks besides (app/gates.py)."""
    actor = actors.current()
    kind = BatchType(batch_type)
    return permits.holds(actor, permits.CREATE_BATCH[kind]) and gates.acts_on_batch_type(
        actor, kind.value
    )


def passes(gate: str) -> bool:
    """Whether the request's principal passes the route gate `gate` (app/gates.py), for the
    links to the pages that need one."""
    return gates.passes(actors.current(), Gate[gate])


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any] | None = None,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    principal = principal_of(request)
    values = {
        "principal": principal,
        "can": can,
        "can_batch": can_batch,
        "passes": passes,
        "csrf_token": csrf_token(request, request.app.state.sessions),
        "auth_enabled": request.app.state.authenticator.enabled,
        "event_types": " ".join(EVENT_TYPES),
        **(context or {}),
    }
    return templates.TemplateResponse(
        request, template, values, status_code=status_code, headers=dict(headers or {})
    )


async def read(request: Request, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a blocking read of the engine off the event loop."""
    return await run_in_threadpool(fn, *args, **kwargs)


def refusal(error: InterlockError) -> dict[str, Any]:
    """What `_flash.html` shows for an error: its code, for an invariant violation its kind
    and what that means in plain words, and for a refused permission which one it needs."""
    kind = error.kind.value if isinstance(error, InvariantViolation) else None
    denied = isinstance(error, AuthorizationDenied)
    plain = error.plain if isinstance(error, AuthorizationDenied) else None
    return {
        "ok": False,
        "code": error.code,
        "kind": kind,
        "denied": denied,
        "plain": plain or PLAIN_INVARIANTS.get(kind or "", ""),
        "message": error.message,
    }


def flash(
    request: Request,
    *,
    message: str | None = None,
    error: InterlockError | None = None,
) -> Response:
    """The result of a mutation, shown where the button was."""
    if error is None:
        return render(
            request,
            "_flash.html",
            {"ok": True, "message": message},
            headers={"HX-Trigger": "interlock:changed"},
        )
    headers = OUTAGE_HEADERS if isinstance(error, DatabaseUnavailable) else None
    return render(
        request, "_flash.html", refusal(error), status_code=status_of(error), headers=headers
    )


async def act(
    request: Request, work: Callable[[Engine, Principal, Mapping[str, str]], str]
) -> Response:
    """Run one mutation with the form's fields, through the engine's commands (which check the
    caller's authorizations)."""
    try:
        principal = require(request)
        form = await request.form()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        message = await run_in_threadpool(work, engine_of(request), principal, fields)
    except InterlockError as error:
        return flash(request, error=error)
    return flash(request, message=message)


def form_text(form: FormData, name: str) -> str:
    """A text field of a submitted form; "" when it is absent or a file."""
    value = form.get(name)
    return value if isinstance(value, str) else ""


def parse_int(value: str | None, what: str) -> int:
    try:
        return int(str(value).strip())
    except ValueError as exc:
        raise BadRequest(f"{what} must be a whole number, not '{value}'") from exc


def typed_value(type_name: str, raw: str) -> TypedValue:
    """A variable from a console form: the type the operator chose, the text they typed."""
    if type_name not in EDITABLE_TYPES:
        raise BadRequest(f"unknown variable type '{type_name}'")
    if type_name == "json":
        try:
            return typed("json", json_input.loads(raw, "value"))
        except json_input.JsonSyntaxError as exc:
            raise BadRequest(f"not valid JSON: {exc}") from exc
    if type_name == "null":
        return TypedValue("null", None)
    return typed(type_name, raw)


def json_object(raw: str, what: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json_input.loads(raw, what)
    except json_input.JsonSyntaxError as exc:
        raise BadRequest(f"{what}: not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadRequest(f'{what} must be a JSON object such as {{"approved": true}}')
    return value


# -- template filters ---------------------------------------------------------------------------


def short_id(value: object) -> str:
    return str(value)[-8:] if value else ""


def when(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    return f"{int(seconds // 86400)} d {int(seconds % 86400 // 3600)} h"


def between(start: datetime | None, end: datetime | None) -> str:
    if start is None:
        return ""
    return duration(((end or datetime.now(UTC)) - start).total_seconds())


def as_json(value: Any) -> str:
    """A variable's value as text: JSON for everything but plain strings."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def variable_text(value: TypedValue) -> str:
    """A variable's value as the console shows it; a binary value only as its size (its bytes
    are a download, never inline)."""
    kind = VariableType.named(value.type)
    if kind is not None and kind.binary:
        return binary_label(value)
    if value.type == "object":
        return json.dumps(value.value, ensure_ascii=False, indent=2, sort_keys=True)
    if value.type == "date" and value.value is not None:
        return str(value.value.isoformat())
    if value.type == "json":
        return json.dumps(value.value, ensure_ascii=False, indent=2, sort_keys=True)
    if value.type == "null":
        return ""
    return as_json(value.value)


def binary_label(value: TypedValue) -> str:
    """A Bytes or File value's description: the file's name and type, and the size."""
    found = value.value
    if isinstance(found, FileValue):
        kind = f", {found.mime_type}" if found.mime_type else ""
        return f"{found.filename} ({len(found.content)} bytes{kind})"
    return f"{len(found)} bytes" if isinstance(found, bytes) else ""


def is_binary(value: TypedValue) -> bool:
    kind = VariableType.named(value.type)
    return kind is not None and kind.binary


templates.env.filters["short"] = short_id
templates.env.tests["binary"] = is_binary
templates.env.filters["when"] = when
templates.env.filters["duration"] = duration
templates.env.globals["between"] = between
templates.env.filters["variable_text"] = variable_text
templates.env.filters["json_tree"] = json_tree
templates.env.globals["EDITABLE_TYPES"] = EDITABLE_TYPES
