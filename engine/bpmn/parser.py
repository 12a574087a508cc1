"""BPMN 2.0 XML (as Camunda Modeler saves it) to `ProcessModel`s.

Parsing is hardened: no DTD of any kind, no entities, no network, a size limit. Every flow element
is either understood or rejected with a ModelError naming the file, line and element; only
decoration with no execution meaning (documentation, lanes, annotations, diagrams...) is skipped.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.errors import ExpressionError, ModelError
from engine.expressions import compile_expression
from engine.model import (
    EndEvent,
    ExclusiveGateway,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    TimerDefinition,
    TimerKind,
    UserTask,
    validate,
)

MAX_BPMN_BYTES = 5 * 1024 * 1024
BPMN_NS = "http://www.omg.org/spec/BPMN/20100524/MODEL"
CAMUNDA_NS = "http://camunda.org/schema/1.0/bpmn"

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
        "extensionElements",
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


def _bpmn(local: str) -> str:
    return f"{{{BPMN_NS}}}{local}"


def _camunda(local: str) -> str:
    return f"{{{CAMUNDA_NS}}}{local}"


def _local(element: Element) -> str:
    return str(etree.QName(element).localname)


def _children(element: Element) -> list[Element]:
    """Element children only: comments and processing instructions are not elements."""
    return [child for child in element if isinstance(child.tag, str)]


@dataclass(frozen=True)
class _Context:
    file: str
    messages: dict[str, str | None]

    def error(self, message: str, element: Element, element_id: str | None = None) -> ModelError:
        return ModelError(
            message,
            file=self.file,
            line=element.sourceline,
            element_id=element_id if element_id is not None else element.get("id"),
        )

    def unsupported(self, element: Element, element_id: str | None) -> ModelError:
        tag = _local(element)
        if etree.QName(element).namespace != BPMN_NS:
            tag = f"{element.prefix}:{tag}" if element.prefix else element.tag
        return self.error(f"{tag} is not supported by this engine", element, element_id)

    def boolean(self, element: Element, attribute: str) -> bool:
        value = element.get(attribute)
        if value is None:
            return False
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


# --- flow nodes --------------------------------------------------------------------------------


def _common(element: Element, ctx: _Context) -> dict[str, Any]:
    node_id = element.get("id")
    if not node_id:
        raise ctx.error(f"{_local(element)} has no id", element)
    return {
        "id": node_id,
        "name": element.get("name"),
        "async_before": ctx.boolean(element, _camunda("asyncBefore"))
        or ctx.boolean(element, _camunda("async")),
        "async_after": ctx.boolean(element, _camunda("asyncAfter")),
        "line": element.sourceline,
    }


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
            raise ctx.error(message, definition, element.get("id"))
    if len(definitions) > 1:
        raise ctx.error("an event with several event definitions is not supported", element)
    _check_children(element, ctx, frozenset(allowed))
    return definitions[0] if definitions else None


def _check_children(element: Element, ctx: _Context, allowed: frozenset[str] = frozenset()) -> None:
    for child in _children(element):
        local = _local(child)
        known = local in _DECORATION or local in ("incoming", "outgoing") or local in allowed
        if etree.QName(child).namespace != BPMN_NS or not known:
            raise ctx.unsupported(child, element.get("id"))


def _start_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    definition = _event_definitions(
        element, ctx, ("messageEventDefinition", "timerEventDefinition")
    )
    if definition is None:
        return StartEvent(**common)
    if _local(definition) == "timerEventDefinition":
        return StartEvent(**common, timer=_timer(definition, ctx, common["id"]))
    message_ref = definition.get("messageRef")
    if not message_ref:
        raise ctx.error("message start event has no messageRef", definition, common["id"])
    if message_ref not in ctx.messages:
        message = f"messageRef '{message_ref}' names no bpmn:message"
        raise ctx.error(message, definition, common["id"])
    message_name = ctx.messages[message_ref]
    if not message_name:
        raise ctx.error(f"message '{message_ref}' has no name", definition, common["id"])
    return StartEvent(**common, message_name=message_name)


def _timer(definition: Element, ctx: _Context, event_id: str) -> TimerDefinition:
    specs = _children(definition)
    if len(specs) != 1 or _local(specs[0]) not in _TIMER_KINDS:
        raise ctx.error(
            "a timer needs exactly one of timeDate, timeDuration or timeCycle", definition, event_id
        )
    text = "".join(specs[0].itertext()).strip()
    if not text:
        raise ctx.error(f"{_local(specs[0])} is empty", specs[0], event_id)
    ctx.checked_text(specs[0], _local(specs[0]), text)
    return TimerDefinition(kind=_TIMER_KINDS[_local(specs[0])], text=text)


def _end_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    definition = _event_definitions(element, ctx, ("terminateEventDefinition",))
    return EndEvent(**common, terminate=definition is not None)


def _intermediate_throw_event(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _event_definitions(element, ctx, ())
    return IntermediateThrowEvent(**common)


def _handler_expression(element: Element, ctx: _Context, attribute: str, value: str) -> str:
    try:
        name = compile_expression(value).identifier
    except ExpressionError as error:
        raise ctx.error(f"camunda:{attribute}: {error.message}", element) from None
    if name is None:
        message = f"camunda:{attribute} must name a handler as ${{name}}, not {value}"
        raise ctx.error(message, element)
    return name


def _service_task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    handlers: list[str] = []
    for attribute in ("delegateExpression", "expression"):
        value = element.get(_camunda(attribute))
        if value is not None:
            handlers.append(_handler_expression(element, ctx, attribute, value))
    class_name = element.get(_camunda("class"))
    if class_name is not None:
        if not is_handler_name(class_name):
            raise ctx.error(f"camunda:class '{class_name}' is not a class name", element)
        handlers.append(class_name)
    kind = element.get(_camunda("type"))
    topic = element.get(_camunda("topic"))
    if kind is not None and kind != "external":
        raise ctx.error(f'camunda:type="{kind}" is not supported by this engine', element)
    if kind == "external" and not topic:
        raise ctx.error('camunda:type="external" needs a camunda:topic', element)
    if topic is not None and kind != "external":
        raise ctx.error('camunda:topic needs camunda:type="external"', element)
    if len(handlers) + (topic is not None) != 1:
        raise ctx.error(_SERVICE_IMPLEMENTATION_REQUIRED, element)
    priority = element.get(_camunda("taskPriority"), "0").strip()
    if not re.fullmatch(r"[+-]?[0-9]+", priority):
        raise ctx.error(f"camunda:taskPriority must be an integer, not '{priority}'", element)
    return ServiceTask(
        **common,
        handler=handlers[0] if handlers else None,
        topic=topic,
        result_variable=element.get(_camunda("resultVariable")),
        task_priority=int(priority),
    )


_USER_TASK_ATTRIBUTES = {
    "assignee": "assignee",
    "candidateUsers": "candidate_users",
    "candidateGroups": "candidate_groups",
    "dueDate": "due_date",
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
    return UserTask(**common, **fields)


def _task(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    return NoneTask(**common, manual=_local(element) == "manualTask")


def _exclusive_gateway(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    return ExclusiveGateway(**common, default_flow=element.get("default"))


def _parallel_gateway(element: Element, ctx: _Context) -> Node:
    common = _common(element, ctx)
    _check_children(element, ctx)
    return ParallelGateway(**common)


NODE_PARSERS: dict[str, Callable[[Element, _Context], Node]] = {
    "startEvent": _start_event,
    "endEvent": _end_event,
    "intermediateThrowEvent": _intermediate_throw_event,
    "serviceTask": _service_task,
    "userTask": _user_task,
    "task": _task,
    "manualTask": _task,
    "exclusiveGateway": _exclusive_gateway,
    "parallelGateway": _parallel_gateway,
}


# --- sequence flows and processes --------------------------------------------------------------


def _sequence_flow(element: Element, ctx: _Context) -> SequenceFlow:
    flow_id = element.get("id")
    if not flow_id:
        raise ctx.error("sequenceFlow has no id", element)
    _check_children(element, ctx, frozenset({"conditionExpression"}))
    source, target = element.get("sourceRef"), element.get("targetRef")
    if not source or not target:
        raise ctx.error("sequenceFlow needs a sourceRef and a targetRef", element)
    conditions = element.findall(_bpmn("conditionExpression"))
    if len(conditions) > 1:
        raise ctx.error("sequenceFlow has more than one conditionExpression", element)
    condition = None
    if conditions:
        condition_element = conditions[0]
        language = condition_element.get("language")
        if (language not in (None, "", "juel")) or condition_element.get(_camunda("resource")):
            detail = f" (language '{language}')" if language else ""
            message = f"script conditions are not supported{detail}; write a ${{...}} expression"
            raise ctx.error(message, condition_element, flow_id)
        text = "".join(condition_element.itertext()).strip()
        try:
            condition = compile_expression(text)
        except ExpressionError as error:
            message = f"invalid condition on sequence flow '{flow_id}': {error.message}"
            raise ctx.error(message, condition_element, flow_id) from None
    return SequenceFlow(
        id=flow_id,
        source=source,
        target=target,
        name=element.get("name"),
        condition=condition,
        line=element.sourceline,
    )


def _declared_refs(element: Element, local: str) -> list[str]:
    return [(child.text or "").strip() for child in element.findall(_bpmn(local))]


def _process(element: Element, ctx: _Context) -> ProcessModel:
    key = element.get("id")
    if not key:
        raise ctx.error("process has no id", element)
    nodes: list[tuple[Node, Element]] = []
    flows: list[SequenceFlow] = []
    for child in _children(element):
        local = _local(child)
        if etree.QName(child).namespace != BPMN_NS:
            raise ctx.unsupported(child, child.get("id") or key)
        if local == "sequenceFlow":
            flows.append(_sequence_flow(child, ctx))
        elif local in NODE_PARSERS:
            nodes.append((NODE_PARSERS[local](child, ctx), child))
        elif local not in _DECORATION:
            raise ctx.unsupported(child, child.get("id") or key)
    wired: list[Node] = []
    for node, node_element in nodes:
        incoming = tuple(flow.id for flow in flows if flow.target == node.id)
        outgoing = tuple(flow.id for flow in flows if flow.source == node.id)
        for direction, derived in (("incoming", incoming), ("outgoing", outgoing)):
            declared = _declared_refs(node_element, direction)
            if declared and set(declared) != set(derived):
                raise ctx.error(
                    f"<{direction}> elements ({', '.join(declared)}) disagree with the "
                    f"sequence flows ({', '.join(derived) or 'none'})",
                    node_element,
                )
        wired.append(replace(node, incoming=incoming, outgoing=outgoing))
    model = ProcessModel(
        key=key,
        name=element.get("name"),
        nodes=tuple(wired),
        flows=tuple(flows),
        version_tag=element.get(_camunda("versionTag")),
        line=element.sourceline,
    )
    return validate(model, ctx.file)


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
        raise ModelError("DOCTYPE declarations are not allowed in BPMN", file=file, line=line)
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as error:
        reason = str(error.msg).split(", line ")[0]
        raise ModelError(f"malformed XML: {reason}", file=file, line=error.lineno) from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise ModelError("DOCTYPE declarations are not allowed in BPMN", file=file)
    return root


def parse_bpmn(data: bytes | str, file: str = "<string>") -> list[ProcessModel]:
    """One model per executable process (every process when none is marked isExecutable)."""
    too_large = ModelError(f"BPMN input is larger than {MAX_BPMN_BYTES} bytes", file=file)
    if len(data) > MAX_BPMN_BYTES:  # a str has no more characters than UTF-8 bytes
        raise too_large
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_BPMN_BYTES:
        raise too_large
    root = _load(raw, file, _UTF8_PARSER if isinstance(data, str) else _PARSER)
    if root.tag != _bpmn("definitions"):
        raise ModelError(
            f"the root element is {etree.QName(root).localname}, not bpmn:definitions",
            file=file,
            line=root.sourceline,
        )
    messages = {
        message.get("id"): message.get("name")
        for message in root.findall(_bpmn("message"))
        if message.get("id")
    }
    ctx = _Context(file=file, messages=messages)
    processes = root.findall(_bpmn("process"))
    if not processes:
        raise ModelError("the file contains no bpmn:process", file=file, line=root.sourceline)
    executable = [p for p in processes if (p.get("isExecutable") or "").strip().lower() == "true"]
    return [_process(process, ctx) for process in executable or processes]
