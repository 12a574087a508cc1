"""Camunda's asynchronous modification, migration and setting of variables:
`POST /modification/executeAsync` and `POST /migration/executeAsync` take the bodies of their
synchronous `execute`, `POST /process-instance/variables-async` the instances (named, or found by
a runtime or historic query) and the variables to set in each one's root scope; each answers a
BatchDto. The instances are fixed when the batch is created (a query's answer then); each is
one item, changed in its own chunk's transaction (engine/batch/instance_changes.py,
engine/batch/operations.py), and a set variable is audited per instance with its values before
and after.
"""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app.camunda import batches, suspension
from app.camunda import migration as migration_rest
from app.camunda import modification as modification_rest
from app.camunda import variables as variable_rest
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint
from engine.commands.migration import MigrationInvalid
from engine.commands.modification import to_spec
from engine.errors import NotFound
from engine.states import BatchType

# The instance the body's modification is read for before there is one: its spec is the same.
_ANY_INSTANCE = UUID(int=0)


def modify(call: Call) -> Response:
    body, definition_id = modification_rest.definition_body(call)
    spec = to_spec(modification_rest.modification_command(_ANY_INSTANCE, body))
    items = batches._instance_ids(call)
    payload = {**spec, "processDefinitionId": definition_id}
    return batches._create(call, BatchType.MODIFY, items, payload, "Process instance ids is empty")


def migrate(call: Call) -> Response:
    plan = migration_rest._plan(call)
    for flag in ("skipCustomListeners", "skipIoMappings"):
        call.body_flag(flag)  # accepted: a migration runs no listeners and no mappings
    items = batches._instance_ids(call)
    try:
        return batches._create(
            call,
            BatchType.MIGRATE,
            items,
            plan.to_json(),
            "'processInstanceIds' or 'processInstanceQuery' must select instances",
        )
    except MigrationInvalid as exc:
        raise migration_rest._refusal(exc) from exc
    except NotFound as exc:
        raise invalid_request(exc.message) from exc


def set_variables(call: Call) -> Response:
    """The variables (VariableValueDtos, typed as every other route types them) are checked
    before the batch is created: a bad type or value is a 400 naming the variable, and nothing
    is created. Transient variables are refused, as Camunda refuses them here."""
    given = call.field("variables")
    if given is None:
        raise invalid_request("variables is null")
    if not isinstance(given, dict):
        raise invalid_request("'variables' must be an object of variables")
    if not given:
        raise invalid_request("variables is empty")
    for name, dto in given.items():
        info = dto.get("valueInfo") if isinstance(dto, dict) else None
        if isinstance(info, dict) and info.get("transient") is True:
            raise invalid_request(
                f"Setting transient variables asynchronously is currently not supported "
                f"(variable '{name}')"
            )
    typed = variable_rest.to_typed_map(given)
    variables = {name: {"value": v.to_json(), "type": v.type} for name, v in typed.items()}
    selected = suspension._selected_ids(call)
    if selected is None:
        raise invalid_request(
            "Either processInstanceIds, processInstanceQuery or historicProcessInstanceQuery "
            "should be set to set variables."
        )
    items = [str(i) for i in dict.fromkeys(selected)]
    return batches._create(
        call,
        BatchType.SET_VARIABLES,
        items,
        {"variables": variables},
        "processInstanceIds is empty",
    )


endpoints = [
    Endpoint("/modification/executeAsync", "POST", modify, body="json"),
    Endpoint("/migration/executeAsync", "POST", migrate, body="json"),
    Endpoint("/process-instance/variables-async", "POST", set_variables, body="json"),
]
