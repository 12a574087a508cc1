"""The reading kernel of the BPMN parser: what every part of it reads elements with.

The namespaces and the hardened XML loading (no DTD of any kind, no entities, no network); tag and
child helpers; the `Context` of one document (its definitions-level tables, ids and limits, and
the errors that name file, line and element); the checks of extension elements and children that
every flow node, sequence flow and event definition goes through; scripts and listeners.
engine/bpmn/parser.py and the modules of each family of elements (events.py, tasks.py,
gateways.py, formdata.py, loops.py, calls.py, rules.py, compensation.py, conditional.py, nodes.py)
read with these, and none of them imports the parser.
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.errors import ExpressionError, ModelError
from engine.language.composite import compile_text, has_expression
from engine.language.expressions import (
    ACTS_ON_EXECUTION,
    ACTS_ON_TASK,
    NO_ACTING,
    compile_expression,
)
from engine.language.timers import parse_cycle
from engine.model import (
    DEFAULT_LIMITS,
    TAKE_EVENT,
    Listener,
    ModelLimits,
    Script,
    ScriptFormat,
)

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


SAFE_PARSER = etree.XMLParser(**_SAFE)


# Text given as str is encoded to UTF-8 here, whatever its XML declaration says.
UTF8_PARSER = etree.XMLParser(**_SAFE, encoding="utf-8")


# Elements with no execution meaning, skipped wherever they appear inside a process or a node.
DECORATION = frozenset(
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
# refuse a model, and never executed (camunda:properties is kept as data, see `described`).
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


# The flow nodes this engine reads (engine/bpmn/parser.py has a reader for each).
FLOW_NODES = frozenset(
    {
        "startEvent",
        "endEvent",
        "intermediateThrowEvent",
        "serviceTask",
        "sendTask",
        "scriptTask",
        "businessRuleTask",
        "userTask",
        "task",
        "manualTask",
        "exclusiveGateway",
        "parallelGateway",
        "inclusiveGateway",
        "eventBasedGateway",
        "intermediateCatchEvent",
        "boundaryEvent",
        "receiveTask",
        "subProcess",
        "transaction",
        "callActivity",
    }
)
RETRY_CYCLE = "failedJobRetryTimeCycle"


EXECUTION_LISTENER = "executionListener"


TASK_LISTENER = "taskListener"


# Read on flow nodes (engine/bpmn/nodes.py); refused anywhere else.
INPUT_OUTPUT = "inputOutput"


_HANDLER_NAME = re.compile(r"[^\W\d][\w$]*(\.[^\W\d][\w$]*)*")


def is_handler_name(name: str) -> bool:
    """A handler registered by name (`chargeCard`) or a dotted class name (`com.acme.Charge`)."""
    return _HANDLER_NAME.fullmatch(name) is not None


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
def bpmn_tag(local: str) -> str:
    return f"{{{BPMN_NS}}}{local}"


@functools.cache
def camunda_tag(local: str) -> str:
    return f"{{{CAMUNDA_NS}}}{local}"


def local_name(element: Element) -> str:
    """The tag without its namespace (read from the tag text: a QName per call costs more than
    the rest of reading most elements)."""
    tag: str = element.tag
    return tag.rpartition("}")[2]


def namespace_of(element: Element) -> str | None:
    tag: str = element.tag
    return tag[1 : tag.index("}")] if tag.startswith("{") else None


def qualified_name(element: Element) -> str:
    """The tag as messages show it: bare for BPMN, `camunda:` for the camunda namespace (whatever
    prefix the file chose), the file's own prefix otherwise."""
    namespace = namespace_of(element)
    if namespace == BPMN_NS:
        return local_name(element)
    if namespace == CAMUNDA_NS:
        return f"camunda:{local_name(element)}"
    return f"{element.prefix}:{local_name(element)}" if element.prefix else str(element.tag)


def element_children(element: Element) -> list[Element]:
    """Element children only: comments and processing instructions are not elements."""
    return [child for child in element if isinstance(child.tag, str)]


def element_error(
    file: str, message: str, element: Element, element_id: str | None = None
) -> ModelError:
    """The ModelError of `element` in `file`: its line, and its id unless `element_id` is given
    (BPMN and DMN files alike)."""
    return ModelError(
        message,
        file=file,
        line=element.sourceline,
        element_id=element_id if element_id is not None else element.get("id"),
    )


@dataclass(frozen=True)
class Context:
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
        return element_error(self.file, message, element, element_id)

    def unsupported(self, element: Element, element_id: str | None) -> ModelError:
        tag = qualified_name(element)
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
        """A value evaluated when it is used: literal text, one safe expression or a composite
        of text and expressions (engine/language/composite.py), each part compiled now."""
        if has_expression(value):
            try:
                compile_text(value)
            except ExpressionError as error:
                raise self.error(f"{attribute}: {error.message}", element) from None
        return value


def check_extensions(
    element: Element,
    ctx: Context,
    owner_id: str | None,
    listeners: frozenset[str] = frozenset(),
) -> Element | None:
    """Check the camunda: extensions of `element`; return its failedJobRetryTimeCycle, if any.
    The listener elements named in `listeners` may appear (they are read by `read_listeners`)."""
    retry: Element | None = None
    for extensions in element.findall(bpmn_tag("extensionElements")):
        for child in element_children(extensions):
            if namespace_of(child) != CAMUNDA_NS:
                continue
            local = local_name(child)
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
                or (local in ("in", "out") and local_name(element) == "callActivity")
                or (local == "in" and local_name(element) == "signalEventDefinition")
            ):
                continue  # read by engine/bpmn/nodes.py / calls.py / parser.py
            elif local in REJECTED_EXTENSIONS:
                message = (
                    f"{qualified_name(child)} is not supported by this engine (it changes what "
                    "Camunda executes)"
                )
                raise ctx.error(message, child, owner_id)
            elif local not in IGNORED_EXTENSIONS:
                raise ctx.unsupported(child, owner_id)
    return retry


def described(element: Element) -> dict[str, Any]:
    """The model fields that only describe `element`: its bpmn:documentation text (several are
    joined by a blank line) and its camunda:properties as (name, value) pairs in document order."""
    texts = ["".join(child.itertext()) for child in element.findall(bpmn_tag("documentation"))]
    properties = tuple(
        (item.get("name") or "", item.get("value") or "")
        for extensions in element.findall(bpmn_tag("extensionElements"))
        for group in extensions.findall(camunda_tag("properties"))
        for item in group.findall(camunda_tag("property"))
    )
    return {"documentation": "\n\n".join(texts) if texts else None, "properties": properties}


def plain_extensions(
    element: Element,
    ctx: Context,
    owner_id: str | None,
    listeners: frozenset[str] = frozenset(),
) -> None:
    """Extensions of an element that is not a flow node: no retry cycle there."""
    retry = check_extensions(element, ctx, owner_id, listeners)
    if retry is not None:
        message = f"camunda:{RETRY_CYCLE} belongs on a task, a subprocess or an event"
        raise ctx.error(message, retry, owner_id)
    for extensions in element.findall(bpmn_tag("extensionElements")):
        for mapping in extensions.findall(camunda_tag(INPUT_OUTPUT)):
            message = "camunda:inputOutput belongs on a task, a subprocess or an event"
            raise ctx.error(message, mapping, owner_id)


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


def read_script(
    element: Element,
    ctx: Context,
    owner_id: str | None,
    written_format: str | None,
    text: str,
    resource: str | None,
    acting: frozenset[str] = NO_ACTING,
) -> Script:
    """A script of `element`: its format checked, its text inline or read from its resource
    (an expression's calls may change what `acting` names: see `compile_expression`)."""
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
            compile_expression(text.strip(), acting)
        except ExpressionError as error:
            raise ctx.error(f"script: {error.message}", element, owner_id) from None
        text = text.strip()
    return Script(format=kind, source=text, resource=resource)


def listener_handler(value: str) -> str | None:
    """The handler a listener's camunda:expression or camunda:delegateExpression names:
    `${name}` names `name`, `${name.method(execution)}` names `name.method`. None for any other
    text, and for a call on `execution` or `task` (an expression to evaluate)."""
    found = _LISTENER_EXPRESSION.fullmatch(value.strip())
    if found is None or (found.group(2) and found.group(1) in ("execution", "task")):
        return None
    return f"{found.group(1)}.{found.group(2)}" if found.group(2) else found.group(1)


def _listener(
    child: Element, ctx: Context, owner_id: str | None, events: tuple[str, ...], default: str
) -> Listener:
    local = local_name(child)
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
    acting = ACTS_ON_TASK if local == TASK_LISTENER else ACTS_ON_EXECUTION
    handlers: list[str] = []
    script: Script | None = None
    evaluated: Script | None = None  # a camunda:expression that is not a handler's name
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
        if name is not None:
            handlers.append(name)
            continue
        if attribute == "delegateExpression":
            message = (
                f"camunda:{local} delegateExpression must name a registered handler as "
                f"${{name}} or ${{name.method(execution)}}, not {value}"
            )
            raise ctx.error(message, child, owner_id)
        # Any other camunda:expression is evaluated when the listener runs, and may act
        # (`${execution.setVariable('approved', true)}`); what it calls is checked here.
        try:
            compile_expression(value.strip(), acting)
        except ExpressionError as error:
            message = (
                f"camunda:{local} expression: {error.message}; a listener's expression is "
                "evaluated (only calls the expression language allows), or it must name a "
                "registered handler as ${name} or ${name.method(execution)}"
            )
            raise ctx.error(message, child, owner_id) from None
        evaluated = Script(format="expression", source=value.strip())
    for part in element_children(child):
        part_local = local_name(part)
        if namespace_of(part) == CAMUNDA_NS and part_local == "script":
            if script is not None:
                raise ctx.error(f"camunda:{local} has more than one camunda:script", part)
            script = read_script(
                part,
                ctx,
                owner_id,
                part.get("scriptFormat"),
                "".join(part.itertext()),
                part.get("resource"),
                acting,
            )
        elif namespace_of(part) == CAMUNDA_NS and part_local == "field":
            message = (
                f"camunda:field on a camunda:{local} is not supported by this engine; read the "
                "value from a process variable instead"
            )
            raise ctx.error(message, part, owner_id)
        else:
            raise ctx.unsupported(part, owner_id)
    if len(handlers) + (script is not None) + (evaluated is not None) != 1:
        message = (
            f"camunda:{local} needs exactly one of class, expression, delegateExpression or a "
            "camunda:script"
        )
        raise ctx.error(message, child, owner_id)
    return Listener(
        event=event,
        handler=handlers[0] if handlers else None,
        script=script or evaluated,
        line=child.sourceline,
    )


def read_listeners(
    element: Element, ctx: Context, owner_id: str | None, local: str, events: tuple[str, ...]
) -> tuple[Listener, ...]:
    """The `camunda:<local>` listeners of `element`, in document order."""
    default = TAKE_EVENT if events == (TAKE_EVENT,) else ""
    return tuple(
        _listener(child, ctx, owner_id, events, default)
        for extensions in element.findall(bpmn_tag("extensionElements"))
        for child in extensions.findall(camunda_tag(local))
    )


def check_children(element: Element, ctx: Context, allowed: frozenset[str] = frozenset()) -> None:
    """Children of a flow node: only decoration, incoming/outgoing and `allowed`. (A flow node's
    extensionElements are checked by `common_fields`.)"""
    for child in element_children(element):
        local = local_name(child)
        known = (
            local in DECORATION
            or local in ("incoming", "outgoing", "extensionElements")
            or local in allowed
            or (is_loop(local) and local_name(element) in FLOW_NODES)  # read by `common_fields`
        )
        if namespace_of(child) != BPMN_NS or not known:
            raise ctx.unsupported(child, element.get("id"))


def definition_children(definition: Element, ctx: Context, event_id: str) -> list[Element]:
    """The meaningful children of an event definition; decoration skipped, extensions checked."""
    plain_extensions(definition, ctx, event_id)
    return [
        child
        for child in element_children(definition)
        if not (
            namespace_of(child) == BPMN_NS
            and (local_name(child) in DECORATION or local_name(child) == "extensionElements")
        )
    ]


def is_loop(local: str) -> bool:
    return local.endswith("LoopCharacteristics")


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


def load_bytes(data: bytes, file: str, parser: Any) -> Element:
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
        return load_bytes(data.encode("utf-8"), file, UTF8_PARSER)
    return load_bytes(data, file, SAFE_PARSER)
