"""The bytes of Bytes and File variables, as Camunda's REST reference serves them:
`GET .../variables/{name}/data` (the raw bytes; a File with its MIME type, encoding and a
download file name; any other type refused 400) and `POST .../variables/{name}/data` (multipart:
the bytes in `data`, `valueType` Bytes (the default) or File, whose name, MIME type and encoding
come from the part; or `type`, an object type name, with `data` as application/json: an Object)
for process instances and tasks, and `GET /variable-instance/{id}/data` and
`GET /history/variable-instance/{id}/data`. Every answer is a download, never shown inline nor
sniffed (app/variable_files.py)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import UploadFile
from starlette.responses import Response

from app import reads
from app.camunda.errors import CamundaError, invalid_request
from app.camunda.http import Call, Endpoint
from app.camunda.instances import known_instance, set_instance_variables
from app.camunda.variable_instances import set_task_variables, task_values, variable_instance_id
from app.camunda.variables import object_type_of
from app.variable_files import binary_response
from engine.errors import BadRequest
from engine.language.json_input import JsonSyntaxError, loads
from engine.language.variables import (
    MAX_BINARY_BYTES,
    TypedValue,
    VariableType,
    from_row,
    typed,
)
from engine.queries import variables as vq
from engine.queries.camunda import history as history_reads
from engine.queries.camunda.common import CamundaPage

# What a `valueType` part may name.
BINARY_TYPES = (VariableType.BYTES, VariableType.FILE)


def _not_binary(name: str, where: str) -> CamundaError:
    return invalid_request(f"Value of variable '{name}' of {where} is not a binary value.")


def _served(value: TypedValue, name: str, where: str) -> Response:
    kind = VariableType.named(value.type)
    if kind is None or not kind.binary:
        raise _not_binary(name, where)
    return binary_response(value, name)


# -- reading --------------------------------------------------------------------------------------


def instance_data(call: Call) -> Response:
    info = known_instance(call)
    name = call.path["name"]
    found = reads.typed_variables(call.engine, info.id).get(name)
    if found is None:
        raise invalid_request(f"process instance variable with name {name} does not exist", 404)
    return _served(found, name, f"process instance {info.id}")


def _task_data(call: Call, *, local: bool) -> Response:
    name = call.path["name"]
    found = task_values(call, local=local).get(name)
    if found is None:
        kind = "task variable local" if local else "task variable"
        raise invalid_request(f"{kind} with name {name} does not exist", 404)
    return _served(from_row(*found), name, f"task {call.path['id']}")


def task_data(call: Call) -> Response:
    return _task_data(call, local=False)


def task_local_data(call: Call) -> Response:
    return _task_data(call, local=True)


def _by_id(call: Call, *, history: bool) -> Response:
    """A variable instance by its id, which is derived from its key: found among the keys of
    the Bytes and File variables the caller may read (any other answers 404)."""
    wanted = call.path["id"]
    keys = vq.binary_variable_keys(call.engine, history=history)
    key = next(
        (k for k in keys if variable_instance_id(k.instance_id, k.scope_key, k.name) == wanted),
        None,
    )
    what = "Historic variable instance" if history else "Variable instance"
    missing = invalid_request(f"{what} with Id '{wanted}' does not exist.", 404)
    if key is None:
        raise missing
    page = CamundaPage()
    rows: Any
    if history:
        rows = history_reads.historic_variables(
            call.engine, page, instance_id=key.instance_id, name=key.name
        )
    else:
        rows = vq.variable_instances(
            call.engine, page, instance_ids=[key.instance_id], name=key.name
        )
    row = next((r for r in rows if r.scope_key == key.scope_key), None)
    if row is None:
        raise missing
    return _served(from_row(row.type, row.value), row.name, f"variable instance {wanted}")


def variable_instance_data(call: Call) -> Response:
    return _by_id(call, history=False)


def historic_variable_instance_data(call: Call) -> Response:
    return _by_id(call, history=True)


# -- writing --------------------------------------------------------------------------------------


def _part_text(call: Call, part: str, name: str) -> str | None:
    assert call.form is not None
    value = call.form.get(part)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_request(
            f"Cannot set binary variable '{name}': form part with name '{part}' must have a "
            "text/plain value"
        )
    return value


def _media(content_type: str | None) -> tuple[str | None, dict[str, str]]:
    """A part's Content-Type as its base type and its parameters (names lower-cased)."""
    if not content_type:
        return None, {}
    base, *rest = content_type.split(";")
    params: dict[str, str] = {}
    for item in rest:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip().strip('"')
    return base.strip().lower() or None, params


def posted_value(call: Call, name: str) -> TypedValue:
    """The variable a multipart `.../data` request sets; 400 naming the variable when it does
    not fit."""
    form = call.form
    if form is None:
        raise invalid_request("The request body must be multipart/form-data")
    data = form.get("data")
    if data is None:
        raise invalid_request(
            f"Cannot set binary variable '{name}': the form part 'data' is missing"
        )
    filename: str | None = None
    content_type: str | None = None
    if isinstance(data, UploadFile):
        content = data.file.read(MAX_BINARY_BYTES + 1)
        filename, content_type = data.filename, data.content_type
    else:
        content = data.encode()
    base, params = _media(content_type)
    object_type = _part_text(call, "type", name)
    value_type = _part_text(call, "valueType", name)
    try:
        if object_type is not None:
            if base is None or "application/json" not in base:
                raise invalid_request(
                    f"Cannot set binary variable '{name}': unrecognized content type for "
                    f"serialized java type: {content_type}"
                )
            object_type_of(name, {"objectTypeName": object_type})
            try:
                parsed = loads(content.decode("utf-8"))
            except (UnicodeDecodeError, JsonSyntaxError) as exc:
                raise BadRequest(f"the 'data' part is not JSON: {exc}") from exc
            checked = typed(VariableType.JSON, parsed)
            return TypedValue(VariableType.OBJECT, checked.value, object_type)
        kind = VariableType.named(value_type or VariableType.BYTES.camunda)
        if kind not in BINARY_TYPES:
            raise invalid_request(
                f"Cannot set binary variable '{name}': unsupported value type '{value_type}'; "
                "a binary variable is Bytes or File"
            )
        if kind is VariableType.BYTES:
            return typed(kind, content)
        info = {
            "filename": filename,
            "mimeType": base or "application/octet-stream",
            "encoding": params.get("encoding") or params.get("charset"),
        }
        return typed(kind, content, info)
    except BadRequest as exc:
        raise invalid_request(f"Cannot set binary variable '{name}': {exc.message}") from exc


def post_instance_data(call: Call) -> Response:
    name = call.path["name"]
    return set_instance_variables(call, {name: posted_value(call, name)}, [])


def post_task_data(call: Call) -> Response:
    name = call.path["name"]
    return set_task_variables(call, {name: posted_value(call, name)}, [], local=False)


def post_task_local_data(call: Call) -> Response:
    name = call.path["name"]
    return set_task_variables(call, {name: posted_value(call, name)}, [], local=True)


endpoints = [
    Endpoint("/process-instance/{id}/variables/{name}/data", "GET", instance_data),
    Endpoint(
        "/process-instance/{id}/variables/{name}/data", "POST", post_instance_data, body="form"
    ),
    Endpoint("/task/{id}/variables/{name}/data", "GET", task_data),
    Endpoint("/task/{id}/variables/{name}/data", "POST", post_task_data, body="form"),
    Endpoint("/task/{id}/localVariables/{name}/data", "GET", task_local_data),
    Endpoint("/task/{id}/localVariables/{name}/data", "POST", post_task_local_data, body="form"),
    Endpoint("/variable-instance/{id}/data", "GET", variable_instance_data),
    Endpoint("/history/variable-instance/{id}/data", "GET", historic_variable_instance_data),
]
