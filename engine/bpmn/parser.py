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

import codecs
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.inputoutput import read_input_output
from engine.errors import ExpressionError, ModelError
from engine.expressions import compile_expression, is_expression
from engine.forms import FormField, field_problem
from engine.mappings import InputOutput
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
    Listener,
    Loop,
    ModelLimits,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    Script,
    ScriptCondition,
    ScriptFormat,
    ScriptTask,
    SendTask,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    SubProcess,
    TimerDefinition,
    TimerKind,
    UserTask,
    validate,
)
from engine.retention import parse_history_ttl
from engine.timers import DEFAULT_LIMITS as DEFAULT_TIMER_LIMITS
from engine.timers import TIMER_KINDS, TimerLimits, parse_cycle, validate_timer

# The default size limit; a deployment's settings may raise it (see ModelLimits).
MAX_BPMN_BYTES = DEFAULT_LIMITS.max_bytes
BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
CAMUNDA_NS = "http://camunda.org/schema/1.0/bpmn"
# The extension namespace of Camunda 7's first versions; Camunda 7 still reads it as CAMUNDA_NS.
ACTIVITI_NS = "http://activiti.org/bpmn"

# lxml ships no type information; elements are typed loosely through this alias.
Element = Any

_SAFE = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_pis": True,
}
_PARSER = etree.XMLParser(**_SAFE)
# Text given as str is encoded to UTF-8 here, whatever its XML declaration says.
_UTF8_PARSER = etree.XMLParser(**_SAFE, encoding="utf-8")

# Elements with no execution meaning, skipped wherever they appear inside a process or a node.
_DECORATION = frozenset(
    {
        "documentation",
        "laneSet",
        "textAnnotation",
        "association",
        "group",
        "category",
        "dataObject",
        "dataObjectReference",
        "dataStoreReference",
        "dataInputAssociation",
        "dataOutputAssociation",
        "ioSpecification",
        "property",
        "auditing",
        "monitoring",
    }
)
# Camunda extension elements that only describe (forms, key/value metadata): never a reason to
# refuse a model, and never executed (camunda:properties is kept as data, see `_described`).
# Extension elements in other namespaces (other tools' metadata) are skipped.
# camunda:potentialStarter, like the candidateStarter attributes, only names who may start.
IGNORED_EXTENSIONS = frozenset({"properties", "formData", "formProperty", "potentialStarter"})
# Camunda extension elements that change what Camunda executes; a model using them is refused
# (as is any other camunda: extension not listed here or in IGNORED_EXTENSIONS).
REJECTED_EXTENSIONS = frozenset(
    {
        "field",
        "connector",
        "in",
        "out",
        "errorEventDefinition",
    }
)
RETRY_CYCLE = "failedJobRetryTimeCycle"
EXECUTION_LISTENER = "executionListener"
TASK_LISTENER = "taskListener"
# Read by `_input_output` on flow nodes; refused anywhere else.
INPUT_OUTPUT = "inputOutput"
_TIMER_KINDS: dict[str, TimerKind] = {
    "timeDate": "date",
    "timeDuration": "duration",
    "timeCycle": "cycle",
}
_HANDLER_NAME = re.compile(r"[^\W\d][\w$]*(\.[^\W\d][\w$]*)*")
_SERVICE_IMPLEMENTATION_REQUIRED = (
    "a service task needs exactly one implementation: camunda:delegateExpression, "
    'camunda:expression, camunda:class, or camunda:type="external" with camunda:topic'
)


def is_handler_name(name: str) -> bool:
    """A handler registered by name (`chargeCard`) or a dotted class name (`com.acme.Charge`)."""
    return _HANDLER_NAME.fullmatch(name) is not None


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


def retry_cycle_problem(text: str) -> str | None:
    """Why a camunda:failedJobRetryTimeCycle cannot be deployed, or None. Only a literal ISO 8601
    cycle such as R3/PT5M: no expressions, no lists of durations."""
    if not text.strip():
        return "camunda:failedJobRetryTimeCycle is empty"
    if "${" in text or "#{" in text:
        return (
            "expressions in camunda:failedJobRetryTimeCycle are not supported; write a cycle such "
            "as R3/PT5M"
        )
    try:
        parse_cycle(text)
    except ValueError as error:
        return f"camunda:failedJobRetryTimeCycle: {error}"
    return None


@functools.cache
def _bpmn(local: str) -> str:
    return f"{{{BPMN_NS}}}{local}"


@functools.cache
def _camunda(local: str) -> str:
    return f"{{{CAMUNDA_NS}}}{local}"


def _local(element: Element) -> str:
    """The tag without its namespace (read from the tag text: a QName per call costs more than
    the rest of reading most elements)."""
    tag: str = element.tag
    return tag.rpartition("}")[2]


def _namespace(element: Element) -> str | None:
    tag: str = element.tag
    return tag[1 : tag.index("}")] if tag.startswith("{") else None


def _qualified(element: Element) -> str:
    """The tag as messages show it: bare for BPMN, `camunda:` for the camunda namespace (whatever
    prefix the file chose), the file's own prefix otherwise."""
    namespace = _namespace(element)
    if namespace == BPMN_NS:
        return _local(element)
    if namespace == CAMUNDA_NS:
        return f"camunda:{_local(element)}"
    return f"{element.prefix}:{_local(element)}" if element.prefix else str(element.tag)


def _children(element: Element) -> list[Element]:
    """Element children only: comments and processing instructions are not elements."""
    return [child for child in element if isinstance(child.tag, str)]


@dataclass(frozen=True)
class _Context:
    file: str
    # Definitions-level elements by id: message and signal names, error and escalation codes.
    messages: dict[str, str | None]
    signals: dict[str, str | None]
    errors: dict[str, str | None]
    escalations: dict[str, str | None] = field(default_factory=dict)
    # Every id of the document (generated ones included): a reference equal to one is taken as
    # written even when it contains a colon.
    ids: frozenset[str] = frozenset()
    # The ids `generate_ids` made: no <incoming>/<outgoing> element can name those flows.
    generated: frozenset[str] = frozenset()
    # What one process may hold (see ModelLimits); None: anything (a definition already deployed).
    limits: ModelLimits | None = DEFAULT_LIMITS

    def error(self, message: str, element: Element, element_id: str | None = None) -> ModelError:
        return ModelError(
            message,
            file=self.file,
            line=element.sourceline,
            element_id=element_id if element_id is not None else element.get("id"),
        )

    def unsupported(self, element: Element, element_id: str | None) -> ModelError:
        tag = _qualified(element)
        return self.error(f"{tag} is not supported by this engine", element, element_id)

    def resolve(self, element: Element, value: str, what: str, owner_id: str | None = None) -> str:
        """The id a reference names: `prefix:local` is `local` when `prefix` is a namespace
        prefix declared in scope of `element`; an undeclared prefix is an error."""
        prefix, colon, local = value.partition(":")
        if not colon or value in self.ids:
            return value
        if prefix and local and element.nsmap.get(prefix) is not None:
            return local
        message = f"{what} '{value}': the prefix '{prefix}' is not a declared namespace prefix"
        raise self.error(message, element, owner_id)

    def ref(self, element: Element, attribute: str, owner_id: str | None = None) -> str | None:
        """A reference attribute of `element`, resolved (None when absent or empty)."""
        value = element.get(attribute)
        return self.resolve(element, value, attribute, owner_id) if value else None

    def boolean(self, element: Element, attribute: str, default: bool = False) -> bool:
        value = element.get(attribute)
        if value is None:
            return default
        if value.strip().lower() in ("true", "1"):
            return True
        if value.strip().lower() in ("false", "0"):
            return False
        name = etree.QName(attribute).localname
        raise self.error(f"{name} must be true or false, not '{value}'", element)

    def checked_text(self, element: Element, attribute: str, value: str) -> str:
        """A value that contains an expression must be exactly one safe expression."""
        if "${" in value or "#{" in value:
            try:
                compile_expression(value)
            except ExpressionError as error:
                raise self.error(f"{attribute}: {error.message}", element) from None
        return value


# --- extension elements ------------------------------------------------------------------------


def _extensions(
    element: Element,
    ctx: _Context,
    owner_id: str | None,
    listeners: frozenset[str] = frozenset(),
) -> Element | None:
    """Check the camunda: extensions of `element`; return its failedJobRetryTimeCycle, if any.
    The listener elements named in `listeners` may appear (they are read by `_listeners`)."""
    retry: Element | None = None
    for extensions in element.findall(_bpmn("extensionElements")):
        for child in _children(extensions):
            if _namespace(child) != CAMUNDA_NS:
                continue
            local = _local(child)
            if local == RETRY_CYCLE:
                if retry is not None:
                    message = f"more than one camunda:{RETRY_CYCLE}"
                    raise ctx.error(message, child, owner_id)
                retry = child
            elif local in (EXECUTION_LISTENER, TASK_LISTENER):
                if local not in listeners:
                    where = (
                        "a user task"
                        if local == TASK_LISTENER
                        else "a flow node, a sequence flow or a process"
                    )
                    raise ctx.error(f"camunda:{local} belongs on {where}", child, owner_id)
            elif (
                local == INPUT_OUTPUT
                or (local in ("in", "out") and _local(element) == "callActivity")
                or (local == "in" and _local(element) == _SIGNAL)
            ):
                continue  # read by `_input_output` / engine/bpmn/calls.py / `_signal_inputs`
            elif local in REJECTED_EXTENSIONS:
                message = (
                    f"{_qualified(child)} is not supported by this engine (it changes what "
                    "Camunda executes)"
                )
                raise ctx.error(message, child, owner_id)
            elif local not in IGNORED_EXTENSIONS:
                raise ctx.unsupported(child, owner_id)
    return retry


def _described(element: Element) -> dict[str, Any]:
    """The model fields that only describe `element`: its bpmn:documentation text (several are
    joined by a blank line) and its camunda:properties as (name, value) pairs in document order."""
    texts = ["".join(child.itertext()) for child in element.findall(_bpmn("documentation"))]
    properties = tuple(
        (item.get("name") or "", item.get("value") or "")
        for extensions in element.findall(_bpmn("extensionElements"))
        for group in extensions.findall(_camunda("properties"))
        for item in group.findall(_camunda("property"))
    )
    return {"documentation": "\n\n".join(texts) if texts else None, "properties": properties}


def _plain_extensions(
    element: Element,
    ctx: _Context,
    owner_id: str | None,
    listeners: frozenset[str] = frozenset(),
) -> None:
    """Extensions of an element that is not a flow node: no retry cycle there."""
    retry = _extensions(element, ctx, owner_id, listeners)
    if retry is not None:
        message = f"camunda:{RETRY_CYCLE} belongs on a task, a subprocess or an event"
        raise ctx.error(message, retry, owner_id)
    for extensions in element.findall(_bpmn("extensionElements")):
        for mapping in extensions.findall(_camunda(INPUT_OUTPUT)):
            message = "camunda:inputOutput belongs on a task, a subprocess or an event"
            raise ctx.error(message, mapping, owner_id)


def _input_output(element: Element, ctx: _Context, node_id: str) -> InputOutput | None:
    """The node's camunda:inputOutput parameters, if it has any (where they are allowed is
    checked with the model, see `engine.model.validate`)."""
    found = [
        mapping
        for extensions in element.findall(_bpmn("extensionElements"))
        for mapping in extensions.findall(_camunda(INPUT_OUTPUT))
    ]
    if not found:
        return None
    if len(found) > 1:
        raise ctx.error("more than one camunda:inputOutput", found[1], node_id)

    def fail(message: str, at: Element) -> ModelError:
        return ctx.error(message, at, node_id)

    io = read_input_output(found[0], fail)
    loop = "multiInstanceLoopCharacteristics"
    if io.outputs and any(_local(child) == loop for child in _children(element)):
        message = "camunda:outputParameter is not allowed on a multi-instance activity"
        raise ctx.error(message, found[0], node_id)
    return io


def _retry_cycle(element: Element, ctx: _Context, node_id: str) -> str | None:
    allowed = {EXECUTION_LISTENER} | ({TASK_LISTENER} if _local(element) == "userTask" else set())
    retry = _extensions(element, ctx, node_id, frozenset(allowed))
    if retry is None:
        return None
    text = "".join(retry.itertext()).strip()
    problem = retry_cycle_problem(text)
    if problem is not None:
        raise ctx.error(problem, retry, node_id)
    return text


# --- scripts and listeners ---------------------------------------------------------------------

# An element's script text may come from a camunda:resource file of its deployment: the deployment
# writes the file's text into this attribute (see engine/bpmn/resources.py) before parsing.
EMBEDDED_SCRIPT = "{urn:interlock:script}source"
_PORTING = (
    'port it to JavaScript (scriptFormat="javascript") or to a Python handler registered by '
    'name (camunda:class or camunda:delegateExpression="${name}")'
)
_LISTENER_EXPRESSION = re.compile(
    r"\$\{\s*([^\W\d][\w$]*)(?:\s*\.\s*([^\W\d][\w$]*)\s*\(\s*(?:execution|task)?\s*\))?\s*\}"
)


def script_format(written: str | None) -> ScriptFormat | None:
    """The model's format for a scriptFormat attribute: "javascript", "expression", or None for a
    language this engine does not run."""
    value = (written or "").strip().lower()
    if value in ("javascript", "ecmascript", "js"):
        return "javascript"
    if value in ("juel", "expression"):
        return "expression"
    return None


def _script(
    element: Element,
    ctx: _Context,
    owner_id: str | None,
    written_format: str | None,
    text: str,
    resource: str | None,
) -> Script:
    """A script of `element`: its format checked, its text inline or read from its resource."""
    if not (written_format or "").strip():
        raise ctx.error("a script needs a scriptFormat (javascript)", element, owner_id)
    kind = script_format(written_format)
    if kind is None:
        message = f"script language '{written_format}' is not supported by this engine; {_PORTING}"
        raise ctx.error(message, element, owner_id)
    embedded = element.get(EMBEDDED_SCRIPT)
    if resource is not None:
        if embedded is None:
            message = (
                f"camunda:resource '{resource}' was not found in the deployment; deploy the file "
                "together with the process"
            )
            raise ctx.error(message, element, owner_id)
        if text.strip():
            message = "a script has either inline text or a camunda:resource, not both"
            raise ctx.error(message, element, owner_id)
        text = embedded
    if not text.strip():
        raise ctx.error("the script is empty", element, owner_id)
    if kind == "expression":
        try:
            compile_expression(text.strip())
        except ExpressionError as error:
            raise ctx.error(f"script: {error.message}", element, owner_id) from None
        text = text.strip()
    return Script(format=kind, source=text, resource=resource)


def listener_handler(value: str) -> str | None:
    """The handler a listener's camunda:expression or camunda:delegateExpression names:
    `${name}` names `name`, `${name.method(execution)}` names `name.method`. None for any other
    text (which is never evaluated)."""
    found = _LISTENER_EXPRESSION.fullmatch(value.strip())
    if found is None:
        return None
    return f"{found.group(1)}.{found.group(2)}" if found.group(2) else found.group(1)


def _listener(
    child: Element, ctx: _Context, owner_id: str | None, events: tuple[str, ...], default: str
) -> Listener:
    local = _local(child)
    event = (child.get("event") or default).strip()
    if event == "timeout" and local == TASK_LISTENER:
        message = (
            "task listeners on timeout are not supported by this engine; attach a boundary "
            "timer event to the user task instead"
        )
        raise ctx.error(message, child, owner_id)
    if event not in events:
        shown = ", ".join(events)
        raise ctx.error(f"camunda:{local} event '{event}' is not one of {shown}", child, owner_id)
    handlers: list[str] = []
    class_name = child.get("class")
    if class_name is not None:
        if not is_handler_name(class_name.strip()):
            raise ctx.error(f"camunda:{local} class '{class_name}' is not a class name", child)
        handlers.append(class_name.strip())
    for attribute in ("expression", "delegateExpression"):
        value = child.get(attribute)
        if value is None:
            continue
        name = listener_handler(value)
        if name is None:
            message = (
                f"camunda:{local} {attribute} must name a registered handler as ${{name}} or "
                f"${{name.method(execution)}}, not {value}"
            )
            raise ctx.error(message, child, owner_id)
        handlers.append(name)
    script: Script | None = None
    for part in _children(child):
        part_local = _local(part)
        if _namespace(part) == CAMUNDA_NS and part_local == "script":
            if script is not None:
                raise ctx.error(f"camunda:{local} has more than one camunda:script", part)
            script = _script(
                part,
                ctx,
                owner_id,
                part.get("scriptFormat"),
                "".join(part.itertext()),
                part.get("resource"),
            )
        elif _namespace(part) == CAMUNDA_NS and part_local == "field":
            message = (
                f"camunda:field on a camunda:{local} is not supported by this engine; read the "
                "value from a process variable instead"
            )
            raise ctx.error(message, part, owner_id)
        else:
            raise ctx.unsupported(part, owner_id)
    if len(handlers) + (script is not None) != 1:
        message = (
            f"camunda:{local} needs exactly one of class, expression, delegateExpression or a "
            "camunda:script"
        )
        raise ctx.error(message, child, owner_id)
    return Listener(
        event=event,
        handler=handlers[0] if handlers else None,
        script=script,
        line=child.sourceline,
    )


def _listeners(
    element: Element, ctx: _Context, owner_id: str | None, local: str, events: tuple[str, ...]
) -> tuple[Listener, ...]:
    """The `camunda:<local>` listeners of `element`, in document order."""
    default = TAKE_EVENT if events == (TAKE_EVENT,) else ""
    return tuple(
        _listener(child, ctx, owner_id, events, default)
        for extensions in element.findall(_bpmn("extensionElements"))
        for child in extensions.findall(_camunda(local))
    )


def _form_fields(element: Element, ctx: _Context, owner_id: str) -> tuple[FormField, ...]:
    """The camunda:formField entries of a user task's or start event's camunda:formData, each
    checked (a custom type or validator fails the deployment at the field's line)."""
    fields: list[FormField] = []
    for extensions in element.findall(_bpmn("extensionElements")):
        for form in extensions.findall(_camunda("formData")):
            if form.get("businessKey") is not None:
                message = "camunda:formData businessKey is not supported by this engine"
                raise ctx.error(message, form, owner_id)
            for child in _children(form):
                if _namespace(child) != CAMUNDA_NS or _local(child) != "formField":
                    raise ctx.unsupported(child, owner_id)
                form_field = _form_field(child, ctx, owner_id)
                if any(known.id == form_field.id for known in fields):
                    message = f"form field '{form_field.id}' is declared twice"
                    raise ctx.error(message, child, owner_id)
                fields.append(form_field)
    return tuple(fields)


def _form_field(element: Element, ctx: _Context, owner_id: str) -> FormField:
    field_id = element.get("id")
    if not field_id:
        raise ctx.error("camunda:formField has no id", element, owner_id)
    values: list[tuple[str, str | None]] = []
    constraints: list[tuple[str, str | None]] = []
    properties: list[tuple[str, str]] = []
    for child in _children(element):
        local = _local(child) if _namespace(child) == CAMUNDA_NS else None
        if local == "value":
            values.append((child.get("id") or "", child.get("name")))
        elif local == "validation":
            for constraint in _children(child):
                if _namespace(constraint) != CAMUNDA_NS or _local(constraint) != "constraint":
                    raise ctx.unsupported(constraint, owner_id)
                constraints.append((constraint.get("name") or "", constraint.get("config")))
        elif local == "properties":
            properties.extend(
                (item.get("id") or "", item.get("value") or "")
                for item in _children(child)
                if _local(item) == "property"
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


# --- flow nodes --------------------------------------------------------------------------------


def _common(element: Element, ctx: _Context) -> dict[str, Any]:
    node_id = element.get("id")  # present: see generate_ids
    # camunda:jobPriority (here and on the process) is accepted and ignored: due jobs are taken
    # in the order they fell due, with no priorities among them.
    # camunda:exclusive is read (it must be true or false) and changes nothing: every command
    # of an instance holds the instance's row lock, so its jobs never run at the same time,
    # which is what exclusive="true" asks of Camunda (and stricter than exclusive="false").
    ctx.boolean(element, _camunda("exclusive"), default=True)
    return {
        "id": node_id,
        "name": element.get("name"),
        "async_before": ctx.boolean(element, _camunda("asyncBefore"))
        or ctx.boolean(element, _camunda("async")),
        "async_after": ctx.boolean(element, _camunda("asyncAfter")),
        "retry_cycle": _retry_cycle(element, ctx, node_id),
        "listeners": _listeners(element, ctx, node_id, EXECUTION_LISTENER, EXECUTION_EVENTS),
        "io": _input_output(element, ctx, node_id),
        "loop": _loop(element, ctx, node_id),
        "is_for_compensation": ctx.boolean(element, "isForCompensation"),
        "line": element.sourceline,
        **_described(element),
    }


def _loop(element: Element, ctx: _Context, node_id: str) -> Loop | None:
    from engine.bpmn.loops import parse_loop  # it reads elements with this module's helpers

    return parse_loop(element, ctx, node_id)


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


def _event_definitions(element: Element, ctx: _Context, allowed: tuple[str, ...]) -> Element | None:
    """The single event definition of an event, if it is one this engine supports."""
    definitions = [
        child
        for child in _children(element)
        if _local(child).endswith("EventDefinition") or _local(child) == "eventDefinitionRef"
    ]
    for definition in definitions:
        if _local(definition) not in allowed:
            message = f"{_local(element)} with {_local(definition)} is not supported by this engine"
            if _local(definition) == "cancelEventDefinition":
                message = f"{message} ({_TRANSACTIONS})"
            raise ctx.error(message, definition, element.get("id"))
    if len(definitions) > 1:
        raise ctx.error("an event with several event definitions is not supported", element)
    _check_children(element, ctx, frozenset(allowed))
    return definitions[0] if definitions else None


def _check_children(element: Element, ctx: _Context, allowed: frozenset[str] = frozenset()) -> None:
    """Children of a flow node: only decoration, incoming/outgoing and `allowed`. (A flow node's
    extensionElements are checked by `_common`.)"""
    for child in _children(element):
        local = _local(child)
        known = (
            local in _DECORATION
            or local in ("incoming", "outgoing", "extensionElements")
            or local in allowed
            or (_is_loop(local) and _local(element) in NODE_PARSERS)  # read by `_common`
        )
        if _namespace(child) != BPMN_NS or not known:
            raise ctx.unsupported(child, element.get("id"))


def _definition_children(definition: Element, ctx: _Context, event_id: str) -> list[Element]:
    """The meaningful children of an event definition; decoration skipped, extensions checked."""
    _plain_extensions(definition, ctx, event_id)
    return [
        child
        for child in _children(definition)
        if not (
            _namespace(child) == BPMN_NS
            and (_local(child) in _DECORATION or _local(child) == "extensionElements")
        )
    ]


_EVENT_WORDS = {
    "startEvent": "start event",
    "endEvent": "end event",
    "intermediateThrowEvent": "throw event",
    "intermediateCatchEvent": "catch event",
    "boundaryEvent": "boundary event",
}


def _referenced(
    element: Element,
    ctx: _Context,
    event_id: str,
    attribute: str,
    kind: str,
    table: dict[str, str | None],
) -> str:
    """The name of the bpmn:message or bpmn:signal that `attribute` of `element` (an event
    definition or a receive task) refers to."""
    written = element.get(attribute)
    if not written:
        owner = element.getparent() if _local(element).endswith("EventDefinition") else element
        what = f"{kind} {_EVENT_WORDS[_local(owner)]}" if _local(owner) in _EVENT_WORDS else None
        raise ctx.error(f"{what or _local(owner)} has no {attribute}", element, event_id)
    ref = ctx.resolve(element, written, attribute, event_id)
    if ref not in table:
        raise ctx.error(f"{attribute} '{written}' names no bpmn:{kind}", element, event_id)
    name = table[ref]
    if not name:
        raise ctx.error(f"{kind} '{ref}' has no name", element, event_id)
    return name


def _trigger(definition: Element, ctx: _Context, event_id: str) -> dict[str, Any]:
    """Model fields for a timer, message, signal or error event definition."""
    local = _local(definition)
    if local == _TIMER:
        return {"timer": _timer(definition, ctx, event_id)}
    if local == _COMPENSATE:
        from engine.bpmn.compensation import compensate_trigger

        return compensate_trigger(definition, ctx, event_id)
    if local == _CONDITIONAL:
        from engine.bpmn.conditional import parse_conditional  # it reads with these helpers

        return {"conditional": parse_conditional(definition, ctx, event_id)}
    children = _definition_children(definition, ctx, event_id)
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


def _signal_inputs(definition: Element, ctx: _Context, event_id: str) -> dict[str, Any]:
    """The camunda:in mappings of a signal throw event's definition: the variables the signal
    carries (every one, one by name or by expression, from what the throwing token sees or,
    `local`, from the event's own locals), as Camunda 7 passes them."""
    from engine.bpmn.calls import read_mapping  # it reads elements with this module's helpers

    throwing = _local(definition.getparent()) in ("intermediateThrowEvent", "endEvent")
    inputs = []
    for extensions in definition.findall(_bpmn("extensionElements")):
        for child in _children(extensions):
            if _namespace(child) != CAMUNDA_NS or _local(child) != "in":
                continue  # checked with the definition's other extensions
            if not throwing:
                raise ctx.unsupported(child, event_id)
            mapping = read_mapping(child, ctx, event_id)
            if mapping.business_key:
                message = "camunda:in businessKey on a signal is not supported by this engine"
                raise ctx.error(message, child, event_id)
            inputs.append(mapping)
    return {"signal_inputs": tuple(inputs)} if inputs else {}


def _escalation(definition: Element, ctx: _Context, event_id: str) -> dict[str, Any]:
    """An escalation event's code: its escalationRef's bpmn:escalation's escalationCode. A
    catching event (boundary, event subprocess start) without one catches every escalation and
    may name the variable that receives the code (camunda:escalationCodeVariable); a throwing
    one needs both the reference and the code."""
    owner = _local(definition.getparent())
    catching = owner in ("boundaryEvent", "startEvent")
    children = _definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    found: dict[str, Any] = {"is_escalation": True, "escalation_code": None}
    variable = definition.get(_camunda("escalationCodeVariable"))
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


def _link(definition: Element, ctx: _Context, event_id: str) -> dict[str, Any]:
    """A link event's name: a link throw event leads to the link catch event of the same name in
    its scope."""
    children = _definition_children(definition, ctx, event_id)
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


def _error_variables(definition: Element, ctx: _Context, event_id: str) -> dict[str, str]:
    """camunda:errorCodeVariable / errorMessageVariable of a catching error event (a boundary
    event or an event subprocess's start): the variables the caught code and message go to."""
    found: dict[str, str] = {}
    for attribute, field_name in _ERROR_VARIABLES.items():
        value = definition.get(_camunda(attribute))
        if value is None:
            continue
        owner = _local(definition.getparent())
        if owner not in ("boundaryEvent", "startEvent"):
            message = f"camunda:{attribute} belongs on an error event that catches, not on {owner}"
            raise ctx.error(message, definition, event_id)
        if not value.strip() or "${" in value or "#{" in value:
            raise ctx.error(f"camunda:{attribute} must name a variable", definition, event_id)
        found[field_name] = value.strip()
    return found


def _timer(definition: Element, ctx: _Context, event_id: str) -> TimerDefinition:
    specs = _definition_children(definition, ctx, event_id)
    if len(specs) != 1 or _local(specs[0]) not in _TIMER_KINDS:
        raise ctx.error(
            "a timer needs exactly one of timeDate, timeDuration or timeCycle", definition, event_id
        )
    spec = specs[0]
    text = "".join(spec.itertext()).strip()
    if not text:
        raise ctx.error(f"{_local(spec)} is empty", spec, event_id)
    kind = _TIMER_KINDS[_local(spec)]
    problem = timer_problem(kind, text, ctx.limits.timers if ctx.limits is not None else None)
    if problem is not None:
        raise ctx.error(f"{_local(spec)}: {problem}", spec, event_id)
    return TimerDefinition(kind=kind, text=text)


def _start_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    definition = _event_definitions(
        element, ctx, (_MESSAGE, _TIMER, _SIGNAL, _ERROR, _ESCALATION, _COMPENSATE, _CONDITIONAL)
    )
    trigger = {} if definition is None else _trigger(definition, ctx, common["id"])
    interrupting = ctx.boolean(element, "isInterrupting", default=True)
    form_key = element.get(_camunda("formKey"))
    if form_key is not None:
        form_key = ctx.checked_text(element, "camunda:formKey", form_key)
    initiator = element.get(_camunda("initiator"))
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


def _message_throw(definition: Element, ctx: _Context, event_id: str) -> dict[str, Any]:
    """A message throw event's fields: its messageRef's message when it names one (optional on
    a throw event), and its implementation, written on the messageEventDefinition as Camunda
    Modeler writes it. With no implementation it passes the token on, as in Camunda 7."""
    children = _definition_children(definition, ctx, event_id)
    if children:
        raise ctx.unsupported(children[0], event_id)
    name = None
    if definition.get("messageRef"):
        name = _referenced(definition, ctx, event_id, "messageRef", "message", ctx.messages)
    implementation = _implementation(definition, ctx, event_id, "a message throw event")
    return {"is_message": True, "message_name": name, **implementation}


def _end_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    allowed = ("terminateEventDefinition", _ERROR, _MESSAGE, _ESCALATION, _SIGNAL, _COMPENSATE)
    definition = _event_definitions(element, ctx, allowed)
    if definition is None:
        return EndEvent(**common)
    if _local(definition) == _MESSAGE:
        return EndEvent(**common, **_message_throw(definition, ctx, common["id"]))
    if _local(definition) in (_ERROR, _ESCALATION, _SIGNAL, _COMPENSATE):
        return EndEvent(**common, **_trigger(definition, ctx, common["id"]))
    _plain_extensions(definition, ctx, common["id"])
    return EndEvent(**common, terminate=True)


def _intermediate_throw_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    definition = _event_definitions(
        element, ctx, (_SIGNAL, _MESSAGE, _ESCALATION, _LINK, _COMPENSATE)
    )
    if definition is not None and _local(definition) == _MESSAGE:
        return IntermediateThrowEvent(**common, **_message_throw(definition, ctx, common["id"]))
    trigger = {} if definition is None else _trigger(definition, ctx, common["id"])
    return IntermediateThrowEvent(**common, **trigger)


def _intermediate_catch_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    definition = _event_definitions(element, ctx, (_TIMER, _MESSAGE, _SIGNAL, _LINK, _CONDITIONAL))
    if definition is None:
        message = "an intermediate catch event needs a timer, a message or a signal definition"
        raise ctx.error(message, element)
    return IntermediateCatchEvent(**common, **_trigger(definition, ctx, common["id"]))


def _boundary_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
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


def _receive_task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    if ctx.boolean(element, "instantiate"):
        raise ctx.error('a receive task with instantiate="true" is not supported', element)
    name = _referenced(element, ctx, common["id"], "messageRef", "message", ctx.messages)
    return ReceiveTask(**common, message_name=name)


def _sub_process(element: Element, ctx: _Context) -> Node:
    """The subprocess node; its content is read by `_scope`."""
    common = _common(element, ctx)
    triggered = ctx.boolean(element, "triggeredByEvent")
    return SubProcess(**common, triggered_by_event=triggered)


def _handler_expression(
    element: Element, ctx: _Context, attribute: str, value: str, owner_id: str
) -> str:
    try:
        name = compile_expression(value).identifier
    except ExpressionError as error:
        raise ctx.error(f"camunda:{attribute}: {error.message}", element, owner_id) from None
    if name is None:
        message = f"camunda:{attribute} must name a handler as ${{name}}, not {value}"
        raise ctx.error(message, element, owner_id)
    return name


def _implementation(
    element: Element,
    ctx: _Context,
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
        value = element.get(_camunda(attribute))
        if value is None:
            continue
        if evaluates and attribute == "expression" and not _names_handler(value):
            try:
                expression = compile_expression(value)
            except ExpressionError as exc:
                raise error(f"camunda:expression: {exc.message}") from None
        else:
            handlers.append(_handler_expression(element, ctx, attribute, value, owner_id))
    class_name = element.get(_camunda("class"))
    if class_name is not None:
        if not is_handler_name(class_name):
            raise error(f"camunda:class '{class_name}' is not a class name")
        handlers.append(class_name)
    kind = element.get(_camunda("type"))
    topic = element.get(_camunda("topic"))
    if kind is not None and kind != "external":
        raise error(f'camunda:type="{kind}" is not supported by this engine')
    if kind == "external" and not topic:
        raise error('camunda:type="external" needs a camunda:topic')
    if topic is not None and kind != "external":
        raise error('camunda:topic needs camunda:type="external"')
    if len(handlers) + (topic is not None) + (expression is not None) > 1:
        raise error(_SERVICE_IMPLEMENTATION_REQUIRED.replace("a service task", what))
    priority = element.get(_camunda("taskPriority"), "0").strip()
    task_priority: int | str
    if is_expression(priority):
        task_priority = ctx.checked_text(element, "camunda:taskPriority", priority)
    elif re.fullmatch(r"[+-]?[0-9]+", priority):
        task_priority = int(priority)
    else:
        raise error(
            f"camunda:taskPriority must be an integer or a ${{...}} expression, not '{priority}'"
        )
    found = {
        "handler": handlers[0] if handlers else None,
        "topic": topic,
        "result_variable": element.get(_camunda("resultVariable")),
        "task_priority": task_priority,
    }
    return {**found, "expression": expression} if evaluates else found


def _names_handler(value: str) -> bool:
    """`${name}`: a handler's name (a text that does not compile is reported as the handler's)."""
    try:
        return compile_expression(value).identifier is not None
    except ExpressionError:
        return True


def _service_task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    send = _local(element) == "sendTask"
    what = "a send task" if send else "a service task"
    implementation = _implementation(element, ctx, common["id"], what, evaluates=True)
    if all(implementation[key] is None for key in ("handler", "topic", "expression")):
        raise ctx.error(_SERVICE_IMPLEMENTATION_REQUIRED.replace("a service task", what), element)
    return (SendTask if send else ServiceTask)(**common, **implementation)


def _script_task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx, frozenset({"script"}))
    scripts = element.findall(_bpmn("script"))
    if len(scripts) > 1:
        raise ctx.error("a script task has more than one script", scripts[1])
    text = "".join(scripts[0].itertext()) if scripts else ""
    script = _script(
        element,
        ctx,
        common["id"],
        element.get("scriptFormat"),
        text,
        element.get(_camunda("resource")),
    )
    result = element.get(_camunda("resultVariable"))
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


def _user_task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    fields: dict[str, Any] = {}
    for attribute, field_name in _USER_TASK_ATTRIBUTES.items():
        value = element.get(_camunda(attribute))
        fields[field_name] = (
            None if value is None else ctx.checked_text(element, f"camunda:{attribute}", value)
        )
    listeners = _listeners(element, ctx, common["id"], TASK_LISTENER, TASK_EVENTS)
    form_fields = _form_fields(element, ctx, common["id"])
    return UserTask(**common, **fields, task_listeners=listeners, form_fields=form_fields)


def _task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    return NoneTask(**common, manual=_local(element) == "manualTask")


def _gateway_with_default(
    kind: type[ExclusiveGateway] | type[InclusiveGateway],
) -> Callable[[Element, _Context], Node]:
    """The parser of a gateway that may name a default flow (a reference like any other)."""

    def parse(element: Element, ctx: _Context) -> Node:
        common = _common(element, ctx)
        _check_children(element, ctx)
        return kind(**common, default_flow=ctx.ref(element, "default"))

    return parse


_exclusive_gateway = _gateway_with_default(ExclusiveGateway)
_inclusive_gateway = _gateway_with_default(InclusiveGateway)


def _parallel_gateway(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    return ParallelGateway(**common)


def _event_based_gateway(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
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


def _business_rule_task(element: Element, ctx: _Context) -> Node:
    from engine.bpmn.rules import business_rule_task  # it reads elements with this module's helpers

    return business_rule_task(element, ctx)


def _call_activity(element: Element, ctx: _Context) -> Node:
    from engine.bpmn.calls import call_activity  # it reads elements with this module's helpers

    return call_activity(element, ctx)


NODE_PARSERS: dict[str, Callable[[Element, _Context], Node]] = {
    "startEvent": _start_event,
    "endEvent": _end_event,
    "intermediateThrowEvent": _intermediate_throw_event,
    "serviceTask": _service_task,
    "sendTask": _service_task,
    "scriptTask": _script_task,
    "businessRuleTask": _business_rule_task,
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
    "callActivity": _call_activity,
}


# --- sequence flows and processes --------------------------------------------------------------


def _sequence_flow(element: Element, ctx: _Context) -> SequenceFlow:
    flow_id = element.get("id")  # present: see generate_ids
    _check_children(element, ctx, frozenset({"conditionExpression"}))
    _plain_extensions(element, ctx, flow_id, frozenset({EXECUTION_LISTENER}))
    source, target = ctx.ref(element, "sourceRef"), ctx.ref(element, "targetRef")
    if not source or not target:
        raise ctx.error("sequenceFlow needs a sourceRef and a targetRef", element)
    conditions = element.findall(_bpmn("conditionExpression"))
    if len(conditions) > 1:
        raise ctx.error("sequenceFlow has more than one conditionExpression", element)
    if not conditions:
        return _flow_of(element, ctx, flow_id, source, target, None)
    condition_element = conditions[0]
    language = condition_element.get("language")
    text = "".join(condition_element.itertext())
    resource = condition_element.get(_camunda("resource"))
    if language not in (None, "", "juel") or resource is not None:
        script = _script(condition_element, ctx, flow_id, language or "juel", text, resource)
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
    element: Element, ctx: _Context, flow_id: str, source: str, target: str, condition: Any
) -> SequenceFlow:
    return SequenceFlow(
        id=flow_id,
        source=source,
        target=target,
        name=element.get("name"),
        condition=condition,
        listeners=_listeners(element, ctx, flow_id, EXECUTION_LISTENER, (TAKE_EVENT,)),
        line=element.sourceline,
        **_described(element),
    )


def _declared_refs(element: Element, ctx: _Context, local: str) -> list[str]:
    return [
        ctx.resolve(child, (child.text or "").strip(), local, element.get("id"))
        for child in element.findall(_bpmn(local))
    ]


def _is_loop(local: str) -> bool:
    return local.endswith("LoopCharacteristics")


def _scope(
    element: Element,
    ctx: _Context,
    parent: str | None,
    nodes: list[tuple[Node, Element]],
    flows: list[SequenceFlow],
) -> None:
    """The flow elements of a process (`parent` None) or of the subprocess `parent`, at any depth,
    in document order."""
    owner = element.get("id")
    for child in _children(element):
        local = _local(child)
        if _namespace(child) != BPMN_NS:
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
                _plain_extensions(element, ctx, owner, frozenset({EXECUTION_LISTENER}))
        elif parent is not None and (local in ("incoming", "outgoing") or _is_loop(local)):
            continue  # a subprocess's loop characteristics are read with the node
        elif local == "transaction":
            message = f"transaction is not supported by this engine ({_TRANSACTIONS})"
            raise ctx.error(message, child, child.get("id") or owner)
        elif local not in _DECORATION:
            raise ctx.unsupported(child, owner if _is_loop(local) else child.get("id") or owner)


def _process(element: Element, ctx: _Context) -> ProcessModel:
    key = element.get("id")
    if not key:
        raise ctx.error("process has no id", element)
    nodes: list[tuple[Node, Element]] = []
    flows: list[SequenceFlow] = []
    _scope(element, ctx, None, nodes, flows)
    from engine.bpmn.compensation import link_handlers  # it reads elements with this module

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
        version_tag=element.get(_camunda("versionTag")),
        history_ttl_days=_history_ttl(element, ctx),
        listeners=_listeners(element, ctx, key, EXECUTION_LISTENER, EXECUTION_EVENTS),
        line=element.sourceline,
        **_described(element),
    )
    return validate(model, ctx.file)


def _history_ttl(element: Element, ctx: _Context) -> int | None:
    """camunda:historyTimeToLive in days: `5` or `P5D` (never an expression)."""
    text = element.get(_camunda("historyTimeToLive"))
    if text is None:
        return None
    try:
        return parse_history_ttl(text)
    except ValueError as exc:
        raise ctx.error(str(exc), element) from None


def _check_fan_out(
    ctx: _Context,
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


# --- generated ids -----------------------------------------------------------------------------

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
    scopes = (_bpmn("process"), _bpmn("subProcess"))
    for element in root.iter(etree.Element):
        element_id = element.get("id")
        if element_id:
            taken.add(element_id)
            continue
        parent = element.getparent()
        local = _local(element)
        if (
            parent is not None
            and parent.tag in scopes
            and _namespace(element) == BPMN_NS
            and (local == "sequenceFlow" or local in NODE_PARSERS)
        ):
            missing.append(element)
    counts: dict[str, int] = {}
    for element in missing:
        local = _local(element)
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


# --- the legacy extension namespace ------------------------------------------------------------

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
            element.tag = _camunda(_local(element))
        for name in [name for name in element.attrib if name.startswith(_ACTIVITI_PREFIX)]:
            value = element.attrib.pop(name)
            current = _camunda(name[len(_ACTIVITI_PREFIX) :])
            if element.get(current) is None:
                element.set(current, value)


# --- entry point -------------------------------------------------------------------------------


def _prolog_doctype(data: bytes) -> int | None:
    """Offset of a DOCTYPE before the root element. A cheap first gate that also gives the line;
    the parsed document's docinfo is checked as well, which catches any other encoding."""
    index = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    while True:
        while index < len(data) and data[index] in b" \t\r\n":
            index += 1
        if data.startswith(b"<!DOCTYPE", index):
            return index
        if data.startswith(b"<?", index):
            closer = b"?>"
        elif data.startswith(b"<!--", index):
            closer = b"-->"
        else:
            return None
        end = data.find(closer, index + 2)
        if end < 0:
            return None
        index = end + len(closer)


def _load(data: bytes, file: str, parser: Any) -> Element:
    doctype = _prolog_doctype(data)
    if doctype is not None:
        line = data.count(b"\n", 0, doctype) + 1
        raise ModelError("DOCTYPE declarations are not allowed", file=file, line=line)
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as error:
        reason = str(error.msg).split(", line ")[0]
        raise ModelError(f"malformed XML: {reason}", file=file, line=error.lineno) from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise ModelError("DOCTYPE declarations are not allowed", file=file)
    return root


def load_document(data: bytes | str, file: str) -> Element:
    """The root element of a BPMN or DMN document, read as safely as the parser reads it."""
    if isinstance(data, str):
        return _load(data.encode("utf-8"), file, _UTF8_PARSER)
    return _load(data, file, _PARSER)


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
    root = _load(raw, file, _UTF8_PARSER if isinstance(data, str) else _PARSER)
    if root.tag != _bpmn("definitions"):
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
            for item in root.findall(_bpmn(local))
            if item.get("id")
        }

    ctx = _Context(
        file=file,
        messages=table("message", "name"),
        signals=table("signal", "name"),
        errors=table("error", "errorCode"),
        escalations=table("escalation", "escalationCode"),
        ids=ids,
        generated=generated,
        limits=limits,
    )
    processes = root.findall(_bpmn("process"))
    if not processes:
        raise ModelError("the file contains no bpmn:process", file=file, line=root.sourceline)
    executable = [p for p in processes if (p.get("isExecutable") or "").strip().lower() == "true"]
    return [_process(process, ctx) for process in executable or processes]
