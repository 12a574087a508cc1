"""Generated forms (camunda:formData) as Camunda's REST API serves them: the form variables of a
task or a start form, the form keys, and submitting a form (a task's, or a start form's, which
starts an instance).

Form variables answer `{name: {type, value, valueInfo}}`: each field's current variable (a task's)
or its default, typed as Camunda's form types give them (Long, Boolean, String; dates as
`dd/MM/yyyy` text); a task's answer goes on with the other variables in scope. `variableNames`
keeps only the names it lists. A submitted form is checked like the console's: a value that does
not fit its field is a 400 naming the field, and nothing is written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from starlette.responses import Response

from app import reads
from app.camunda import dto
from app.camunda.definitions import _by_id, _by_key
from app.camunda.errors import rest_error
from app.camunda.http import Call, Endpoint, json_response, no_content
from app.camunda.variables import dto_map, to_typed_map, wants_serialized
from app.params import as_uuid
from engine.errors import InterlockError, NotFound
from engine.language.forms import Form, FormInvalid
from engine.language.variables import TypedValue
from engine.model import UserTask
from engine.queries.definitions import DefinitionRow
from engine.queries.work import TaskRow


def _task_form(call: Call, doing: str) -> tuple[TaskRow, Form]:
    task_id = call.path["id"]
    try:
        return reads.task_form(call.engine, as_uuid(task_id))
    except NotFound as exc:
        message = f"Cannot {doing} for task {task_id}: Cannot find task with id '{task_id}'."
        raise rest_error(404, message, exc) from exc
    except InterlockError as exc:
        raise rest_error(400, f"Cannot {doing} for task {task_id}: {exc.message}", exc) from exc


def _selected(call: Call, values: Mapping[str, TypedValue]) -> Response:
    names = call.csv("variableNames")
    chosen = values if names is None else {k: v for k, v in values.items() if k in names}
    return json_response(dto_map(chosen, serialized=wants_serialized(call)))


def task_form_variables(call: Call) -> Response:
    _, form = _task_form(call, "get form variables")
    try:
        values = form.values()
    except InterlockError as exc:
        raise rest_error(400, f"Cannot get form variables: {exc.message}", exc) from exc
    # The fields first, then the other variables in scope, as Camunda answers.
    return _selected(
        call, {**values, **{k: v for k, v in form.variables.items() if k not in values}}
    )


def _start_form_variables(call: Call, row: DefinitionRow) -> Response:
    form = reads.start_form(call.engine, row)
    try:
        values = form.values()
    except InterlockError as exc:
        raise rest_error(400, f"Cannot get start form variables: {exc.message}", exc) from exc
    return _selected(call, values)


def start_form_variables_by_id(call: Call) -> Response:
    return _start_form_variables(call, _by_id(call))


def start_form_variables_by_key(call: Call) -> Response:
    return _start_form_variables(call, _by_key(call))


def task_form_key(call: Call) -> Response:
    task, _ = _task_form(call, "get form")
    key = None
    if task.definition_id is not None and task.definition_key is not None:  # not standalone
        model = reads.model(call.engine, task.definition_id, task.definition_key)
        node = model.node(task.node_id)
        key = node.form_key if isinstance(node, UserTask) else None
    return json_response({"key": key, "camundaFormRef": None, "contextPath": None})


def _start_form_key(call: Call, row: DefinitionRow) -> Response:
    model = reads.model(call.engine, row.id, row.key)
    key = model.initial.form_key if model.initial is not None else None
    return json_response({"key": key, "camundaFormRef": None, "contextPath": None})


def start_form_key_by_id(call: Call) -> Response:
    return _start_form_key(call, _by_id(call))


def start_form_key_by_key(call: Call) -> Response:
    return _start_form_key(call, _by_key(call))


def _split(call: Call, form: Form) -> tuple[dict[str, Any], dict[str, TypedValue]]:
    """The submitted variables: the fields' plain values (typed by the form), and the rest."""
    submitted = to_typed_map(call.field("variables"))
    ids = {f.id for f in form.fields}
    fields = {name: value.value for name, value in submitted.items() if name in ids}
    return fields, {name: value for name, value in submitted.items() if name not in ids}


def _submit_start_form(call: Call, row: DefinitionRow) -> Response:
    fields, others = _split(call, reads.start_form(call.engine, row))
    business_key = call.body_text("businessKey")
    try:
        handle = call.engine.start_definition(
            row.id, others, business_key=business_key, form=fields
        )
    except InterlockError as exc:
        message = f"Cannot instantiate process definition {row.id}: {exc.message}"
        raise rest_error(400, message, exc) from exc
    return json_response(dto.instance_from_info(call.base, reads.instance(call.engine, handle.id)))


def submit_start_form_by_id(call: Call) -> Response:
    return _submit_start_form(call, _by_id(call))


def submit_start_form_by_key(call: Call) -> Response:
    return _submit_start_form(call, _by_key(call))


def submit_task_form(call: Call) -> Response:
    task_id = call.path["id"]
    _, form = _task_form(call, "submit task form")
    fields, others = _split(call, form)
    with_variables = call.body_flag("withVariablesInReturn")
    engine = call.engine
    try:
        result = engine.complete_task(task_id, others, form=fields)
    except FormInvalid as exc:
        raise rest_error(400, f"Cannot submit task form {task_id}: {exc.message}", exc) from exc
    except InterlockError as exc:
        status = 404 if isinstance(exc, NotFound) else 400
        message = f"Cannot submit task form {task_id}: {exc.message}"
        raise rest_error(status, message, exc) from exc
    if with_variables:
        values = reads.typed_variables(engine, UUID(result.instance_id))
        return json_response(dto_map(values))
    return no_content()


endpoints = [
    Endpoint("/task/{id}/form", "GET", task_form_key),
    Endpoint("/task/{id}/form-variables", "GET", task_form_variables),
    Endpoint("/task/{id}/submit-form", "POST", submit_task_form, body="json"),
    Endpoint("/process-definition/key/{key}/startForm", "GET", start_form_key_by_key),
    Endpoint(
        "/process-definition/key/{key}/form-variables",
        "GET",
        start_form_variables_by_key,
    ),
    Endpoint(
        "/process-definition/key/{key}/submit-form",
        "POST",
        submit_start_form_by_key,
        body="json",
    ),
    Endpoint("/process-definition/{id}/startForm", "GET", start_form_key_by_id),
    Endpoint("/process-definition/{id}/form-variables", "GET", start_form_variables_by_id),
    Endpoint(
        "/process-definition/{id}/submit-form",
        "POST",
        submit_start_form_by_id,
        body="json",
    ),
]
