"""Impact before action: before a batch is created from a list's filter, the console shows what
it would touch (how many items the filter matches now, by one COUNT, and a sample of them) in a
dialog whose confirm button names that number ("Cancel 5,000 instances") and carries it, so the
batch's audit entry keeps the figure the operator confirmed beside the number the batch holds
(the filter is read again when the batch is created: instances may have started or ended
meanwhile).

The batches offered: cancel every running instance a filter matches, suspend the active ones,
resume the suspended ones, set or remove variables on each, retry every open incident. Setting
variables takes typed values as the inspector's variable editor does (a name, one of its types,
the text typed), checked before the batch is created: a bad value is refused naming the
variable, and nothing is created."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.console import batches as creating
from app.console import incidents as incident_page
from app.console import instances as instance_page
from app.console.common import read, refusal, render, typed_value
from app.errors import status_of
from app.params import Query
from engine.api import Engine
from engine.core import actors, permits
from engine.errors import BadRequest, InterlockError
from engine.queries import batch_impact as impact
from engine.states import BatchType, InstanceState

# How many variables the set-variables dialog offers to set at once.
VARIABLE_ROWS = 3


@dataclass(frozen=True)
class Action:
    """A batch the preview offers: its type, what it does, and what it works on."""

    kind: BatchType
    title: str
    verb: str
    noun: str
    post: str
    roots: bool = False
    # The one state of the instances it works on (a suspension: Active ones).
    state: InstanceState | None = None


INSTANCE_ACTIONS = {
    "cancel": Action(
        BatchType.CANCEL_INSTANCES,
        "Cancel instances",
        "Cancel",
        "running root instance",
        "/instances/batch-cancel",
        roots=True,
    ),
    "suspend": Action(
        BatchType.SUSPEND_INSTANCES,
        "Suspend instances",
        "Suspend",
        "active instance",
        "/instances/batch-suspend",
        state=InstanceState.ACTIVE,
    ),
    "resume": Action(
        BatchType.RESUME_INSTANCES,
        "Resume instances",
        "Resume",
        "suspended instance",
        "/instances/batch-resume",
        state=InstanceState.SUSPENDED,
    ),
    "set-variables": Action(
        BatchType.SET_VARIABLES,
        "Set variables",
        "Set variables on",
        "running instance",
        "/instances/batch-set-variables",
    ),
}
RETRY = Action(
    BatchType.RETRY_INCIDENTS, "Retry incidents", "Retry", "open incident", "/incidents/batch"
)


def _permitted(kind: BatchType) -> None:
    """Who may not create such a batch learns nothing of what it would match."""
    permits.demand(actors.current(), permits.CREATE_BATCH[kind], permits.Facts({}))


def _instances(engine: Engine, action: Action, fields: Mapping[str, str]) -> dict[str, Any]:
    _permitted(action.kind)
    where = creating.instance_filter(fields, roots=action.roots, state=action.state)
    found = impact.instances(engine, where)
    return {"count": found.count, "instances": found.sample}


def _incidents(engine: Engine, fields: Mapping[str, str]) -> dict[str, Any]:
    _permitted(RETRY.kind)
    found = impact.incidents(engine, creating.incident_filter(fields))
    return {"count": found.count, "incidents": found.sample}


async def _preview(
    request: Request, action: Action, filter_fields: tuple[str, ...], reader: Any
) -> Response:
    fields = Query(request.query_params).fields(filter_fields)
    given = {k: v for k, v in fields.items() if v}
    context: dict[str, Any] = {
        "action": action,
        "filters": given,
        "filtered": bool(given),
        "variable_rows": range(VARIABLE_ROWS),
    }
    status = 200
    try:
        context.update(await read(request, reader, given))
    except InterlockError as exc:
        context["refused"] = refusal(exc)
        status = status_of(exc)
    return render(request, "_batch_impact_dialog.html", context, status_code=status)


async def instances_preview(request: Request) -> Response:
    """The dialog of a batch over the instance list's filter (`action`: cancel, set-variables)."""
    name = Query(request.query_params).one_of("action", list(INSTANCE_ACTIONS)) or "cancel"
    action = INSTANCE_ACTIONS[name]
    engine = request.app.state.engine

    def reader(fields: Mapping[str, str]) -> dict[str, Any]:
        return _instances(engine, action, fields)

    return await _preview(request, action, instance_page.FILTER_FIELDS, reader)


async def incidents_preview(request: Request) -> Response:
    """The dialog of retrying every open incident the incident list's filter matches."""
    engine = request.app.state.engine

    def reader(fields: Mapping[str, str]) -> dict[str, Any]:
        return _incidents(engine, fields)

    return await _preview(request, RETRY, incident_page.FILTER_FIELDS, reader)


def variables_payload(fields: Mapping[str, str]) -> dict[str, Any]:
    """The set-variables batch's payload from the dialog's rows (`set_name_N`, `set_type_N`,
    `set_value_N`; a row without a name is left out) and `remove` (names separated by commas):
    each value typed as the inspector's editor types it, refused naming the variable."""
    variables: dict[str, Any] = {}
    for row in range(VARIABLE_ROWS):
        name = fields.get(f"set_name_{row}", "").strip()
        if not name:
            continue
        kind = fields.get(f"set_type_{row}", "string")
        try:
            value = typed_value(kind, fields.get(f"set_value_{row}", ""))
        except BadRequest as exc:
            raise BadRequest(f"variable {name!r}: {exc.message}", field="variables") from exc
        if name in variables:
            raise BadRequest(f"variable {name!r} is given twice", field="variables")
        variables[name] = {"value": value.to_json(), "type": value.type}
    removals = [n.strip() for n in fields.get("remove", "").split(",") if n.strip()]
    if not variables and not removals:
        raise BadRequest("name a variable to set or to remove", field="variables")
    return {"variables": variables, **({"remove": removals} if removals else {})}


def _set_variables_ids(engine: Engine, fields: Mapping[str, str]) -> list[str]:
    return creating.instance_ids(engine, fields, roots=False)


def _in_state(action: Action) -> Any:
    def find(engine: Engine, fields: Mapping[str, str]) -> list[str]:
        return creating.instance_ids(engine, fields, roots=action.roots, state=action.state)

    return find


async def suspend_instances(request: Request) -> Response:
    """Suspend every active instance the filter matches, as a batch."""
    action = INSTANCE_ACTIONS["suspend"]
    return await creating.create_from_filter(
        request, action.kind, _in_state(action), "no active instance matches the filter"
    )


async def resume_instances(request: Request) -> Response:
    """Resume every suspended instance the filter matches, as a batch."""
    action = INSTANCE_ACTIONS["resume"]
    return await creating.create_from_filter(
        request, action.kind, _in_state(action), "no suspended instance matches the filter"
    )


async def set_variables(request: Request) -> Response:
    """Set (and remove) variables on every running instance the filter matches, as a batch."""
    return await creating.create_from_filter(
        request,
        BatchType.SET_VARIABLES,
        _set_variables_ids,
        "no running instance matches the filter",
        variables_payload,
    )


routes = [
    Route("/instances/batch-preview", instances_preview, methods=["GET"]),
    Route("/incidents/batch-preview", incidents_preview, methods=["GET"]),
    Route("/instances/batch-set-variables", set_variables, methods=["POST"]),
    Route("/instances/batch-suspend", suspend_instances, methods=["POST"]),
    Route("/instances/batch-resume", resume_instances, methods=["POST"]),
]
