"""The event readers: start, end, intermediate throw and catch, and boundary events, and the
event definitions they carry (timers, messages, signals, errors, escalations, conditions, links,
compensation), with the definitions-level references they resolve (bpmn:message, bpmn:signal,
bpmn:error, bpmn:escalation)."""

from __future__ import annotations

from typing import Any

from engine.bpmn.calls import read_mapping
from engine.bpmn.compensation import compensate_trigger
from engine.bpmn.conditional import parse_conditional
from engine.bpmn.formdata import read_form_fields
from engine.bpmn.nodes import common_fields, read_implementation
from engine.bpmn.reading import (
    CAMUNDA_NS,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
    definition_children,
    element_children,
    local_name,
    namespace_of,
    plain_extensions,
)
from engine.errors import ExpressionError
from engine.language.composite import compile_text, has_expression
from engine.language.timers import DEFAULT_LIMITS as DEFAULT_TIMER_LIMITS
from engine.language.timers import TIMER_KINDS, TimerLimits, validate_timer
from engine.model import (
    BoundaryEvent,
    EndEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    StartEvent,
    TimerDefinition,
    TimerKind,
)

_TIMER_KINDS: dict[str, TimerKind] = {
    "timeDate": "date",
    "timeDuration": "duration",
    "timeCycle": "cycle",
}


def timer_problem(
    kind: str, text: str, limits: TimerLimits | None = DEFAULT_TIMER_LIMITS
) -> str | None:
    """Why a timer's text cannot be deployed, or None. A text with `${...}` must be one safe
    expression or a composite of text and expressions (it is resolved when the timer starts); any
    other text must be a valid ISO 8601 date, duration or cycle of that kind, or, for a cycle, a
    Quartz cron expression."""
    if kind not in TIMER_KINDS:
        return f"'{kind}' is not a timer kind (date, duration or cycle)"
    if not text.strip():
        return "the timer text is empty"
    if has_expression(text):
        try:
            compile_text(text)
        except ExpressionError as error:
            return error.message
        return None
    try:
        validate_timer(kind, text, limits)
    except ValueError as error:
        return str(error)
    return None


_TIMER = "timerEventDefinition"


_MESSAGE = "messageEventDefinition"


_SIGNAL = "signalEventDefinition"


_ERROR = "errorEventDefinition"


_ESCALATION = "escalationEventDefinition"


_LINK = "linkEventDefinition"


_CANCEL = "cancelEventDefinition"


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


def referenced(
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
    if has_expression(name):
        # A name with `${...}` parts is evaluated when the event waits or throws.
        try:
            compile_text(name)
        except ExpressionError as error:
            message = f"the name of bpmn:{kind} '{ref}': {error.message}"
            raise ctx.error(message, element, event_id) from None
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
            "message_name": referenced(
                definition, ctx, event_id, "messageRef", "message", ctx.messages
            )
        }
    if local == _SIGNAL:
        name = referenced(definition, ctx, event_id, "signalRef", "signal", ctx.signals)
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


def start_event(element: Element, ctx: Context) -> Node:
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
        form_fields=read_form_fields(element, ctx, common["id"]),
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
        name = referenced(definition, ctx, event_id, "messageRef", "message", ctx.messages)
    implementation = read_implementation(definition, ctx, event_id, "a message throw event")
    return {"is_message": True, "message_name": name, **implementation}


def end_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    allowed = (
        "terminateEventDefinition",
        _ERROR,
        _MESSAGE,
        _ESCALATION,
        _SIGNAL,
        _COMPENSATE,
        _CANCEL,
    )
    definition = _event_definitions(element, ctx, allowed)
    if definition is None:
        return EndEvent(**common)
    if local_name(definition) == _CANCEL:
        _cancel_definition(definition, ctx, common["id"])
        return EndEvent(**common, cancel=True)
    if local_name(definition) == _MESSAGE:
        return EndEvent(**common, **_message_throw(definition, ctx, common["id"]))
    if local_name(definition) in (_ERROR, _ESCALATION, _SIGNAL, _COMPENSATE):
        return EndEvent(**common, **_trigger(definition, ctx, common["id"]))
    plain_extensions(definition, ctx, common["id"])
    return EndEvent(**common, terminate=True)


def intermediate_throw_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    definition = _event_definitions(
        element, ctx, (_SIGNAL, _MESSAGE, _ESCALATION, _LINK, _COMPENSATE)
    )
    if definition is not None and local_name(definition) == _MESSAGE:
        return IntermediateThrowEvent(**common, **_message_throw(definition, ctx, common["id"]))
    trigger = {} if definition is None else _trigger(definition, ctx, common["id"])
    return IntermediateThrowEvent(**common, **trigger)


def intermediate_catch_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    definition = _event_definitions(element, ctx, (_TIMER, _MESSAGE, _SIGNAL, _LINK, _CONDITIONAL))
    if definition is None:
        message = "an intermediate catch event needs a timer, a message or a signal definition"
        raise ctx.error(message, element)
    return IntermediateCatchEvent(**common, **_trigger(definition, ctx, common["id"]))


def boundary_event(element: Element, ctx: Context) -> Node:
    common = common_fields(element, ctx)
    attached_to = ctx.ref(element, "attachedToRef")
    if not attached_to:
        raise ctx.error("boundaryEvent has no attachedToRef", element)
    definition = _event_definitions(
        element,
        ctx,
        (_TIMER, _MESSAGE, _SIGNAL, _ERROR, _ESCALATION, _COMPENSATE, _CONDITIONAL, _CANCEL),
    )
    if definition is None:
        message = "a boundary event needs a timer, a message, a signal or an error definition"
        raise ctx.error(message, element)
    if local_name(definition) == _CANCEL:
        _cancel_definition(definition, ctx, common["id"])
        return BoundaryEvent(
            **common,
            attached_to=attached_to,
            cancel_activity=ctx.boolean(element, "cancelActivity", default=True),
            is_cancel=True,
        )
    return BoundaryEvent(
        **common,
        attached_to=attached_to,
        cancel_activity=ctx.boolean(element, "cancelActivity", default=True),
        **_trigger(definition, ctx, common["id"]),
    )


def _cancel_definition(definition: Element, ctx: Context, event_id: str) -> None:
    """A cancelEventDefinition carries nothing: whether it stands where one may (a cancel end
    event in a transaction, a cancel boundary event on one) is checked with the model."""
    children = definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    plain_extensions(definition, ctx, event_id)
