"""The structural rules every executable process model obeys, checked once when the BPMN parser or
the Python builder has made one: ids, wiring, scopes, events, loops, escalations, links and
compensation. A broken rule raises a ModelError naming the file, line and element.

The compensation rules: a compensation boundary event leads (by its association) to one
isForCompensation activity of its own scope; a compensation handler has no sequence flows; a
compensation event subprocess lives in an embedded subprocess (one per subprocess, and not beside a
compensation boundary event on that subprocess); a throw event's activityRef names an activity of
the scope it compensates.

The transaction rules (as Camunda 7 deploys them): a cancel end event is directly inside a
transaction subprocess; a cancel boundary event is attached to a transaction subprocess, always
interrupts, and a transaction has at most one; a transaction with a cancel end event has a cancel
boundary event to leave by; a transaction is not an event subprocess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from engine.errors import ModelError
from engine.model import (
    ACTIVITY_TYPES,
    IO_EVENT_TYPES,
    BoundaryEvent,
    CallActivity,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    MessageThrow,
    MultiInstance,
    Node,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    SendTask,
    ServiceTask,
    StandardLoop,
    StartEvent,
    SubProcess,
    Transaction,
    UserTask,
    triggers,
)
from engine.model.compensation import (
    compensated_scope,
    compensation_boundary,
    compensation_start,
)


class _Located(Protocol):
    """What a refusal names: an element's id and line."""

    @property
    def id(self) -> str: ...
    @property
    def line(self) -> int | None: ...


class _At(NamedTuple):
    """An id and a line that are not one element's own (the process's key, a parameter's line)."""

    id: str
    line: int | None


def validate(model: ProcessModel, file: str | None = None) -> ProcessModel:
    """Check the structural rules every executable model obeys; raise ModelError naming the
    element."""

    def fail(message: str, at: _Located) -> ModelError:
        return ModelError(message, file=file, line=at.line, element_id=at.id)

    if not model.nodes:
        raise fail("process has no flow nodes", _At(model.key, model.line))
    seen: set[str] = set()
    for node in model.nodes:
        if node.id in seen:
            raise fail("duplicate element id", node)
        seen.add(node.id)
    _validate_scopes(model, fail)
    for flow in model.flows:
        if flow.id in seen:
            raise fail("duplicate element id", flow)
        seen.add(flow.id)
        for end, ref in (("sourceRef", flow.source), ("targetRef", flow.target)):
            if not model.has_node(ref):
                raise fail(f"{end} '{ref}' names no flow node of this process", flow)
        source, target = model.node(flow.source), model.node(flow.target)
        if source.parent != target.parent:
            raise fail(
                f"a sequence flow cannot cross a subprocess boundary ('{flow.source}' is in "
                f"{_scope_name(source.parent)}, '{flow.target}' in {_scope_name(target.parent)})",
                flow,
            )
    # Each node's flows, gathered in one pass over the flows (not one pass per node).
    expected_in: dict[str, set[str]] = {}
    expected_out: dict[str, set[str]] = {}
    for flow in model.flows:
        expected_in.setdefault(flow.target, set()).add(flow.id)
        expected_out.setdefault(flow.source, set()).add(flow.id)
    for node in model.nodes:
        _validate_io(node, fail)
        wired_in, wired_out = expected_in.get(node.id, set()), expected_out.get(node.id, set())
        if set(node.incoming) != wired_in or set(node.outgoing) != wired_out:
            raise fail("incoming/outgoing flows disagree with the sequence flows", node)
        if isinstance(node, StartEvent) and node.incoming:
            raise fail("a start event cannot have incoming flows", node)
        if isinstance(node, EndEvent) and node.outgoing:
            raise fail("an end event cannot have outgoing flows", node)
        if isinstance(node, ServiceTask) and _implementations(node) != 1:
            what = "a send task" if isinstance(node, SendTask) else "a service task"
            raise fail(
                f"{what} needs exactly one implementation: camunda:delegateExpression, "
                'camunda:expression, camunda:class, or camunda:type="external" with camunda:topic',
                node,
            )
        if isinstance(node, MessageThrow) and (node.handler and node.topic):
            raise fail("a message throw event has one implementation, not two", node)
        if isinstance(node, MessageThrow) and node.is_implemented and not node.is_message:
            message = "only a message throw event has an implementation"
            raise fail(message, node)
        if isinstance(node, ExclusiveGateway | InclusiveGateway) and node.default_flow is not None:
            if node.default_flow not in node.outgoing:
                raise fail(f"default flow '{node.default_flow}' is not an outgoing flow", node)
            if model.flow(node.default_flow).condition is not None:
                raise fail("the default flow cannot have a condition", node)
        if isinstance(node, ParallelGateway):
            for flow_id in node.outgoing:
                if model.flow(flow_id).condition is not None:
                    raise fail(
                        "a parallel gateway's outgoing flows cannot have conditions",
                        _At(flow_id, None),
                    )
        if isinstance(node, EventBasedGateway):
            _validate_event_gateway(model, node, fail)
        _validate_events(model, node, fail)
        if node.loop is not None:
            _validate_loop(node, fail)
    _validate_starts(model, fail)
    _validate_link_scopes(model, fail)
    _validate_escalation_scopes(model, fail)
    _validate_compensation(model, fail)
    _validate_transactions(model, fail)
    return model


_Fail = Callable[[str, "_Located"], ModelError]


def _implementations(task: ServiceTask) -> int:
    return sum(given is not None for given in (task.handler, task.topic, task.expression))


def _scope_name(scope_id: str | None) -> str:
    return "the process" if scope_id is None else f"subprocess '{scope_id}'"


def _validate_scopes(model: ProcessModel, fail: _Fail) -> None:
    """Every `parent` names a subprocess of the model, and no subprocess contains itself."""
    for node in model.nodes:
        if node.parent is None:
            continue
        if not isinstance(model._nodes_by_id.get(node.parent), SubProcess):
            message = f"parent '{node.parent}' names no subprocess of this process"
            raise fail(message, node)
    # Each node's chain of parents is followed only until it meets one already known to lead
    # to the process level, so deep nesting costs a pass over the nodes, not one per level.
    rooted: set[str] = set()
    for node in model.nodes:
        chain = {node.id}
        scope = node.parent
        while scope is not None and scope not in rooted:
            if scope in chain:
                raise fail("subprocesses cannot contain each other", node)
            chain.add(scope)
            scope = model.node(scope).parent
        rooted.update(chain)


def _validate_events(model: ProcessModel, node: Node, fail: _Fail) -> None:
    found = triggers(node)
    if (
        isinstance(node, StartEvent | EndEvent | BoundaryEvent)
        and node.error_code is not None
        and not node.is_error
    ):
        raise fail("an error code needs an error event", node)
    if (
        isinstance(node, StartEvent | BoundaryEvent)
        and (node.error_code_variable or node.error_message_variable)
        and not node.is_error
    ):
        raise fail("an error code or message variable needs an error event", node)
    if isinstance(node, StartEvent) and len(found) > 1:
        raise fail(f"a start event has at most one trigger, not {found}", node)
    if isinstance(node, EndEvent) and node.terminate and node.is_error:
        raise fail("an end event cannot both terminate and throw an error", node)
    if isinstance(node, IntermediateCatchEvent) and len(found) != 1:
        raise fail(
            "an intermediate catch event needs exactly one trigger: a timer, a message or a signal"
            " (or a link)",
            node,
        )
    _validate_escalation_and_link(model, node, fail)
    if isinstance(node, ReceiveTask) and node.message_name == "":
        raise fail("a receive task's message has no name", node)
    if (
        isinstance(node, SubProcess)
        and node.triggered_by_event
        and (node.incoming or node.outgoing)
    ):
        raise fail("an event subprocess cannot have incoming or outgoing sequence flows", node)
    if isinstance(node, BoundaryEvent):
        activity = model._nodes_by_id.get(node.attached_to)
        if not isinstance(activity, ACTIVITY_TYPES) or (
            isinstance(activity, SubProcess) and activity.triggered_by_event
        ):
            message = f"attachedToRef '{node.attached_to}' names no task or subprocess"
            raise fail(message, node)
        if activity.parent != node.parent:
            raise fail(
                f"a boundary event must be in the same scope as its activity "
                f"({_scope_name(activity.parent)})",
                node,
            )
        if node.incoming:
            raise fail("a boundary event cannot have incoming flows", node)
        if not node.outgoing and not node.is_compensation:
            raise fail("a boundary event needs an outgoing flow", node)
        if len(found) != 1:
            raise fail(
                "a boundary event needs exactly one trigger: a timer, a message, a signal or an "
                "error (or an escalation)",
                node,
            )
        _error_interrupts(node, fail)


def _error_interrupts(event: BoundaryEvent | StartEvent, fail: _Fail) -> None:
    """An event that catches an error always interrupts: a boundary event cancels its activity,
    an event subprocess's start event its scope."""
    if isinstance(event, BoundaryEvent):
        interrupting, what = event.cancel_activity, "boundary"
    else:
        interrupting, what = event.interrupting, "start"
    if event.is_error and not interrupting:
        raise fail(f"an error {what} event is always interrupting", event)


def _validate_event_gateway(model: ProcessModel, gateway: EventBasedGateway, fail: _Fail) -> None:
    """As Camunda 7 requires: no asynchronous continuation after it; entered by a flow (never a
    process start); outgoing flows without conditions (a condition would never be evaluated),
    each to an intermediate catch event of a message, a timer or a signal that no other flow
    enters. (Camunda 7 accepts a single outgoing flow, which BPMN does not; so do we.)"""
    if gateway.async_after:
        message = "camunda:asyncAfter is not supported on an event-based gateway"
        raise fail(message, gateway)
    if not gateway.incoming:
        raise fail(
            "an event-based gateway needs an incoming flow (instantiating gateways are not "
            "supported)",
            gateway,
        )
    if not gateway.outgoing:
        message = "an event-based gateway needs an outgoing flow to a catch event"
        raise fail(message, gateway)
    for flow_id in gateway.outgoing:
        flow = model.flow(flow_id)
        if flow.condition is not None:
            raise fail("an event-based gateway's outgoing flows cannot have conditions", flow)
        target = model.node(flow.target)
        if not isinstance(target, IntermediateCatchEvent):
            raise fail(
                f"an event-based gateway can only lead to intermediate catch events of a "
                f"message, a timer or a signal, not to {target.kind.value} '{target.id}'",
                gateway,
            )
        if len(target.incoming) != 1:
            raise fail(
                f"an intermediate catch event after event-based gateway '{gateway.id}' cannot "
                "have other incoming flows",
                target,
            )


def _validate_io(node: Node, fail: _Fail) -> None:
    """Where Camunda 7 allows input/output parameters: on tasks, embedded subprocesses and
    intermediate and end events; never on start or boundary events, gateways or event
    subprocesses; and no output parameters on an end event (nothing follows it to read them)."""
    if node.io is None:
        return
    refused = isinstance(node, StartEvent | BoundaryEvent) or (
        isinstance(node, SubProcess) and node.triggered_by_event
    )
    if refused or not isinstance(node, ACTIVITY_TYPES + IO_EVENT_TYPES):
        what = "an event subprocess" if isinstance(node, SubProcess) else f"a {node.kind.value}"
        raise fail(f"camunda:inputOutput is not allowed on {what}", node)
    if isinstance(node, EndEvent) and node.io.outputs:
        message = "camunda:outputParameter is not allowed on an end event"
        raise fail(message, node)
    for parameters in (node.io.inputs, node.io.outputs):
        for parameter in parameters:
            if not parameter.name:
                raise fail("an input/output parameter needs a name", _At(node.id, parameter.line))


def _validate_loop(node: Node, fail: _Fail) -> None:
    loop = node.loop
    if not isinstance(node, ACTIVITY_TYPES) or (
        isinstance(node, SubProcess) and node.triggered_by_event
    ):
        raise fail("only a task or an embedded subprocess can loop", node)
    if isinstance(loop, MultiInstance):
        if loop.cardinality is None and loop.collection is None:
            message = "a multi-instance activity needs a loopCardinality or a collection"
            raise fail(message, node)
        if loop.element_variable is not None and loop.collection is None:
            raise fail("camunda:elementVariable needs camunda:collection", node)
    elif isinstance(loop, StandardLoop) and loop.maximum is not None and loop.maximum < 0:
        raise fail("loopMaximum cannot be negative", node)


def _validate_starts(model: ProcessModel, fail: _Fail) -> None:
    """Per scope: the process has start events and at most one none start; a subprocess has
    exactly one none start and nothing else; an event subprocess exactly one triggered start."""
    starts: dict[str | None, list[StartEvent]] = {None: []}
    for node in model.nodes:
        if isinstance(node, SubProcess):
            starts[node.id] = []
    for node in model.nodes:
        if isinstance(node, StartEvent):
            starts[node.parent].append(node)
    for scope_id, scope_starts in starts.items():
        scope = None if scope_id is None else model.node(scope_id)
        event_scope = isinstance(scope, SubProcess) and scope.triggered_by_event
        none_starts = [start for start in scope_starts if start.is_none_start]
        for start in scope_starts:
            if not start.interrupting and not event_scope:
                message = "only the start event of an event subprocess can be non-interrupting"
                raise fail(message, start)
            if start.is_error and not event_scope:
                message = "an error start event belongs in an event subprocess"
                raise fail(message, start)
        if scope is None:
            if len(none_starts) > 1:
                raise fail("a process can have at most one none start event", none_starts[1])
            if not scope_starts:
                raise fail("process has no start event", _At(model.key, model.line))
        elif event_scope:
            if len(scope_starts) != 1:
                element = scope_starts[1] if scope_starts else scope
                raise fail("an event subprocess needs exactly one start event", element)
            start = scope_starts[0]
            if start.is_none_start:
                raise fail(
                    "the start event of an event subprocess needs a trigger: an error, a "
                    "message, a timer or a signal",
                    start,
                )
            _error_interrupts(start, fail)
        else:
            for start in scope_starts:
                if not start.is_none_start:
                    raise fail("a subprocess can only start with a none start event", start)
            if len(scope_starts) != 1:
                element = scope_starts[1] if scope_starts else scope
                raise fail("a subprocess needs exactly one none start event", element)


# What an escalation boundary event may be attached to, as in Camunda 7: the activities that
# hold other activities an escalation can be thrown from, and a user task (Camunda's
# handleEscalation throws one from it).
ESCALATION_HOSTS: tuple[type[Node], ...] = (SubProcess, CallActivity, UserTask)


def _validate_escalation_and_link(model: ProcessModel, node: Node, fail: _Fail) -> None:
    """Escalation events (throwing ones with a code, catching ones where Camunda 7 allows them)
    and link events (a throw event with no outgoing flows, a catch event with no incoming ones)."""
    if (
        isinstance(node, StartEvent | EndEvent | BoundaryEvent | IntermediateThrowEvent)
        and node.escalation_code is not None
        and not node.is_escalation
    ):
        raise fail("an escalation code needs an escalation event", node)
    if (
        isinstance(node, StartEvent | BoundaryEvent)
        and node.escalation_code_variable
        and not node.is_escalation
    ):
        message = "camunda:escalationCodeVariable needs an escalation event"
        raise fail(message, node)
    if isinstance(node, EndEvent | IntermediateThrowEvent):
        what = "an end event" if isinstance(node, EndEvent) else "a throw event"
        if len(node.throws) > 1:
            raise fail(f"{what} throws at most one thing, not {node.throws}", node)
        if node.signal_inputs and node.signal_name is None:
            message = "camunda:in belongs on a signal throw event (or a call activity)"
            raise fail(message, node)
        if node.is_escalation and not node.escalation_code:
            message = (
                "a throwing escalation event needs an escalation code (an escalationRef naming "
                "a bpmn:escalation with an escalationCode)"
            )
            raise fail(message, node)
    if isinstance(node, StartEvent) and node.is_escalation:
        scope = model._nodes_by_id.get(node.parent) if node.parent is not None else None
        if not (isinstance(scope, SubProcess) and scope.triggered_by_event):
            message = "an escalation start event belongs in an event subprocess"
            raise fail(message, node)
    host = model._nodes_by_id.get(node.attached_to) if isinstance(node, BoundaryEvent) else None
    if (
        isinstance(node, BoundaryEvent)
        and node.is_escalation
        and not isinstance(host, ESCALATION_HOSTS)
    ):
        message = (
            "an escalation boundary event can only be attached to a subprocess, a call activity "
            "or a user task"
        )
        raise fail(message, node)
    if isinstance(node, IntermediateThrowEvent | IntermediateCatchEvent):
        _validate_link(node, fail)


def _validate_link(node: IntermediateThrowEvent | IntermediateCatchEvent, fail: _Fail) -> None:
    if node.link_name is None:
        return
    if not node.link_name.strip():
        raise fail("a link event needs a name", node)
    if isinstance(node, IntermediateThrowEvent):
        if node.outgoing:
            raise fail("a link throw event cannot have outgoing flows", node)
        if node.async_after:
            message = "camunda:asyncAfter is not supported on a link throw event"
            raise fail(message, node)
    elif node.incoming:
        raise fail("a link catch event cannot have incoming flows", node)


def _validate_link_scopes(model: ProcessModel, fail: _Fail) -> None:
    """In each scope, one link catch event per name, and one for every link throw event."""
    catches: dict[tuple[str | None, str], str] = {}
    for node in model.nodes:
        if isinstance(node, IntermediateCatchEvent) and node.link_name is not None:
            key = (node.parent, node.link_name)
            if key in catches:
                message = (
                    f"link catch events '{catches[key]}' and '{node.id}' in "
                    f"{_scope_name(node.parent)} have the same name '{node.link_name}'"
                )
                raise fail(message, node)
            catches[key] = node.id
    for node in model.nodes:
        if not isinstance(node, IntermediateThrowEvent) or node.link_name is None:
            continue
        if (node.parent, node.link_name) not in catches:
            message = (
                f"no link catch event named '{node.link_name}' in {_scope_name(node.parent)} "
                "for this link throw event"
            )
            raise fail(message, node)


def _validate_escalation_scopes(model: ProcessModel, fail: _Fail) -> None:
    """As Camunda 7 requires: among the escalation boundary events of one activity, and among
    the escalation start events of the event subprocesses of one scope, no two catch the same
    code, and one that catches every escalation is the only one."""
    groups: dict[tuple[str, str | None], list[StartEvent | BoundaryEvent]] = {}
    for node in model.nodes:
        if isinstance(node, BoundaryEvent) and node.is_escalation:
            groups.setdefault(("boundary", node.attached_to), []).append(node)
        elif isinstance(node, StartEvent) and node.is_escalation and node.parent is not None:
            scope = model.node(node.parent).parent
            groups.setdefault(("start", scope), []).append(node)
    for (kind, scope), catchers in groups.items():
        where = (
            f"activity '{scope}'"
            if kind == "boundary"
            else f"the event subprocesses of {_scope_name(scope)}"
        )
        seen: set[str | None] = set()
        for catcher in catchers:
            code = catcher.escalation_code
            if code in seen or (len(catchers) > 1 and code is None):
                caught = "every escalation" if code is None else f"escalation '{code}'"
                message = (
                    f"another escalation event of {where} also catches {caught}; one catch-all "
                    "or one per escalation code"
                )
                raise fail(message, catcher)
            seen.add(code)


def _validate_compensation(model: ProcessModel, fail: _Fail) -> None:
    for node in model.nodes:
        if node.is_for_compensation and not _is_compensation_event_subprocess(model, node):
            _validate_compensation_handler(node, fail)
        if isinstance(node, BoundaryEvent) and node.is_compensation:
            _validate_compensation_boundary(model, node, fail)
        if isinstance(node, StartEvent) and node.is_compensation:
            _validate_compensation_start(model, node, fail)
        if isinstance(node, IntermediateThrowEvent | EndEvent) and node.compensation is not None:
            _validate_compensation_throw(model, node, fail)


def _is_compensation_event_subprocess(model: ProcessModel, node: Node) -> bool:
    """Whether `node` is an event subprocess started by a compensation start event: Camunda
    Modeler may mark one isForCompensation, which changes nothing (as in Camunda 7)."""
    return (
        isinstance(node, SubProcess)
        and node.triggered_by_event
        and any(
            isinstance(start, StartEvent) and start.is_compensation
            for start in model.children(node.id)
        )
    )


def _validate_compensation_handler(node: Node, fail: _Fail) -> None:
    if not isinstance(node, ACTIVITY_TYPES) or (
        isinstance(node, SubProcess) and node.triggered_by_event
    ):
        message = "only a task or an embedded subprocess can be for compensation"
        raise fail(message, node)
    if node.incoming or node.outgoing:
        message = "a compensation handler (isForCompensation) cannot have sequence flows"
        raise fail(message, node)


def _validate_compensation_boundary(model: ProcessModel, node: BoundaryEvent, fail: _Fail) -> None:
    if node.outgoing:
        raise fail("a compensation boundary event cannot have outgoing flows", node)
    others = [b for b in model.boundary_events(node.attached_to) if b.is_compensation]
    if len(others) > 1:
        message = "an activity can have at most one compensation boundary event"
        raise fail(message, others[1])
    if node.compensate_handler is None:
        message = (
            "a compensation boundary event needs an association to its compensation handler "
            '(an activity with isForCompensation="true")'
        )
        raise fail(message, node)
    handler = model._nodes_by_id.get(node.compensate_handler)
    if handler is None or not handler.is_for_compensation:
        message = (
            f"the compensation handler '{node.compensate_handler}' must be an activity with "
            'isForCompensation="true"'
        )
        raise fail(message, node)
    if handler.parent != node.parent:
        message = "a compensation handler must be in the same scope as its boundary event"
        raise fail(message, node)


def _validate_compensation_start(model: ProcessModel, node: StartEvent, fail: _Fail) -> None:
    scope = model.node(node.parent) if node.parent is not None else None
    if not isinstance(scope, SubProcess) or not scope.triggered_by_event:
        message = "a compensation start event belongs in an event subprocess"
        raise fail(message, node)
    outer = model.node(scope.parent) if scope.parent is not None else None
    if not isinstance(outer, SubProcess) or outer.triggered_by_event:
        message = (
            "a compensation event subprocess belongs in an embedded subprocess, not at process "
            "level or in another event subprocess"
        )
        raise fail(message, scope)
    if compensation_start(model, outer) is not node:
        message = "a subprocess can have at most one compensation event subprocess"
        raise fail(message, scope)
    if compensation_boundary(model, outer.id) is not None:
        message = (
            f"subprocess '{outer.id}' cannot have both a compensation event subprocess and a "
            "compensation boundary event"
        )
        raise fail(message, scope)


def _validate_compensation_throw(
    model: ProcessModel, node: IntermediateThrowEvent | EndEvent, fail: _Fail
) -> None:
    assert node.compensation is not None
    ref = node.compensation.activity_ref
    if ref is None:
        return
    scope = compensated_scope(model, node)
    target = model._nodes_by_id.get(ref)
    if (
        target is None
        or target.parent != scope
        or not isinstance(target, ACTIVITY_TYPES)
        or target.is_for_compensation
    ):
        where = "the process" if scope is None else f"scope '{scope}'"
        message = f"activityRef '{ref}' names no activity in {where}"
        raise fail(message, node)


def _validate_transactions(model: ProcessModel, fail: _Fail) -> None:
    for node in model.nodes:
        if isinstance(node, Transaction) and node.triggered_by_event:
            raise fail("a transaction subprocess cannot be an event subprocess", node)
        if isinstance(node, EndEvent) and node.cancel:
            scope = model.node(node.parent) if node.parent is not None else None
            if not isinstance(scope, Transaction):
                message = (
                    "end event with cancelEventDefinition only supported inside transaction "
                    f"subprocess: cancel end event '{node.id}' is in {_scope_name(node.parent)}"
                )
                raise fail(message, node)
            if not any(b.is_cancel for b in model.boundary_events(scope.id)):
                message = (
                    f"transaction '{scope.id}' has the cancel end event '{node.id}' but no "
                    "cancel boundary event to leave by"
                )
                raise fail(message, node)
        if isinstance(node, BoundaryEvent) and node.is_cancel:
            activity = model._nodes_by_id.get(node.attached_to)
            if not isinstance(activity, Transaction):
                message = (
                    "boundary event with cancelEventDefinition only supported on transaction "
                    f"subprocesses: '{node.attached_to}' is not a transaction"
                )
                raise fail(message, node)
            if not node.cancel_activity:
                raise fail("a cancel boundary event always interrupts its transaction", node)
            cancels = [b for b in model.boundary_events(activity.id) if b.is_cancel]
            if len(cancels) > 1:
                message = (
                    "multiple boundary events with cancelEventDefinition not supported on same "
                    f"transaction subprocess '{activity.id}'"
                )
                raise fail(message, cancels[1])
