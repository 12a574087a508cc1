"""camunda:formData of a user task or a none start event: its form fields, each checked as the
deployment is read (engine/language/forms.py says what a field may be)."""

from __future__ import annotations

from engine.bpmn.reading import (
    CAMUNDA_NS,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    element_children,
    local_name,
    namespace_of,
)
from engine.language.forms import FormField, field_problem


def read_form_fields(element: Element, ctx: Context, owner_id: str) -> tuple[FormField, ...]:
    """The camunda:formField entries of a user task's or start event's camunda:formData, each
    checked (a custom type or validator fails the deployment at the field's line)."""
    fields: list[FormField] = []
    for extensions in element.findall(bpmn_tag("extensionElements")):
        for form in extensions.findall(camunda_tag("formData")):
            if form.get("businessKey") is not None:
                message = "camunda:formData businessKey is not supported by this engine"
                raise ctx.error(message, form, owner_id)
            for child in element_children(form):
                if namespace_of(child) != CAMUNDA_NS or local_name(child) != "formField":
                    raise ctx.unsupported(child, owner_id)
                form_field = _form_field(child, ctx, owner_id)
                if any(known.id == form_field.id for known in fields):
                    message = f"form field '{form_field.id}' is declared twice"
                    raise ctx.error(message, child, owner_id)
                fields.append(form_field)
    return tuple(fields)


def _form_field(element: Element, ctx: Context, owner_id: str) -> FormField:
    field_id = element.get("id")
    if not field_id:
        raise ctx.error("camunda:formField has no id", element, owner_id)
    values: list[tuple[str, str | None]] = []
    constraints: list[tuple[str, str | None]] = []
    properties: list[tuple[str, str]] = []
    for child in element_children(element):
        local = local_name(child) if namespace_of(child) == CAMUNDA_NS else None
        if local == "value":
            values.append((child.get("id") or "", child.get("name")))
        elif local == "validation":
            for constraint in element_children(child):
                if namespace_of(constraint) != CAMUNDA_NS or local_name(constraint) != "constraint":
                    raise ctx.unsupported(constraint, owner_id)
                constraints.append((constraint.get("name") or "", constraint.get("config")))
        elif local == "properties":
            properties.extend(
                (item.get("id") or "", item.get("value") or "")
                for item in element_children(child)
                if local_name(item) == "property"
            )
        else:
            raise ctx.unsupported(child, owner_id)
    form_field = FormField(
        id=field_id,
        label=element.get("label"),
        type=element.get("type") or "string",
        default=element.get("defaultValue"),
        values=tuple(values),
        constraints=tuple(constraints),
        date_pattern=element.get("datePattern"),
        properties=tuple(properties),
    )
    problem = field_problem(form_field)
    if problem is not None:
        raise ctx.error(f"form field '{field_id}': {problem}", element, owner_id)
    return form_field
