"""Generated forms (camunda:formData) rendered as HTML, as Camunda's `GET /task/{id}/rendered-form`
and the process definition's `rendered-form` serve them to Tasklist's embedded-form runtime: one
control per field, named by `cam-variable-name` and typed by `cam-variable-type` (String, Long,
Boolean, Date), an enum a select of its values, with `required` and `readonly` as attributes.
Every text from the model is escaped; the answer carries the raw-file headers."""

from __future__ import annotations

from html import escape

from starlette.responses import Response

from app import reads
from app.camunda.definitions import _by_id, _by_key
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint
from app.guard import raw_file_headers
from app.params import as_uuid
from engine.errors import NotFound
from engine.language.forms import Form, FormField
from engine.queries.definitions import DefinitionRow

# Camunda's variable types of the form field types.
_TYPES = {"string": "String", "long": "Long", "boolean": "Boolean", "date": "Date"}


def _control(field: FormField) -> str:
    name = escape(field.id)
    flags = "".join(f' {c}="{c}"' for c in ("required", "readonly") if field.has(c))
    if field.type == "enum":
        options = "".join(
            f'<option value="{escape(value)}">{escape(label or value)}</option>'
            for value, label in field.values
        )
        return (
            f'<select class="form-control" name="{name}" cam-variable-name="{name}" '
            f'cam-variable-type="String"{flags}>{options}</select>'
        )
    kind = "checkbox" if field.type == "boolean" else "text"
    css = "" if field.type == "boolean" else ' class="form-control"'
    return (
        f'<input type="{kind}"{css} name="{name}" cam-variable-name="{name}" '
        f'cam-variable-type="{_TYPES[field.type]}"{flags} />'
    )


def render(form: Form) -> str:
    """The form's HTML (XHTML: every element closed)."""
    groups = "".join(
        '<div class="form-group">'
        f'<label for="{escape(f.id)}">{escape(f.label or f.id)}</label>'
        f'<div class="controls">{_control(f)}</div>'
        "</div>\n"
        for f in form.fields
    )
    return f'<form class="form-horizontal">\n{groups}</form>\n'


def _served(form: Form, missing: str) -> Response:
    if not form.fields:
        raise invalid_request(missing, 404)
    return Response(render(form), media_type="application/xhtml+xml", headers=raw_file_headers())


def task_rendered_form(call: Call) -> Response:
    task_id = call.path["id"]
    missing = f"No matching rendered form for task with the id {task_id} found."
    try:
        _, form = reads.task_form(call.engine, as_uuid(task_id))
    except NotFound:
        raise invalid_request(missing, 404) from None
    return _served(form, missing)


def _start_form(call: Call, definition: DefinitionRow) -> Response:
    missing = (
        f"No matching rendered start form for process definition with the id {definition.id} found."
    )
    return _served(reads.start_form(call.engine, definition), missing)


def start_form_by_id(call: Call) -> Response:
    return _start_form(call, _by_id(call))


def start_form_by_key(call: Call) -> Response:
    return _start_form(call, _by_key(call))


endpoints = [
    Endpoint("/task/{id}/rendered-form", "GET", task_rendered_form),
    Endpoint("/process-definition/key/{key}/rendered-form", "GET", start_form_by_key),
    Endpoint("/process-definition/{id}/rendered-form", "GET", start_form_by_id),
]
