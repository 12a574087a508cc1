"""`ProcessModel`s to BPMN 2.0 XML in the style Camunda Modeler saves (without diagram layout).

`parse_bpmn(write_bpmn([model]))[0] == model` holds for every model the parser or the builder
produces: sequence flows are written in an order that reproduces each node's incoming and outgoing
order, since the parser derives those from the document order of the flows. Subprocesses hold their
nodes and flows; messages, signals, errors and escalations are written once at the definitions
level, under ids that clash with no element of the document.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.inputoutput import write_input_output
from engine.bpmn.reading import BPMN_NS, CAMUNDA_NS
from engine.errors import ExpressionError, ModelError
from engine.language.expressions import compile_expression
from engine.language.forms import FormField
from engine.language.mappings import InputOutput
from engine.model import (
    BoundaryEvent,
    BusinessRuleTask,
    CallActivity,
    CallMapping,
    ConditionalTrigger,
    EndEvent,
    ExclusiveGateway,
    Implemented,
    InclusiveGateway,
    IntermediateThrowEvent,
    Listener,
    MessageThrow,
    MultiInstance,
    Node,
    ProcessModel,
    Properties,
    ReceiveTask,
    ScriptCondition,
    ScriptTask,
    SequenceFlow,
    ServiceTask,
    StandardLoop,
    StartEvent,
    SubProcess,
    TimerDefinition,
    UserTask,
)

XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
_NSMAP = {"bpmn": BPMN_NS, "camunda": CAMUNDA_NS, "xsi": XSI_NS}
_TIMER_ELEMENTS = {"date": "timeDate", "duration": "timeDuration", "cycle": "timeCycle"}
_USER_TASK_ATTRIBUTES = (
    ("assignee", "assignee"),
    ("candidate_users", "candidateUsers"),
    ("candidate_groups", "candidateGroups"),
    ("due_date", "dueDate"),
    ("follow_up_date", "followUpDate"),
    ("priority", "priority"),
    ("form_key", "formKey"),
)

Element = Any


def _bpmn(local: str) -> str:
    return f"{{{BPMN_NS}}}{local}"


def _camunda(local: str) -> str:
    return f"{{{CAMUNDA_NS}}}{local}"


def _set(element: Element, attribute: str, value: str | None) -> None:
    if value is not None:
        element.set(attribute, value)


def _formal_expression(parent: Element, local: str, text: str) -> None:
    child = etree.SubElement(parent, _bpmn(local))
    child.set(f"{{{XSI_NS}}}type", "bpmn:tFormalExpression")
    child.text = text


def _listener(extensions: Element, local: str, listener: Listener) -> None:
    child = etree.SubElement(extensions, _camunda(local))
    child.set("event", listener.event)
    if listener.handler is not None and _is_identifier(listener.handler):
        child.set("delegateExpression", f"${{{listener.handler}}}")
    elif listener.handler is not None:
        child.set("class", listener.handler)
    if listener.script is not None:
        script = etree.SubElement(child, _camunda("script"))
        script.set("scriptFormat", _SCRIPT_FORMATS[listener.script.format])
        script.text = listener.script.source


_SCRIPT_FORMATS = {"javascript": "javascript", "expression": "juel"}


def _form_data(extensions: Element, fields: tuple[FormField, ...]) -> None:
    form = etree.SubElement(extensions, _camunda("formData"))
    for form_field in fields:
        element = etree.SubElement(form, _camunda("formField"))
        element.set("id", form_field.id)
        _set(element, "label", form_field.label)
        element.set("type", form_field.type)
        _set(element, "defaultValue", form_field.default)
        _set(element, "datePattern", form_field.date_pattern)
        if form_field.properties:
            group = etree.SubElement(element, _camunda("properties"))
            for property_id, value in form_field.properties:
                item = etree.SubElement(group, _camunda("property"))
                item.set("id", property_id)
                item.set("value", value)
        if form_field.constraints:
            validation = etree.SubElement(element, _camunda("validation"))
            for name, config in form_field.constraints:
                constraint = etree.SubElement(validation, _camunda("constraint"))
                constraint.set("name", name)
                _set(constraint, "config", config)
        for value_id, value_name in form_field.values:
            value = etree.SubElement(element, _camunda("value"))
            value.set("id", value_id)
            _set(value, "name", value_name)


def _described(
    element: Element,
    documentation: str | None,
    properties: Properties,
    retry: str | None = None,
    listeners: tuple[Listener, ...] = (),
    task_listeners: tuple[Listener, ...] = (),
    form_fields: tuple[FormField, ...] = (),
    io: InputOutput | None = None,
) -> None:
    """bpmn:documentation first, then the extensions: camunda:formData, camunda:properties, the
    retry cycle, the listeners and the input/output parameters."""
    if documentation is not None:
        etree.SubElement(element, _bpmn("documentation")).text = documentation
    extended = properties or retry is not None or listeners or task_listeners or form_fields
    if not extended and io is None:
        return
    extensions = etree.SubElement(element, _bpmn("extensionElements"))
    if form_fields:
        _form_data(extensions, form_fields)
    if properties:
        group = etree.SubElement(extensions, _camunda("properties"))
        for name, value in properties:
            item = etree.SubElement(group, _camunda("property"))
            item.set("name", name)
            item.set("value", value)
    if retry is not None:
        etree.SubElement(extensions, _camunda("failedJobRetryTimeCycle")).text = retry
    for listener in listeners:
        _listener(extensions, "executionListener", listener)
    for listener in task_listeners:
        _listener(extensions, "taskListener", listener)
    if io is not None:
        write_input_output(extensions, io, CAMUNDA_NS)


def _is_identifier(name: str) -> bool:
    try:
        return compile_expression(f"${{{name}}}").identifier == name
    except ExpressionError:
        return False


def _node_order(model: ProcessModel, scope: list[Node]) -> list[Node]:
    """Start events, then breadth-first along the flows (an activity's boundary events right after
    it): the file reads like the diagram."""
    members = {node.id for node in scope}
    boundaries: dict[str, list[Node]] = {}
    for node in scope:
        if isinstance(node, BoundaryEvent):
            boundaries.setdefault(node.attached_to, []).append(node)
    ordered: list[Node] = []
    seen: set[str] = set()
    pending: deque[Node] = deque()

    def visit(node: Node) -> None:
        if node.id not in seen:
            seen.add(node.id)
            pending.append(node)

    def drain() -> None:
        while pending:
            node = pending.popleft()
            ordered.append(node)
            for boundary in boundaries.get(node.id, ()):
                visit(boundary)
            for flow_id in node.outgoing:
                target = model.flow(flow_id).target if model.has_flow(flow_id) else None
                if target is not None and target in members:
                    visit(model.node(target))

    for node in scope:
        if isinstance(node, StartEvent):
            visit(node)
    drain()
    for node in scope:
        visit(node)
        drain()
    return ordered


def _flow_order(flows: list[SequenceFlow], nodes: list[Node]) -> list[SequenceFlow]:
    """Flows in an order that lists every node's incoming and outgoing flows as its tuples do.

    A topological sort of "comes before" constraints taken from consecutive entries of those
    tuples; ties go to the flow whose source comes first in `nodes`.
    """
    position = {node.id: index for index, node in enumerate(nodes)}
    outgoing_index = {flow_id: i for node in nodes for i, flow_id in enumerate(node.outgoing)}
    flows = sorted(
        flows,
        key=lambda f: (position.get(f.source, len(nodes)), outgoing_index.get(f.id, 0), f.id),
    )
    rank = {flow.id: index for index, flow in enumerate(flows)}
    after: dict[str, set[str]] = {flow.id: set() for flow in flows}
    for node in nodes:
        for refs in (node.incoming, node.outgoing):
            for first, second in itertools.pairwise(refs):
                if first in after and second in after and first != second:
                    after[first].add(second)
    waiting = dict.fromkeys(after, 0)
    for successors in after.values():
        for successor in successors:
            waiting[successor] += 1
    ready = [rank[flow_id] for flow_id, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    ordered: list[SequenceFlow] = []
    placed: set[str] = set()
    while len(ordered) < len(flows):
        if not ready:
            # Contradictory constraints (a cycle): release the first remaining flow.
            heapq.heappush(ready, min(rank[f] for f in rank if f not in placed))
        flow = flows[heapq.heappop(ready)]
        if flow.id in placed:
            continue
        placed.add(flow.id)
        ordered.append(flow)
        for successor in after[flow.id]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(ready, rank[successor])
    return ordered


@dataclass(frozen=True)
class _Refs:
    """Definitions-level ids: message name, signal name, error and escalation code to element
    id."""

    messages: dict[str, str]
    signals: dict[str, str]
    errors: dict[str, str]
    escalations: dict[str, str]


def _timer(parent: Element, timer: TimerDefinition) -> None:
    definition = etree.SubElement(parent, _bpmn("timerEventDefinition"))
    _formal_expression(definition, _TIMER_ELEMENTS[timer.kind], timer.text)


def _implementation(element: Element, node: Implemented) -> None:
    """A service task's implementation, on a service or send task or a messageEventDefinition."""
    if node.handler is not None and _is_identifier(node.handler):
        element.set(_camunda("delegateExpression"), f"${{{node.handler}}}")
    elif node.handler is not None:
        element.set(_camunda("class"), node.handler)
    if node.topic is not None:
        element.set(_camunda("type"), "external")
        element.set(_camunda("topic"), node.topic)
    _set(element, _camunda("resultVariable"), node.result_variable)
    if node.task_priority:
        element.set(_camunda("taskPriority"), str(node.task_priority))


def _event_definitions(element: Element, node: Node, refs: _Refs) -> None:
    if isinstance(node, EndEvent) and node.terminate:
        etree.SubElement(element, _bpmn("terminateEventDefinition"))
    if (isinstance(node, EndEvent) and node.cancel) or (
        isinstance(node, BoundaryEvent) and node.is_cancel
    ):
        etree.SubElement(element, _bpmn("cancelEventDefinition"))
    if isinstance(node, ReceiveTask):
        return  # its messageRef is an attribute
    message = getattr(node, "message_name", None)
    if isinstance(node, MessageThrow) and node.is_message:
        definition = etree.SubElement(element, _bpmn("messageEventDefinition"))
        if message is not None:
            definition.set("messageRef", refs.messages[message])
        _implementation(definition, node)
    elif message is not None:
        definition = etree.SubElement(element, _bpmn("messageEventDefinition"))
        definition.set("messageRef", refs.messages[message])
    signal = getattr(node, "signal_name", None)
    if signal is not None:
        definition = etree.SubElement(element, _bpmn("signalEventDefinition"))
        definition.set("signalRef", refs.signals[signal])
        inputs = getattr(node, "signal_inputs", ())
        if inputs:
            _mappings(definition, ("in", inputs))
    if getattr(node, "is_error", False):
        definition = etree.SubElement(element, _bpmn("errorEventDefinition"))
        code = getattr(node, "error_code", None)
        if code is not None:
            definition.set("errorRef", refs.errors[code])
        _set(definition, _camunda("errorCodeVariable"), getattr(node, "error_code_variable", None))
        message_variable = getattr(node, "error_message_variable", None)
        _set(definition, _camunda("errorMessageVariable"), message_variable)
    if getattr(node, "is_escalation", False):
        definition = etree.SubElement(element, _bpmn("escalationEventDefinition"))
        code = getattr(node, "escalation_code", None)
        if code is not None:
            definition.set("escalationRef", refs.escalations[code])
        variable = getattr(node, "escalation_code_variable", None)
        _set(definition, _camunda("escalationCodeVariable"), variable)
    link = getattr(node, "link_name", None)
    if link is not None:
        etree.SubElement(element, _bpmn("linkEventDefinition")).set("name", link)
    timer = getattr(node, "timer", None)
    if isinstance(timer, TimerDefinition):
        _timer(element, timer)
    _compensate_definition(element, node)
    conditional = getattr(node, "conditional", None)
    if isinstance(conditional, ConditionalTrigger):
        _conditional(element, conditional)


def _conditional(parent: Element, trigger: ConditionalTrigger) -> None:
    definition = etree.SubElement(parent, _bpmn("conditionalEventDefinition"))
    _set(definition, _camunda("variableName"), trigger.variable_name)
    if trigger.variable_events:
        definition.set(_camunda("variableEvents"), ", ".join(trigger.variable_events))
    _formal_expression(definition, "condition", trigger.condition.source)


def _compensate_definition(element: Element, node: Node) -> None:
    """A compensation event's compensateEventDefinition (a throw's with its activityRef and,
    when false, its waitForCompletion)."""
    throw = node.compensation if isinstance(node, IntermediateThrowEvent | EndEvent) else None
    catching = isinstance(node, StartEvent | BoundaryEvent) and node.is_compensation
    if throw is None and not catching:
        return
    definition = etree.SubElement(element, _bpmn("compensateEventDefinition"))
    if throw is not None:
        _set(definition, "activityRef", throw.activity_ref)
        if not throw.wait_for_completion:
            definition.set("waitForCompletion", "false")


def _association(parent: Element, node: Node) -> None:
    """The association that leads a compensation boundary event to its handler."""
    if isinstance(node, BoundaryEvent) and node.compensate_handler is not None:
        association = etree.SubElement(parent, _bpmn("association"))
        association.set("id", f"Association_{node.id}")
        association.set("associationDirection", "One")
        association.set("sourceRef", node.id)
        association.set("targetRef", node.compensate_handler)


# A model's flows by the scope they are written in: where their source is (a flow whose source
# does not exist, at the process level). Grouped once per model, not once per subprocess.
_FlowsByScope = dict[str | None, list[SequenceFlow]]


def _flows_by_scope(model: ProcessModel) -> _FlowsByScope:
    grouped: _FlowsByScope = {}
    for flow in model.flows:
        scope = model.node(flow.source).parent if model.has_node(flow.source) else None
        grouped.setdefault(scope, []).append(flow)
    return grouped


def _node(
    parent: Element, model: ProcessModel, node: Node, refs: _Refs, flows: _FlowsByScope
) -> None:
    element = etree.SubElement(parent, _bpmn(node.kind.value))
    element.set("id", node.id)
    _set(element, "name", node.name)
    if isinstance(node, BoundaryEvent):
        element.set("attachedToRef", node.attached_to)
        if not node.cancel_activity:
            element.set("cancelActivity", "false")
    if isinstance(node, StartEvent) and not node.interrupting:
        element.set("isInterrupting", "false")
    if isinstance(node, StartEvent):
        _set(element, _camunda("formKey"), node.form_key)
        _set(element, _camunda("initiator"), node.initiator)
    if isinstance(node, SubProcess) and node.triggered_by_event:
        element.set("triggeredByEvent", "true")
    if node.is_for_compensation:
        element.set("isForCompensation", "true")
    if isinstance(node, ReceiveTask) and node.message_name is not None:
        element.set("messageRef", refs.messages[node.message_name])
    if node.async_before:
        element.set(_camunda("asyncBefore"), "true")
    if node.async_after:
        element.set(_camunda("asyncAfter"), "true")
    if node.job_priority is not None:
        element.set(_camunda("jobPriority"), str(node.job_priority))
    if isinstance(node, ServiceTask):
        _implementation(element, node)
        if node.expression is not None:
            element.set(_camunda("expression"), node.expression.source)
    elif isinstance(node, UserTask):
        for field_name, attribute in _USER_TASK_ATTRIBUTES:
            _set(element, _camunda(attribute), getattr(node, field_name))
    elif isinstance(node, ExclusiveGateway | InclusiveGateway):
        _set(element, "default", node.default_flow)
    elif isinstance(node, ScriptTask):
        element.set("scriptFormat", _SCRIPT_FORMATS[node.script.format])
        _set(element, _camunda("resultVariable"), node.result_variable)
    elif isinstance(node, BusinessRuleTask):
        element.set(_camunda("decisionRef"), node.decision_ref)
        if node.binding != "latest":
            element.set(_camunda("decisionRefBinding"), node.binding)
        _set(element, _camunda("decisionRefVersion"), node.version)
        _set(element, _camunda("decisionRefVersionTag"), node.version_tag)
        _set(element, _camunda("resultVariable"), node.result_variable)
        if node.map_decision_result != "resultList":
            element.set(_camunda("mapDecisionResult"), node.map_decision_result)
    task_listeners = node.task_listeners if isinstance(node, UserTask) else ()
    described = (node.documentation, node.properties, node.retry_cycle)
    form_fields = node.form_fields if isinstance(node, StartEvent | UserTask) else ()
    _described(element, *described, node.listeners, task_listeners, form_fields, node.io)
    if isinstance(node, CallActivity):
        _call(element, node)
    for flow_id in node.incoming:
        etree.SubElement(element, _bpmn("incoming")).text = flow_id
    for flow_id in node.outgoing:
        etree.SubElement(element, _bpmn("outgoing")).text = flow_id
    if isinstance(node, ScriptTask):
        etree.SubElement(element, _bpmn("script")).text = node.script.source
    _event_definitions(element, node, refs)
    if node.loop is not None:
        _loop(element, node.loop)
    if isinstance(node, SubProcess):
        _scope(element, model, node.id, refs, flows)
    _association(parent, node)


def _call(element: Element, node: CallActivity) -> None:
    element.set("calledElement", node.called_element)
    if node.binding != "latest":
        element.set(_camunda("calledElementBinding"), node.binding)
    _set(element, _camunda("calledElementVersion"), node.version)
    _set(element, _camunda("calledElementVersionTag"), node.version_tag)
    _set(element, _camunda("calledElementTenantId"), node.tenant_id)
    if not node.inputs and not node.outputs:
        return
    _mappings(element, ("in", node.inputs), ("out", node.outputs))


def _mappings(element: Element, *groups: tuple[str, Sequence[CallMapping]]) -> None:
    """camunda:in / camunda:out mappings (of a call activity, a signal throw's definition), in
    the element's extensionElements."""
    extensions = element.find(_bpmn("extensionElements"))
    if extensions is None:
        extensions = etree.SubElement(element, _bpmn("extensionElements"))
    for local, mappings in groups:
        for mapping in mappings:
            written = etree.SubElement(extensions, _camunda(local))
            expression = mapping.source_expression
            if mapping.business_key:
                written.set("businessKey", expression.source if expression else mapping.source)
            elif mapping.all:
                written.set("variables", "all")
            elif expression is not None:
                written.set("sourceExpression", expression.source)
            else:
                _set(written, "source", mapping.source)
            _set(written, "target", mapping.target)
            if mapping.local:
                written.set("local", "true")


def _loop(parent: Element, loop: MultiInstance | StandardLoop) -> None:
    if isinstance(loop, StandardLoop):
        element = etree.SubElement(parent, _bpmn("standardLoopCharacteristics"))
        if loop.test_before:
            element.set("testBefore", "true")
        if loop.maximum is not None:
            element.set("loopMaximum", str(loop.maximum))
        if loop.condition is not None:
            _formal_expression(element, "loopCondition", loop.condition.source)
        return
    element = etree.SubElement(parent, _bpmn("multiInstanceLoopCharacteristics"))
    if loop.sequential:
        element.set("isSequential", "true")
    _set(element, _camunda("collection"), loop.collection)
    _set(element, _camunda("elementVariable"), loop.element_variable)
    if loop.async_before:
        element.set(_camunda("asyncBefore"), "true")
    if loop.cardinality is not None:
        _formal_expression(element, "loopCardinality", loop.cardinality)
    if loop.completion_condition is not None:
        _formal_expression(element, "completionCondition", loop.completion_condition.source)


def _scope(
    parent: Element,
    model: ProcessModel,
    scope_id: str | None,
    refs: _Refs,
    flows: _FlowsByScope,
) -> None:
    """The nodes directly inside `scope_id` (None: the process), then the flows among them. A flow
    goes where its source is (a flow whose source does not exist, to the process level)."""
    nodes = _node_order(model, list(model.children(scope_id)))
    for node in nodes:
        _node(parent, model, node, refs, flows)
    for flow in _flow_order(flows.get(scope_id, []), nodes):
        _flow(parent, flow)


def _flow(process: Element, flow: SequenceFlow) -> None:
    element = etree.SubElement(process, _bpmn("sequenceFlow"))
    element.set("id", flow.id)
    _set(element, "name", flow.name)
    element.set("sourceRef", flow.source)
    element.set("targetRef", flow.target)
    _described(element, flow.documentation, flow.properties, listeners=flow.listeners)
    if isinstance(flow.condition, ScriptCondition):
        _formal_expression(element, "conditionExpression", flow.condition.source)
        element[-1].set("language", flow.condition.language)
    elif flow.condition is not None:
        _formal_expression(element, "conditionExpression", flow.condition.source)


def _refs(models: Sequence[ProcessModel]) -> _Refs:
    """Ids for the messages, signals and errors the models use (`Message_1`, `Signal_1`,
    `Error_1`, ...), skipping ids an element already has."""
    taken = {model.key for model in models}
    for model in models:
        taken |= {node.id for node in model.nodes} | {flow.id for flow in model.flows}

    def assign(table: dict[str, str], prefix: str, name: str | None) -> None:
        if name is None or name in table:
            return
        number = len(table) + 1
        while f"{prefix}_{number}" in taken:
            number += 1
        table[name] = f"{prefix}_{number}"
        taken.add(table[name])

    refs = _Refs(messages={}, signals={}, errors={}, escalations={})
    for model in models:
        for node in model.nodes:
            assign(refs.messages, "Message", getattr(node, "message_name", None))
            assign(refs.signals, "Signal", getattr(node, "signal_name", None))
            if getattr(node, "is_error", False):
                assign(refs.errors, "Error", getattr(node, "error_code", None))
            if getattr(node, "is_escalation", False):
                assign(refs.escalations, "Escalation", getattr(node, "escalation_code", None))
    return refs


def write_bpmn(models: Sequence[ProcessModel]) -> str:
    """Serialize models as one `bpmn:definitions` document with a process per model."""
    root = etree.Element(_bpmn("definitions"), nsmap=_NSMAP)
    root.set("id", "Definitions_1")
    root.set("targetNamespace", "http://bpmn.io/schema/bpmn")
    root.set("exporter", "Interlock")
    refs = _refs(models)
    try:
        for model in models:
            process = etree.SubElement(root, _bpmn("process"))
            process.set("id", model.key)
            _set(process, "name", model.name)
            process.set("isExecutable", "true")
            _set(process, _camunda("versionTag"), model.version_tag)
            if model.history_ttl_days is not None:
                process.set(_camunda("historyTimeToLive"), str(model.history_ttl_days))
            if model.job_priority is not None:
                process.set(_camunda("jobPriority"), str(model.job_priority))
            _described(process, model.documentation, model.properties, listeners=model.listeners)
            _scope(process, model, None, refs, _flows_by_scope(model))
        # The definitions-level elements, by name or code: a code is also the element's name.
        for tag, by_name, code_attribute in (
            ("message", refs.messages, None),
            ("signal", refs.signals, None),
            ("error", refs.errors, "errorCode"),
            ("escalation", refs.escalations, "escalationCode"),
        ):
            for name, element_id in by_name.items():
                element = etree.SubElement(root, _bpmn(tag))
                element.set("id", element_id)
                element.set("name", name)
                if code_attribute is not None:
                    element.set(code_attribute, name)
    except ValueError as error:
        # lxml refuses text that XML cannot carry, such as control characters.
        raise ModelError(f"cannot write BPMN: {error}") from None
    body: str = etree.tostring(root, encoding="unicode", pretty_print=True)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body
