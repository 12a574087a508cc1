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

This module reads the document: its scopes, sequence flows and processes, the ids it generates,
the legacy namespace. Each flow node is read by the module of its family (`NODE_PARSERS`):
events.py, tasks.py, gateways.py, nodes.py (service and send tasks), rules.py, calls.py; all
of them read with the kernel in reading.py and none imports this module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from engine.bpmn.calls import call_activity
from engine.bpmn.compensation import link_handlers
from engine.bpmn.events import (
    boundary_event,
    end_event,
    intermediate_catch_event,
    intermediate_throw_event,
    start_event,
)
from engine.bpmn.events import timer_problem as timer_problem  # engine/builder.py reads it here
from engine.bpmn.gateways import (
    event_based_gateway,
    exclusive_gateway,
    inclusive_gateway,
    parallel_gateway,
)
from engine.bpmn.nodes import common_fields, priority_of, service_task
from engine.bpmn.reading import (
    ACTIVITI_NS,
    BPMN_NS,
    DECORATION,
    EXECUTION_LISTENER,
    FLOW_NODES,
    SAFE_PARSER,
    UTF8_PARSER,
    Context,
    Element,
    bpmn_tag,
    camunda_tag,
    check_children,
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
from engine.bpmn.tasks import receive_task, script_task, task, user_task
from engine.errors import ExpressionError, ModelError
from engine.language.expressions import compile_expression
from engine.language.history_ttl import parse_history_ttl
from engine.model import (
    DEFAULT_LIMITS,
    EXECUTION_EVENTS,
    TAKE_EVENT,
    ModelLimits,
    Node,
    ProcessModel,
    ScriptCondition,
    SequenceFlow,
    SubProcess,
    Transaction,
)
from engine.model.validation import validate

# The default size limit; a deployment's settings may raise it (see ModelLimits).
MAX_BPMN_BYTES = DEFAULT_LIMITS.max_bytes


def _sub_process(element: Element, ctx: Context) -> Node:
    """The subprocess node; its content is read by `_scope`."""
    common = common_fields(element, ctx)
    triggered = ctx.boolean(element, "triggeredByEvent")
    return SubProcess(**common, triggered_by_event=triggered)


def _transaction(element: Element, ctx: Context) -> Node:
    """A transaction subprocess; its content is read by `_scope`. Its `method` attribute
    (##Compensate, ##Store, ##Image) is ignored: Camunda runs every transaction alike."""
    common = common_fields(element, ctx)
    triggered = ctx.boolean(element, "triggeredByEvent")
    return Transaction(**common, triggered_by_event=triggered)


NODE_PARSERS: dict[str, Callable[[Element, Context], Node]] = {
    "startEvent": start_event,
    "endEvent": end_event,
    "intermediateThrowEvent": intermediate_throw_event,
    "serviceTask": service_task,
    "sendTask": service_task,
    "scriptTask": script_task,
    "businessRuleTask": business_rule_task,
    "userTask": user_task,
    "task": task,
    "manualTask": task,
    "exclusiveGateway": exclusive_gateway,
    "parallelGateway": parallel_gateway,
    "inclusiveGateway": inclusive_gateway,
    "eventBasedGateway": event_based_gateway,
    "intermediateCatchEvent": intermediate_catch_event,
    "boundaryEvent": boundary_event,
    "receiveTask": receive_task,
    "subProcess": _sub_process,
    "transaction": _transaction,
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
        job_priority=priority_of(element, ctx, "jobPriority"),
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
    scopes = (bpmn_tag("process"), bpmn_tag("subProcess"), bpmn_tag("transaction"))
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


@dataclass(frozen=True)
class ParsedBpmn:
    """A BPMN file's models, and the processes it holds that deploy no definition: (process id,
    why) for each, as Camunda skips them."""

    models: list[ProcessModel]
    skipped: tuple[tuple[str, str], ...] = ()


def parse_bpmn(
    data: bytes | str, file: str = "<string>", limits: ModelLimits | None = DEFAULT_LIMITS
) -> list[ProcessModel]:
    """One model per executable process (see `parse_bpmn_file`)."""
    return parse_bpmn_file(data, file, limits).models


NOT_EXECUTABLE = "isExecutable is false"
UNMARKED = "isExecutable is not set while another process of the file sets it true"
EMPTY = "the process has no flow nodes (a pool drawn without its process)"


def _drawn_only(process: Element) -> bool:
    """A process with nothing to run: none of its children is a flow node or a sequence flow,
    and none is outside the BPMN namespace (which the parser reports)."""
    for child in process.iterchildren(etree.Element):
        if not child.tag.startswith(f"{{{BPMN_NS}}}"):
            return False
        if local_name(child) in FLOW_NODES or local_name(child) == "sequenceFlow":
            return False
    return True


def parse_bpmn_file(
    data: bytes | str,
    file: str = "<string>",
    limits: ModelLimits | None = DEFAULT_LIMITS,
    *,
    deploying: bool = False,
) -> ParsedBpmn:
    """One model per executable process, as Camunda deploys them: a process marked
    `isExecutable="false"` is skipped; when some process is marked true, those without the
    attribute are skipped too (when none is, every unmarked process is read); a process with no
    flow nodes (a collaboration's pool without its process) is skipped. `skipped` says which,
    and why.

    `limits` bounds the input's size, each process's flow nodes and each node's flows in and
    out; None accepts any (for definitions that were deployed under their own limits).
    `deploying`: the file is being deployed, so what Camunda's schema check refuses at
    deployment is refused too (a missing targetNamespace); a file deployed before is read
    as it was accepted."""
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
    if deploying and not (root.get("targetNamespace") or "").strip():
        raise ModelError(
            "bpmn:definitions has no targetNamespace attribute: the BPMN 2.0 schema requires "
            'one (a URI, e.g. targetNamespace="http://bpmn.io/schema/bpmn")',
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
    marks = {id(p): (p.get("isExecutable") or "").strip().lower() for p in processes}
    any_marked = "true" in marks.values()
    skipped: list[tuple[str, str]] = []
    read: list[ProcessModel] = []
    for process in processes:
        mark = marks[id(process)]
        reason = (
            NOT_EXECUTABLE
            if mark == "false"
            else UNMARKED
            if any_marked and mark != "true"
            else EMPTY
            if _drawn_only(process)
            else None
        )
        if reason is None:
            read.append(_process(process, ctx))
        else:
            skipped.append((process.get("id") or "", reason))
    return ParsedBpmn(read, tuple(skipped))
