"""Generated forms in the console: a task's form in the inbox and the inspector, a start form on
the definition page. Each input has the HTML type and attributes of its field; the server is the
judge of what is valid: a refused submission comes back as the same form with each error next to
its field and the entered values kept, and nothing written."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app import reads
from app.auth import require
from app.console.common import engine_of, flash, read, refusal, render
from app.errors import status_of
from engine.api import Engine, UserTaskView
from engine.errors import BadRequest, InterlockError
from engine.language.forms import Form, FormField, FormInvalid, input_text, shown_value
from engine.language.variables import TypedValue
from engine.model import ProcessModel, UserTask
from engine.queries.definitions import DefinitionRow

# Where the inbox and the inspector show the result of a task action.
TO_TASK_FLASH = {"HX-Retarget": "#flash-user_tasks", "HX-Reswap": "innerHTML"}
INPUT_TYPES = {"string": "text", "long": "number", "boolean": "checkbox", "date": "date"}


@dataclass(frozen=True)
class FieldInput:
    """One field as the template draws it: the input's type, its text (or checked state), the
    constraint attributes and the error of the last submission, if any."""

    field: FormField
    kind: str
    text: str
    error: str | None = None
    attributes: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def checked(self) -> bool:
        return self.text == "true"


@dataclass(frozen=True)
class FormView:
    """A generated form ready to draw: where it posts, its inputs, and an id unique on the page."""

    action: str
    dom_id: str
    inputs: tuple[FieldInput, ...]
    button: str
    invalid: bool = False


def _attributes(form_field: FormField) -> dict[str, str]:
    """HTML attributes for the field's constraints (read-only fields are drawn disabled)."""
    found: dict[str, str] = {}
    if form_field.required:
        found["required"] = "required"
    for constraint in ("minlength", "maxlength", "min", "max"):
        bound = form_field.bound(constraint)
        if bound is not None:
            found[constraint] = str(bound)
    if form_field.readonly:
        found["disabled"] = "disabled"
    return found


def _inputs(
    form: Form, entered: Mapping[str, str] | None, errors: Mapping[str, str]
) -> tuple[FieldInput, ...]:
    inputs: list[FieldInput] = []
    for form_field in form.fields:
        error = errors.get(form_field.id)
        if entered is not None and not form_field.readonly:
            text = entered.get(form_field.id, "")
        else:
            try:
                text = input_text(form_field, shown_value(form_field, form.variables))
            except BadRequest as problem:
                text, error = "", error or problem.message
        kind = "select" if form_field.type == "enum" else INPUT_TYPES[form_field.type]
        inputs.append(FieldInput(form_field, kind, text, error, _attributes(form_field)))
    return tuple(inputs)


def task_form_view(
    task_id: UUID,
    form: Form,
    entered: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
) -> FormView:
    return FormView(
        action=f"/tasks/{task_id}/form",
        dom_id=f"task-form-{task_id}",
        inputs=_inputs(form, entered, errors or {}),
        button="Complete",
        invalid=bool(errors),
    )


def start_form_view(
    definition: DefinitionRow,
    form: Form,
    entered: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
) -> FormView:
    return FormView(
        action=f"/definitions/{definition.key}/start?version={definition.version}",
        dom_id=f"start-form-{definition.key}",
        inputs=_inputs(form, entered, errors or {}),
        button="Start instance",
        invalid=bool(errors),
    )


def task_forms(engine: Engine, tasks: Sequence[UserTaskView]) -> dict[UUID, FormView]:
    """The generated forms of those open tasks whose node declares one: each model is asked once,
    and an instance's variables are read only for a task that has a form."""
    views: dict[UUID, FormView] = {}
    models: dict[str, ProcessModel] = {}
    variables: dict[UUID, dict[str, TypedValue]] = {}
    for task in tasks:
        if task.definition_id is None or task.definition_key is None or task.instance_id is None:
            continue  # a standalone task has no form
        if task.definition_id not in models:
            models[task.definition_id] = reads.model(
                engine, task.definition_id, task.definition_key
            )
        model = models[task.definition_id]
        node = model.node(task.node_id) if model.has_node(task.node_id) else None
        if not isinstance(node, UserTask) or not node.form_fields:
            continue
        if task.instance_id not in variables:
            variables[task.instance_id] = reads.typed_variables(engine, task.instance_id)
        form = Form(node.form_fields, variables[task.instance_id])
        views[task.id] = task_form_view(task.id, form)
    return views


def start_form(engine: Engine, definition: DefinitionRow) -> FormView | None:
    form = reads.start_form(engine, definition)
    return start_form_view(definition, form) if form.fields else None


async def entered_values(request: Request) -> dict[str, str]:
    submitted = await request.form()
    return {name: value for name, value in submitted.items() if isinstance(value, str)}


async def submit_task_form(request: Request) -> Response:
    engine = engine_of(request)
    task_id: UUID = request.path_params["task_id"]
    try:
        require(request)
        entered = await entered_values(request)
        await run_in_threadpool(engine.complete_task, task_id, None, form=entered)
    except FormInvalid as invalid:
        try:
            _, form = await read(request, engine.task_form, task_id)
        except InterlockError as error:
            return flash(request, error=error)
        view = task_form_view(task_id, form, entered, invalid.errors)
        return render(request, "_generated_form.html", {"form": view}, status_code=400)
    except InterlockError as error:
        return render(
            request,
            "_flash.html",
            refusal(error),
            status_code=status_of(error),
            headers=TO_TASK_FLASH,
        )
    # The task's row goes with the refresh that follows: the result shows above the list.
    return render(
        request,
        "_flash.html",
        {"ok": True, "message": "Task completed."},
        headers={"HX-Trigger": "interlock:changed", **TO_TASK_FLASH},
    )


routes = [
    Route("/tasks/{task_id:uuid}/form", submit_task_form, methods=["POST"]),
]
