"""BPMN 2.0 XML (as Camunda Modeler saves it) to `ProcessModel`s.

Parsing is hardened: no DTD of any kind, no entities, no network, a size limit. Every flow element
is either understood or rejected with a ModelError naming the file, line and element; only
decoration with no execution meaning (documentation, lanes, annotations, diagrams...) is skipped.
Camunda extension elements are understood (`camunda:failedJobRetryTimeCycle`), accepted when they
only describe (`IGNORED_EXTENSIONS`; `camunda:properties` and `bpmn:documentation` are kept on the
model as read-only data), or rejected: the listeners, input/output mappings and the
like change what Camunda executes, and this engine does not execute them.

A flow node or sequence flow without an id (Camunda accepts them) gets one derived from the file
alone (see `generate_ids`), so every parse of the same file names it the same way. A reference
may be a prefixed QName (`messageRef="tns:Message_1"`): a prefix declared for any namespace is
dropped and the local part names an element of the same definitions, as Camunda resolves it.
Files written for the legacy `http://activiti.org/bpmn` extension namespace read as the current
camunda namespace, element and attribute alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.calls import call_activity, read_mapping
from engine.bpmn.compensation import compensate_trigger, link_handlers
from engine.bpmn.conditional import parse_conditional
from engine.bpmn.nodes import common_fields, read_implementation, service_task
from engine.bpmn.reading import (
    ACTIVITI_NS,
    BPMN_NS,
    CAMUNDA_NS,
    DECORATION,
    EXECUTION_LISTENER,
    FLOW_NODES,
    SAFE_PARSER,
    TASK_LISTENER,
    UTF8_PARSER,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
    definition_children,
    described,
    element_children,
    is_loop,
    load_bytes,
    local_name,
    namespace_of,
    plain_extensions,
    read_listeners,
    read_script,
)
from engine.bpmn.rules import business_rule_task
from engine.errors import ExpressionError, ModelError
from engine.expressions import compile_expression
from engine.forms import FormField, field_problem
from engine.history_ttl import parse_history_ttl
from engine.model import (
    DEFAULT_LIMITS,
    EXECUTION_EVENTS,
    TAKE_EVENT,
    TASK_EVENTS,
    BoundaryEvent,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    ModelLimits,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    ScriptCondition,
    ScriptTask,
    SequenceFlow,
    StartEvent,
    SubProcess,
    TimerDefinition,
    TimerKind,
    UserTask,
)
from engine.timers import DEFAULT_LIMITS as DEFAULT_TIMER_LIMITS
from engine.timers import TIMER_KINDS, TimerLimits, validate_timer
from engine.validation import validate

# The default size limit; a deployment's settings may raise it (see ModelLimits).

# The default size limit; a deployment's settings may raise it (see ModelLimits).
MAX_BPMN_BYTES = DEFAULT_LIMITS.max_bytes


_TIMER_KINDS: dict[str, TimerKind] = {
    "timeDate": "date",
    "timeDuration": "duration",
    "timeCycle": "cycle",
}


def timer_problem(
    kind: str, text: str, limits: TimerLimits | None = DEFAULT_TIMER_LIMITS
) -> str | None:
    """Why a timer's text cannot be deployed, or None. A `${...}` text must be one safe expression
    (it is resolved when the timer starts); any other text must be a valid ISO 8601 date, duration
    or cycle of that kind."""
    if kind not in TIMER_KINDS:
        return f"'{kind}' is not a timer kind (date, duration or cycle)"
    if not text.strip():
        return "the timer text is empty"
    if "${" in text or "#{" in text:
        try:
            compile_expression(text)
        except ExpressionError as error:
            return error.message
        return None
    try:
        validate_timer(kind, text, limits)
    except ValueError as error:
        return str(error)
    return None


def _form_fields(element: Element, ctx: Context, owner_id: str) -> tuple[FormField, ...]:
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


_TIMER = "timerEventDefinition"


_MESSAGE = "messageEventDefinition"


_SIGNAL = "signalEventDefinition"


_ERROR = "errorEventDefinition"


_ESCALATION = "escalationEventDefinition"


_LINK = "linkEventDefinition"


# What this engine does not run, and says so by name (see docs/camunda-compat.md).
_TRANSACTIONS = "transaction subprocesses and their cancel events are refused"


_COMPENSATE = "compensateEventDefinition"


_CONDITIONAL = "conditionalEventDefinition"


def _event_definitions(element: Element, ctx: Context, allowed: tuple[str, ...]) -> Element | None:
    """The single event definition of an event, if it is one this engine supports."""
    definitions = [
        child
        for child in element_children(element)
        if local_name(child).endswith("EventDefinition")
        or local_name(child) == "eventDefinitionRef"
    ]
    for definition in definitions:
        written = local_name(definition)
        if written not in allowed:
            message = f"{local_name(element)} with {written} is not supported by this engine"
            if written == "cancelEventDefinition":
                message = f"{message} ({_TRANSACTIONS})"
            raise ctx.error(message, definition, element.get("id"))
    if len(definitions) > 1:
        raise ctx.error("an event with several event definitions is not supported", element)
    check_children(element, ctx, frozenset(allowed))
    return definitions[0] if definitions else None


_EVENT_WORDS = {
    "startEvent": "start event",
    "endEvent": "end event",
    "intermediateThrowEvent": "throw event",
    "intermediateCatchEvent": "catch event",
    "boundaryEvent": "boundary event",
}


def _referenced(
    element: Element,
    ctx: Context,
    event_id: str,
    attribute: str,
    kind: str,
    table: dict[str, str | None],
) -> str:
    """The name of the bpmn:message or bpmn:signal that `attribute` of `element` (an event
    definition or a receive task) refers to."""
    written = element.get(attribute)
    if not written:
        owner = element.getparent() if local_name(element).endswith("EventDefinition") else element
        what = (
            f"{kind} {_EVENT_WORDS[local_name(owner)]}"
            if local_name(owner) in _EVENT_WORDS
            else None
        )
        raise ctx.error(f"{what or local_name(owner)} has no {attribute}", element, event_id)
    ref = ctx.resolve(element, written, attribute, event_id)
    if ref not in table:
        raise ctx.error(f"{attribute} '{written}' names no bpmn:{kind}", element, event_id)
    name = table[ref]
    if not name:
        raise ctx.error(f"{kind} '{ref}' has no name", element, event_id)
    return name


def _trigger(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """Model fields for a timer, message, signal or error event definition."""
    local = local_name(definition)
    if local == _TIMER:
        return {"timer": _timer(definition, ctx, event_id)}
    if local == _COMPENSATE:
        return compensate_trigger(definition, ctx, event_id)
    if local == _CONDITIONAL:
        return {"conditional": parse_conditional(definition, ctx, event_id)}
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    if local == _MESSAGE:
        return {
            "message_name": _referenced(
                definition, ctx, event_id, "messageRef", "message", ctx.messages
            )
        }
    if local == _SIGNAL:
        name = _referenced(definition, ctx, event_id, "signalRef", "signal", ctx.signals)
        return {"signal_name": name, **_signal_inputs(definition, ctx, event_id)}
    if local == _ERROR:
        caught = _error_variables(definition, ctx, event_id)
        ref = ctx.ref(definition, "errorRef", event_id)
        if not ref:
            return {"is_error": True, "error_code": None, **caught}
        if ref not in ctx.errors:
            written = definition.get("errorRef")
            raise ctx.error(f"errorRef '{written}' names no bpmn:error", definition, event_id)
        return {"is_error": True, "error_code": ctx.errors[ref], **caught}
    if local == _ESCALATION:
        return _escalation(definition, ctx, event_id)
    if local == _LINK:
        return _link(definition, ctx, event_id)
    return {}  # terminateEventDefinition: the caller knows


def _signal_inputs(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """The camunda:in mappings of a signal throw event's definition: the variables the signal
    carries (every one, one by name or by expression, from what the throwing token sees or,
    `local`, from the event's own locals), as Camunda 7 passes them."""
    throwing = local_name(definition.getparent()) in ("intermediateThrowEvent", "endEvent")
    inputs = []
    for extensions in definition.findall(bpmn_tag("extensionElements")):
        for child in element_children(extensions):
            if namespace_of(child) != CAMUNDA_NS or local_name(child) != "in":
                continue  # checked with the definition's other extensions
            if not throwing:
                raise ctx.unsupported(child, event_id)
            mapping = read_mapping(child, ctx, event_id)
            if mapping.business_key:
                message = "camunda:in businessKey on a signal is not supported by this engine"
                raise ctx.error(message, child, event_id)
            inputs.append(mapping)
    return {"signal_inputs": tuple(inputs)} if inputs else {}


def _escalation(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """An escalation event's code: its escalationRef's bpmn:escalation's escalationCode. A
    catching event (boundary, event subprocess start) without one catches every escalation and
    may name the variable that receives the code (camunda:escalationCodeVariable); a throwing
    one needs both the reference and the code."""
    owner = local_name(definition.getparent())
    catching = owner in ("boundaryEvent", "startEvent")
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    found: dict[str, Any] = {"is_escalation": True, "escalation_code": None}
    variable = definition.get(camunda_tag("escalationCodeVariable"))
    if variable is not None:
        if not catching:
            message = (
                "camunda:escalationCodeVariable belongs on an escalation event that catches, "
                f"not on {owner}"
            )
            raise ctx.error(message, definition, event_id)
        if not variable.strip() or "${" in variable or "#{" in variable:
            message = "camunda:escalationCodeVariable must name a variable"
            raise ctx.error(message, definition, event_id)
        found["escalation_code_variable"] = variable.strip()
    ref = ctx.ref(definition, "escalationRef", event_id)
    if not ref:
        if not catching:
            message = f"an escalation {_EVENT_WORDS[owner]} needs an escalationRef"
            raise ctx.error(message, definition, event_id)
        return found
    if ref not in ctx.escalations:
        written = definition.get("escalationRef")
        raise ctx.error(f"escalationRef '{written}' names no bpmn:escalation", definition, event_id)
    code = ctx.escalations[ref]
    if code is None and not catching:
        message = f"escalation '{ref}' has no escalationCode, which a throwing event needs"
        raise ctx.error(message, definition, event_id)
    return {**found, "escalation_code": code}


def _link(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """A link event's name: a link throw event leads to the link catch event of the same name in
    its scope."""
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    name = (definition.get("name") or "").strip()
    if not name:
        raise ctx.error("a linkEventDefinition needs a name", definition, event_id)
    return {"link_name": name}


_ERROR_VARIABLES = {
    "errorCodeVariable": "error_code_variable",
    "errorMessageVariable": "error_message_variable",
}


def _error_variables(definition: Element, ctx: Context, event_id: str) -> dict[str, str]:
    """camunda:errorCodeVariable / errorMessageVariable of a catching error event (a boundary
    event or an event subprocess's start): the variables the caught code and message go to."""
    found: dict[str, str] = {}
    for attribute, field_name in _ERROR_VARIABLES.items():
        value = definition.get(camunda_tag(attribute))
        if value is None:
            continue
        owner = local_name(definition.getparent())
        if owner not in ("boundaryEvent", "startEvent"):
            message = f"camunda:{attribute} belongs on an error event that catches, not on {owner}"
            raise ctx.error(message, definition, event_id)
        if not value.strip() or "${" in value or "#{" in value:
            raise ctx.error(f"camunda:{attribute} must name a variable", definition, event_id)
        found[field_name] = value.strip()
    return found


def _timer(definition: Element, ctx: Context, event_id: str) -> TimerDefinition:
    specs = definition_children(definition, ctx, event_id)
    if len(specs) != 1 or local_name(specs[0]) not in _TIMER_KINDS:
        raise ctx.error(
            "a timer needs exactly one of timeDate, timeDuration or timeCycle", definition, event_id
        )
    spec = specs[0]
    text = "".join(spec.itertext()).strip()
    if not text:
        raise ctx.error(f"{local_name(spec)} is empty", spec, event_id)
    kind = _TIMER_KINDS[local_name(spec)]
    problem = timer_problem(kind, text, ctx.limits.timers if ctx.limits is not None else None)
    if problem is not None:
        raise ctx.error(f"{local_name(spec)}: {problem}", spec, event_id)
    return TimerDefinition(kind=kind, text=text)


def _start_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    definition = _event_definitions(
        element, ctx, (_MESSAGE, _TIMER, _SIGNAL, _ERROR, _ESCALATION, _COMPENSATE, _CONDITIONAL)
    )
    trigger = {} if definition is None else _trigger(definition, ctx, common["id"])
    interrupting = ctx.boolean(element, "isInterrupting", default=True)
    form_key = element.get(camunda_tag("formKey"))
    if form_key is not None:
        form_key = ctx.checked_text(element, "camunda:formKey", form_key)
    initiator = element.get(camunda_tag("initiator"))
    if initiator is not None and (not initiator.strip() or "${" in initiator):
        raise ctx.error("camunda:initiator must name a variable", element)
    return StartEvent(
        **common,
        **trigger,
        interrupting=interrupting,
        form_key=form_key,
        form_fields=_form_fields(element, ctx, common["id"]),
        initiator=initiator.strip() if initiator else None,
    )


def _message_throw(definition: Element, ctx: Context, event_id: str) -> dict[str, Any]:
    """A message throw event's fields: its messageRef's message when it names one (optional on
    a throw event), and its implementation, written on the messageEventDefinition as Camunda
    Modeler writes it. With no implementation it passes the token on, as in Camunda 7."""
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    name = None
    if definition.get("messageRef"):
        name = _referenced(definition, ctx, event_id, "messageRef", "message", ctx.messages)
    implementation = read_implementation(definition, ctx, event_id, "a message throw event")
    return {"is_message": True, "message_name": name, **implementation}


def _end_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    allowed = ("terminateEventDefinition", _ERROR, _MESSAGE, _ESCALATION, _SIGNAL, _COMPENSATE)
    definition = _event_definitions(element, ctx, allowed)
    if definition is None:
        return EndEvent(**common)
    if local_name(definition) == _MESSAGE:
        return EndEvent(**common, **_message_throw(definition, ctx, common["id"]))
    if local_name(definition) in (_ERROR, _ESCALATION, _SIGNAL, _COMPENSATE):
        return EndEvent(**common, **_trigger(definition, ctx, common["id"]))
    plain_extensions(definition, ctx, common["id"])
    return EndEvent(**common, terminate=True)


def _intermediate_throw_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    definition = _event_definitions(
        element, ctx, (_SIGNAL, _MESSAGE, _ESCALATION, _LINK, _COMPENSATE)
    )
    if definition is not None and local_name(definition) == _MESSAGE:
        return IntermediateThrowEvent(**common, **_message_throw(definition, ctx, common["id"]))
    trigger = {} if definition is None else _trigger(definition, ctx, common["id"])
    return IntermediateThrowEvent(**common, **trigger)


def _intermediate_catch_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    definition = _event_definitions(element, ctx, (_TIMER, _MESSAGE, _SIGNAL, _LINK, _CONDITIONAL))
    if definition is None:
        message = "an intermediate catch event needs a timer, a message or a signal definition"
        raise ctx.error(message, element)
    return IntermediateCatchEvent(**common, **_trigger(definition, ctx, common["id"]))


def _boundary_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    attached_to = ctx.ref(element, "attachedToRef")
    if not attached_to:
        raise ctx.error("boundaryEvent has no attachedToRef", element)
    definition = _event_definitions(
        element, ctx, (_TIMER, _MESSAGE, _SIGNAL, _ERROR, _ESCALATION, _COMPENSATE, _CONDITIONAL)
    )
    if definition is None:
        message = "a boundary event needs a timer, a message, a signal or an error definition"
        raise ctx.error(message, element)
    return BoundaryEvent(
        **common,
        attached_to=attached_to,
        cancel_activity=ctx.boolean(element, "cancelActivity", default=True),
        **_trigger(definition, ctx, common["id"]),
    )


def _receive_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    if ctx.boolean(element, "instantiate"):
        raise ctx.error('a receive task with instantiate="true" is not supported', element)
    name = _referenced(element, ctx, common["id"], "messageRef", "message", ctx.messages)
    return ReceiveTask(**common, message_name=name)


def _sub_process(element: Element, ctx: Context) -> Node:
    """The subprocess node; its content is read by `_scope`."""
    common = common_fields(element, ctx)
    triggered = ctx.boolean(element, "triggeredByEvent")
    return SubProcess(**common, triggered_by_event=triggered)


def _script_task(element: Element, ctx: Context) -> Node:
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


def _user_task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    fields: dict[str, Any] = {}
    for attribute, field_name in _USER_TASK_ATTRIBUTES.items():
        value = element.get(camunda_tag(attribute))
        fields[field_name] = (
            None if value is None else ctx.checked_text(element, f"camunda:{attribute}", value)
        )
    listeners = read_listeners(element, ctx, common["id"], TASK_LISTENER, TASK_EVENTS)
    form_fields = _form_fields(element, ctx, common["id"])
    return UserTask(**common, **fields, task_listeners=listeners, form_fields=form_fields)


def _task(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    return NoneTask(**common, manual=local_name(element) == "manualTask")


def _gateway_with_default(
    kind: type[ExclusiveGateway] | type[InclusiveGateway],
) -> Callable[[Element, Context], Node]:
    """The parser of a gateway that may name a default flow (a reference like any other)."""

    def parse(element: Element, ctx: Context) -> Node:
        common = common_fields(element, ctx)
        check_children(element, ctx)
        return kind(**common, default_flow=ctx.ref(element, "default"))

    return parse


_exclusive_gateway = _gateway_with_default(ExclusiveGateway)


_inclusive_gateway = _gateway_with_default(InclusiveGateway)


def _parallel_gateway(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    return ParallelGateway(**common)


def _event_based_gateway(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    check_children(element, ctx)
    # An instantiating gateway starts the process by its events: not executable here.
    if ctx.boolean(element, "instantiate"):
        message = 'eventBasedGateway with instantiate="true" is not supported by this engine'
        raise ctx.error(message, element)
    kind = (element.get("eventGatewayType") or "Exclusive").strip()
    if kind != "Exclusive":
        message = (
            f'eventBasedGateway with eventGatewayType="{kind}" is not supported by this engine'
        )
        raise ctx.error(message, element)
    return EventBasedGateway(**common)


NODE_PARSERS: dict[str, Callable[[Element, Context], Node]] = {
    "startEvent": _start_event,
    "endEvent": _end_event,
    "intermediateThrowEvent": _intermediate_throw_event,
    "serviceTask": service_task,
    "sendTask": service_task,
    "scriptTask": _script_task,
    "businessRuleTask": business_rule_task,
    "userTask": _user_task,
    "task": _task,
    "manualTask": _task,
    "exclusiveGateway": _exclusive_gateway,
    "parallelGateway": _parallel_gateway,
    "inclusiveGateway": _inclusive_gateway,
    "eventBasedGateway": _event_based_gateway,
    "intermediateCatchEvent": _intermediate_catch_event,
    "boundaryEvent": _boundary_event,
    "receiveTask": _receive_task,
    "subProcess": _sub_process,
    "callActivity": call_activity,
}
assert NODE_PARSERS.keys() == FLOW_NODES


def _sequence_flow(element: Element, ctx: Context) -> SequenceFlow:
    flow_id = element.get("id")  # present: see generate_ids
    check_children(element, ctx, frozenset({"conditionExpression"}))
    plain_extensions(element, ctx, flow_id, frozenset({EXECUTION_LISTENER}))
    source, target = ctx.ref(element, "sourceRef"), ctx.ref(element, "targetRef")
    if not source or not target:
        raise ctx.error("sequenceFlow needs a sourceRef and a targetRef", element)
    conditions = element.findall(bpmn_tag("conditionExpression"))
    if len(conditions) > 1:
        raise ctx.error("sequenceFlow has more than one conditionExpression", element)
    if not conditions:
        return _flow_of(element, ctx, flow_id, source, target, None)
    condition_element = conditions[0]
    language = condition_element.get("language")
    text = "".join(condition_element.itertext())
    resource = condition_element.get(camunda_tag("resource"))
    if language not in (None, "", "juel") or resource is not None:
        script = read_script(condition_element, ctx, flow_id, language or "juel", text, resource)
        if script.format == "javascript":
            condition = ScriptCondition(source=script.source, language=language or "javascript")
            return _flow_of(element, ctx, flow_id, source, target, condition)
        text = script.source
    try:
        expression = compile_expression(text.strip())
    except ExpressionError as error:
        message = f"invalid condition on sequence flow '{flow_id}': {error.message}"
        raise ctx.error(message, condition_element, flow_id) from None
    return _flow_of(element, ctx, flow_id, source, target, expression)


def _flow_of(
    element: Element, ctx: Context, flow_id: str, source: str, target: str, condition: Any
) -> SequenceFlow:
    return SequenceFlow(
        id=flow_id,
        source=source,
        target=target,
        name=element.get("name"),
        condition=condition,
        listeners=read_listeners(element, ctx, flow_id, EXECUTION_LISTENER, (TAKE_EVENT,)),
        line=element.sourceline,
        **described(element),
    )


def _declared_refs(element: Element, ctx: Context, local: str) -> list[str]:
    return [
        ctx.resolve(child, (child.text or "").strip(), local, element.get("id"))
        for child in element.findall(bpmn_tag(local))
    ]


def _scope(
    element: Element,
    ctx: Context,
    parent: str | None,
    nodes: list[tuple[Node, Element]],
    flows: list[SequenceFlow],
) -> None:
    """The flow elements of a process (`parent` None) or of the subprocess `parent`, at any depth,
    in document order."""
    owner = element.get("id")
    for child in element_children(element):
        local = local_name(child)
        if namespace_of(child) != BPMN_NS:
            raise ctx.unsupported(child, child.get("id") or owner)
        if local == "sequenceFlow":
            flows.append(_sequence_flow(child, ctx))
        elif local in NODE_PARSERS:
            if ctx.limits is not None and len(nodes) >= ctx.limits.max_nodes:
                message = (
                    f"the process has more than {ctx.limits.max_nodes} flow nodes, the limit "
                    "(max_process_nodes in the engine's settings)"
                )
                raise ctx.error(message, child)
            node = replace(NODE_PARSERS[local](child, ctx), parent=parent)
            nodes.append((node, child))
            if isinstance(node, SubProcess):
                _scope(child, ctx, node.id, nodes, flows)
        elif local == "extensionElements":
            if parent is None:  # a subprocess's own are checked with the node
                plain_extensions(element, ctx, owner, frozenset({EXECUTION_LISTENER}))
        elif parent is not None and (local in ("incoming", "outgoing") or is_loop(local)):
            continue  # a subprocess's loop characteristics are read with the node
        elif local == "transaction":
            message = f"transaction is not supported by this engine ({_TRANSACTIONS})"
            raise ctx.error(message, child, child.get("id") or owner)
        elif local not in DECORATION:
            raise ctx.unsupported(child, owner if is_loop(local) else child.get("id") or owner)


def _process(element: Element, ctx: Context) -> ProcessModel:
    key = element.get("id")
    if not key:
        raise ctx.error("process has no id", element)
    nodes: list[tuple[Node, Element]] = []
    flows: list[SequenceFlow] = []
    _scope(element, ctx, None, nodes, flows)
    nodes = link_handlers(element, ctx, nodes)
    # Every node's flows in document order, from one pass over the flows.
    flows_in: dict[str, list[str]] = {}
    flows_out: dict[str, list[str]] = {}
    for flow in flows:
        flows_in.setdefault(flow.target, []).append(flow.id)
        flows_out.setdefault(flow.source, []).append(flow.id)
    if ctx.limits is not None:
        for _, node_element in nodes:
            _check_fan_out(ctx, ctx.limits, node_element, flows_in, flows_out)
    wired: list[Node] = []
    for node, node_element in nodes:
        incoming = tuple(flows_in.get(node.id, ()))
        outgoing = tuple(flows_out.get(node.id, ()))
        for direction, derived in (("incoming", incoming), ("outgoing", outgoing)):
            declared = _declared_refs(node_element, ctx, direction)
            # Every flow with an id of its own is declared, and nothing else.
            named = {flow_id for flow_id in derived if flow_id not in ctx.generated}
            if declared and not named <= set(declared) <= set(derived):
                raise ctx.error(
                    f"<{direction}> elements ({', '.join(declared)}) disagree with the "
                    f"sequence flows ({', '.join(derived) or 'none'})",
                    node_element,
                )
        wired.append(replace(node, incoming=incoming, outgoing=outgoing))
    # camunda:candidateStarterUsers / camunda:candidateStarterGroups (like camunda:potentialStarter)
    # are accepted and ignored: who may start an instance is the role of the caller (app/auth.py).
    model = ProcessModel(
        key=key,
        name=element.get("name"),
        nodes=tuple(wired),
        flows=tuple(flows),
        version_tag=element.get(camunda_tag("versionTag")),
        history_ttl_days=_history_ttl(element, ctx),
        listeners=read_listeners(element, ctx, key, EXECUTION_LISTENER, EXECUTION_EVENTS),
        line=element.sourceline,
        **described(element),
    )
    return validate(model, ctx.file)


def _history_ttl(element: Element, ctx: Context) -> int | None:
    """camunda:historyTimeToLive in days: `5` or `P5D` (never an expression)."""
    text = element.get(camunda_tag("historyTimeToLive"))
    if text is None:
        return None
    try:
        return parse_history_ttl(text)
    except ValueError as exc:
        raise ctx.error(str(exc), element) from None


def _check_fan_out(
    ctx: Context,
    limits: ModelLimits,
    element: Element,
    flows_in: dict[str, list[str]],
    flows_out: dict[str, list[str]],
) -> None:
    """A node with more flows in or out than the limit allows is refused."""
    node_id = element.get("id")
    for direction, found in (("incoming", flows_in), ("outgoing", flows_out)):
        count = len(found.get(node_id, ()))
        if count > limits.max_fan_out:
            message = (
                f"{count} {direction} sequence flows, more than the limit of "
                f"{limits.max_fan_out} (max_fan_out in the engine's settings)"
            )
            raise ctx.error(message, element)


# Generated ids are `<tag>__<basis>`: a lower-case tag and a double underscore, which Camunda
# Modeler never writes; a clash with a real id is still checked and resolved with a suffix.
GENERATED_ID_SEPARATOR = "__"


def _without_prefix(value: str | None) -> str:
    return (value or "").strip().rpartition(":")[2]


def generate_ids(root: Element) -> tuple[frozenset[str], frozenset[str]]:
    """Give every flow node and sequence flow that has no id one derived from the document alone;
    return every id of the document, and the generated ones. A flow is named after its source and
    target (`sequenceFlow__Task_A__Task_B`), a node after its tag and its place among the id-less
    nodes of that tag in document order (`task__1`); a name already taken gets `__2`, `__3`, ...
    Elements are visited in document order, so the same file always yields the same ids."""
    taken: set[str] = set()
    generated_ids: list[str] = []
    missing: list[Element] = []
    scopes = (bpmn_tag("process"), bpmn_tag("subProcess"))
    for element in root.iter(etree.Element):
        element_id = element.get("id")
        if element_id:
            taken.add(element_id)
            continue
        parent = element.getparent()
        local = local_name(element)
        if (
            parent is not None
            and parent.tag in scopes
            and namespace_of(element) == BPMN_NS
            and (local == "sequenceFlow" or local in NODE_PARSERS)
        ):
            missing.append(element)
    counts: dict[str, int] = {}
    for element in missing:
        local = local_name(element)
        if local == "sequenceFlow":
            basis = (
                f"{_without_prefix(element.get('sourceRef'))}{GENERATED_ID_SEPARATOR}"
                f"{_without_prefix(element.get('targetRef'))}"
            )
        else:
            counts[local] = counts.get(local, 0) + 1
            basis = str(counts[local])
        candidate = f"{local}{GENERATED_ID_SEPARATOR}{basis}"
        generated, suffix = candidate, 1
        while generated in taken:
            suffix += 1
            generated = f"{candidate}{GENERATED_ID_SEPARATOR}{suffix}"
        taken.add(generated)
        generated_ids.append(generated)
        element.set("id", generated)
    return frozenset(taken), frozenset(generated_ids)


_ACTIVITI_PREFIX = f"{{{ACTIVITI_NS}}}"


_ACTIVITI_MARKS = tuple(ACTIVITI_NS.encode(codec) for codec in ("utf-8", "utf-16-le", "utf-16-be"))


def read_legacy_namespace(root: Element, data: bytes) -> None:
    """Rename the elements and attributes of the activiti namespace into the camunda namespace
    (an attribute written in both keeps its camunda value). Only a document that mentions the
    namespace is walked."""
    if not any(mark in data for mark in _ACTIVITI_MARKS):
        return
    for element in root.iter(etree.Element):
        if element.tag.startswith(_ACTIVITI_PREFIX):
            element.tag = camunda_tag(local_name(element))
        for name in [name for name in element.attrib if name.startswith(_ACTIVITI_PREFIX)]:
            value = element.attrib.pop(name)
            current = camunda_tag(name[len(_ACTIVITI_PREFIX) :])
            if element.get(current) is None:
                element.set(current, value)


def parse_bpmn(
    data: bytes | str, file: str = "<string>", limits: ModelLimits | None = DEFAULT_LIMITS
) -> list[ProcessModel]:
    """One model per executable process (every process when none is marked isExecutable).

    `limits` bounds the input's size, each process's flow nodes and each node's flows in and
    out; None accepts any (for definitions that were deployed under their own limits)."""
    max_bytes = limits.max_bytes if limits is not None else None
    too_large = ModelError(f"BPMN input is larger than {max_bytes} bytes", file=file)
    if max_bytes is not None and len(data) > max_bytes:  # no more characters than UTF-8 bytes
        raise too_large
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise too_large
    root = load_bytes(raw, file, UTF8_PARSER if isinstance(data, str) else SAFE_PARSER)
    if root.tag != bpmn_tag("definitions"):
        raise ModelError(
            f"the root element is {etree.QName(root).localname}, not bpmn:definitions",
            file=file,
            line=root.sourceline,
        )
    read_legacy_namespace(root, raw)
    ids, generated = generate_ids(root)

    def table(local: str, attribute: str) -> dict[str, str | None]:
        return {
            item.get("id"): item.get(attribute) or None
            for item in root.findall(bpmn_tag(local))
            if item.get("id")
        }

    ctx = Context(
        file=file,
        messages=table("message", "name"),
        signals=table("signal", "name"),
        errors=table("error", "errorCode"),
        escalations=table("escalation", "escalationCode"),
        ids=ids,
        generated=generated,
        limits=limits,
    )
    processes = root.findall(bpmn_tag("process"))
    if not processes:
        raise ModelError("the file contains no bpmn:process", file=file, line=root.sourceline)
    executable = [p for p in processes if (p.get("isExecutable") or "").strip().lower() == "true"]
    return [_process(process, ctx) for process in executable or processes]
