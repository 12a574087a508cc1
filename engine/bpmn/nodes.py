"""What every flow node reads (`common_fields`: id, name, async markers, retry cycle, execution
listeners, input/output mappings, loop characteristics, documentation) and the implementation of
a service task (`read_implementation`, `service_task`), which send tasks, business rule tasks and
message throw events share."""

from __future__ import annotations

import re
from typing import Any

from engine.bpmn.alerts import check_alert_properties
from engine.bpmn.inputoutput import read_input_output
from engine.bpmn.loops import parse_loop
from engine.bpmn.reading import (
    EXECUTION_LISTENER,
    INPUT_OUTPUT,
    TASK_LISTENER,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
    check_extensions,
    described,
    element_children,
    is_handler_name,
    local_name,
    read_listeners,
    retry_cycle_problem,
)
from engine.errors import ExpressionError, ModelError
from engine.language.composite import has_expression
from engine.language.expressions import ACTS_ON_EXECUTION, compile_expression
from engine.language.mappings import InputOutput
from engine.model import EXECUTION_EVENTS, Node, SendTask, ServiceTask

_SERVICE_IMPLEMENTATION_REQUIRED = (
    "a service task needs exactly one implementation: camunda:delegateExpression, "
    'camunda:expression, camunda:class, or camunda:type="external" with camunda:topic'
)


def _input_output(element: Element, ctx: Context, node_id: str) -> InputOutput | None:
    """The node's camunda:inputOutput parameters, if it has any (where they are allowed is
    checked with the model, see `engine.model.validation.validate`)."""
    found = [
        mapping
        for extensions in element.findall(bpmn_tag("extensionElements"))
        for mapping in extensions.findall(camunda_tag(INPUT_OUTPUT))
    ]
    if not found:
        return None
    if len(found) > 1:
        raise ctx.error("more than one camunda:inputOutput", found[1], node_id)

    def fail(message: str, at: Element) -> ModelError:
        return ctx.error(message, at, node_id)

    io = read_input_output(found[0], fail)
    loop = "multiInstanceLoopCharacteristics"
    if io.outputs and any(local_name(child) == loop for child in element_children(element)):
        message = "camunda:outputParameter is not allowed on a multi-instance activity"
        raise ctx.error(message, found[0], node_id)
    return io


def _retry_cycle(element: Element, ctx: Context, node_id: str) -> str | None:
    allowed = {EXECUTION_LISTENER} | (
        {TASK_LISTENER} if local_name(element) == "userTask" else set()
    )
    retry = check_extensions(element, ctx, node_id, frozenset(allowed))
    if retry is None:
        return None
    text = "".join(retry.itertext()).strip()
    problem = retry_cycle_problem(text)
    if problem is not None:
        raise ctx.error(problem, retry, node_id)
    return text


def priority_of(element: Element, ctx: Context, name: str) -> int | str | None:
    """camunda:jobPriority or camunda:taskPriority: an integer, or a `${...}` expression or a
    composite text that must give one when it is used (None: not given)."""
    text = element.get(camunda_tag(name))
    if text is None:
        return None
    text = text.strip()
    if has_expression(text):
        return ctx.checked_text(element, f"camunda:{name}", text)
    if re.fullmatch(r"[+-]?[0-9]+", text) and abs(int(text)) < 2**63:
        return int(text)
    raise ctx.error(
        f"camunda:{name} must be an integer or a ${{...}} expression, not '{text}'",
        element,
        element.get("id"),
    )


def common_fields(element: Element, ctx: Context) -> dict[str, Any]:
    node_id = element.get("id")  # present: see generate_ids
    # camunda:jobPriority (here and on the process): due jobs are taken highest priority first.
    # camunda:exclusive is read (it must be true or false) and changes nothing: every command
    # of an instance holds the instance's row lock, so its jobs never run at the same time,
    # which is what exclusive="true" asks of Camunda (and stricter than exclusive="false").
    ctx.boolean(element, camunda_tag("exclusive"), default=True)
    check_alert_properties(element, ctx, node_id)
    return {
        "id": node_id,
        "name": element.get("name"),
        "async_before": ctx.boolean(element, camunda_tag("asyncBefore"))
        or ctx.boolean(element, camunda_tag("async")),
        "async_after": ctx.boolean(element, camunda_tag("asyncAfter")),
        "retry_cycle": _retry_cycle(element, ctx, node_id),
        "job_priority": priority_of(element, ctx, "jobPriority"),
        "listeners": read_listeners(element, ctx, node_id, EXECUTION_LISTENER, EXECUTION_EVENTS),
        "io": _input_output(element, ctx, node_id),
        "loop": parse_loop(element, ctx, node_id),
        "is_for_compensation": ctx.boolean(element, "isForCompensation"),
        "line": element.sourceline,
        **described(element),
    }


def _handler_expression(
    element: Element, ctx: Context, attribute: str, value: str, owner_id: str
) -> str:
    try:
        name = compile_expression(value).identifier
    except ExpressionError as error:
        raise ctx.error(f"camunda:{attribute}: {error.message}", element, owner_id) from None
    if name is None:
        message = f"camunda:{attribute} must name a handler as ${{name}}, not {value}"
        raise ctx.error(message, element, owner_id)
    return name


def read_implementation(
    element: Element,
    ctx: Context,
    owner_id: str,
    what: str = "a service task",
    evaluates: bool = False,
) -> dict[str, Any]:
    """The service-task implementation written on `element` (a service or send task, or a
    message throw event's messageEventDefinition): a handler by camunda:delegateExpression,
    camunda:expression or camunda:class, or camunda:type="external" with camunda:topic; with its
    camunda:resultVariable and camunda:taskPriority. Several, or none, are the caller's concern.
    Where it `evaluates` (a service or send task), a camunda:expression that is more than a name
    is an expression to evaluate."""

    def error(message: str) -> ModelError:
        return ctx.error(message, element, owner_id)

    handlers: list[str] = []
    expression = None
    for attribute in ("delegateExpression", "expression"):
        value = element.get(camunda_tag(attribute))
        if value is None:
            continue
        if evaluates and attribute == "expression" and not _names_handler(value):
            try:
                expression = compile_expression(value, ACTS_ON_EXECUTION)
            except ExpressionError as exc:
                raise error(f"camunda:expression: {exc.message}") from None
        else:
            handlers.append(_handler_expression(element, ctx, attribute, value, owner_id))
    class_name = element.get(camunda_tag("class"))
    if class_name is not None:
        if not is_handler_name(class_name):
            raise error(f"camunda:class '{class_name}' is not a class name")
        handlers.append(class_name)
    kind = element.get(camunda_tag("type"))
    topic = element.get(camunda_tag("topic"))
    if kind is not None and kind != "external":
        raise error(f'camunda:type="{kind}" is not supported by this engine')
    if kind == "external" and not topic:
        raise error('camunda:type="external" needs a camunda:topic')
    if topic is not None and kind != "external":
        raise error('camunda:topic needs camunda:type="external"')
    if topic is not None:
        topic = ctx.checked_text(element, "camunda:topic", topic)
    if len(handlers) + (topic is not None) + (expression is not None) > 1:
        raise error(_SERVICE_IMPLEMENTATION_REQUIRED.replace("a service task", what))
    task_priority = priority_of(element, ctx, "taskPriority") or 0
    found = {
        "handler": handlers[0] if handlers else None,
        "topic": topic,
        "result_variable": element.get(camunda_tag("resultVariable")),
        "task_priority": task_priority,
    }
    return {**found, "expression": expression} if evaluates else found


def _names_handler(value: str) -> bool:
    """`${name}`: a handler's name (a text that does not compile is reported as the handler's)."""
    try:
        return compile_expression(value, ACTS_ON_EXECUTION).identifier is not None
    except ExpressionError:
        return True


def service_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    send = local_name(element) == "sendTask"
    what = "a send task" if send else "a service task"
    implementation = read_implementation(element, ctx, common["id"], what, evaluates=True)
    if all(implementation[key] is None for key in ("handler", "topic", "expression")):
        raise ctx.error(_SERVICE_IMPLEMENTATION_REQUIRED.replace("a service task", what), element)
    return (SendTask if send else ServiceTask)(**common, **implementation)
