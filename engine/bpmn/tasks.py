"""The readers of the tasks that are not service-like: script, user, none and manual, and
receive tasks (service and send tasks: nodes.py; business rules: rules.py; calls: calls.py)."""

from __future__ import annotations

from typing import Any

from engine.bpmn.events import referenced
from engine.bpmn.formdata import read_form_fields
from engine.bpmn.nodes import common_fields
from engine.bpmn.reading import (
    TASK_LISTENER,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
    local_name,
    read_listeners,
    read_script,
)
from engine.language.expressions import ACTS_ON_EXECUTION
from engine.model import (
    TASK_EVENTS,
    Node,
    NoneTask,
    ReceiveTask,
    ScriptTask,
    UserTask,
)


def receive_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    if ctx.boolean(element, "instantiate"):
        raise ctx.error('a receive task with instantiate="true" is not supported', element)
    name = None
    if element.get("messageRef"):
        name = referenced(element, ctx, common["id"], "messageRef", "message", ctx.messages)
    return ReceiveTask(**common, message_name=name)


def script_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx, frozenset({"script"}))
    scripts = element.findall(bpmn_tag("script"))
    if len(scripts) > 1:
        raise ctx.error("a script task has more than one script", scripts[1])
    text = "".join(scripts[0].itertext()) if scripts else ""
    script = read_script(
        element,
        ctx,
        common["id"],
        element.get("scriptFormat"),
        text,
        element.get(camunda_tag("resource")),
        ACTS_ON_EXECUTION,
    )
    result = element.get(camunda_tag("resultVariable"))
    if result is not None and not result.strip():
        raise ctx.error("camunda:resultVariable is empty", element)
    return ScriptTask(**common, script=script, result_variable=result)


_USER_TASK_ATTRIBUTES = {
    "assignee": "assignee",
    "candidateUsers": "candidate_users",
    "candidateGroups": "candidate_groups",
    "dueDate": "due_date",
    "followUpDate": "follow_up_date",
    "priority": "priority",
    "formKey": "form_key",
}


def user_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    if common["name"] is not None:
        # Camunda evaluates a user task's name (`Review ${loopCounter}`): it must compile.
        ctx.checked_text(element, "name", common["name"])
    fields: dict[str, Any] = {}
    for attribute, field_name in _USER_TASK_ATTRIBUTES.items():
        value = element.get(camunda_tag(attribute))
        fields[field_name] = (
            None if value is None else ctx.checked_text(element, f"camunda:{attribute}", value)
        )
    listeners = read_listeners(element, ctx, common["id"], TASK_LISTENER, TASK_EVENTS)
    form_fields = read_form_fields(element, ctx, common["id"])
    return UserTask(**common, **fields, task_listeners=listeners, form_fields=form_fields)


def task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    return NoneTask(**common, manual=local_name(element) == "manualTask")
