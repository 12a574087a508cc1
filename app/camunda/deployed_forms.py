"""Forms kept as files of a deployment, as Camunda serves them: `GET /task/{id}/deployed-form`
and the process definition's `deployed-start-form`, for a form key
`embedded:deployment:<file>`, `deployment:<file>` or `camunda-forms:deployment:<file>` naming a
file of the definition's deployment. The file is sent as uploaded, under the raw-file headers
(never sniffed, inert if opened directly)."""

from __future__ import annotations

from starlette.responses import Response

from app import reads
from app.camunda.definitions import _by_id, _by_key
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint
from app.guard import raw_file_headers
from app.params import as_uuid
from engine.errors import NotFound
from engine.model import UserTask
from engine.queries.camunda import deployments as deployment_reads
from engine.queries.definitions import DefinitionRow

# The prefixes of a form key that names a file of the deployment.
DEPLOYED_PREFIXES = ("embedded:deployment:", "camunda-forms:deployment:", "deployment:")


def _file_of(form_key: str | None) -> str:
    """The deployment file a form key names, else Camunda's 400."""
    if form_key is None:
        raise invalid_request("The form key is not set.")
    for prefix in DEPLOYED_PREFIXES:
        if form_key.startswith(prefix):
            return form_key.removeprefix(prefix)
    raise invalid_request(f"The form key '{form_key}' does not reference a deployed form.")


def _served(call: Call, definition: DefinitionRow, form_key: str | None) -> Response:
    name = _file_of(form_key)
    found = deployment_reads.resource_data(call.engine, definition.deployment_id, name=name)
    if found is None:
        raise invalid_request(
            f"The form with the resource name '{name}' cannot be found in deployment with id "
            f"{definition.deployment_id}",
            404,
        )
    # Camunda's media types: a Camunda Forms file is JSON, any other form XHTML.
    media_type = "application/json" if name.endswith(".form") else "application/xhtml+xml"
    return Response(found.content, media_type=media_type, headers=raw_file_headers())


def task_deployed_form(call: Call) -> Response:
    task_id = call.path["id"]
    try:
        task = reads.user_task(call.engine, as_uuid(task_id))
    except NotFound:
        raise invalid_request(f"No matching task with id {task_id}", 404) from None
    if task.definition_id is None or task.definition_key is None:
        raise invalid_request(f"Task {task_id} belongs to no process: it has no deployed form")
    node = reads.model(call.engine, task.definition_id, task.definition_key).node(task.node_id)
    form_key = node.form_key if isinstance(node, UserTask) else None
    return _served(call, reads.definition(call.engine, task.definition_id), form_key)


def _start_form(call: Call, definition: DefinitionRow) -> Response:
    model = reads.model(call.engine, definition.id, definition.key)
    start = model.initial
    return _served(call, definition, start.form_key if start is not None else None)


def start_form_by_id(call: Call) -> Response:
    return _start_form(call, _by_id(call))


def start_form_by_key(call: Call) -> Response:
    return _start_form(call, _by_key(call))


endpoints = [
    Endpoint("/task/{id}/deployed-form", "GET", task_deployed_form),
    Endpoint("/process-definition/key/{key}/deployed-start-form", "GET", start_form_by_key),
    Endpoint("/process-definition/{id}/deployed-start-form", "GET", start_form_by_id),
]
