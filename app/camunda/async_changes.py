"""Camunda's asynchronous modification and migration: `POST /modification/executeAsync` and
`POST /migration/executeAsync` take the bodies of their synchronous `execute` and answer a
BatchDto. The instances are fixed when the batch is created (a query's answer then); each is
one item, modified or migrated in its own chunk's transaction (engine/batch/instance_changes.py).
"""

from __future__ import annotations

from uuid import UUID

from starlette.responses import Response

from app.camunda import batches
from app.camunda import migration as migration_rest
from app.camunda import modification as modification_rest
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


endpoints = [
    Endpoint("/modification/executeAsync", "POST", modify, body="json"),
    Endpoint("/migration/executeAsync", "POST", migrate, body="json"),
]
