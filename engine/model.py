"""The immutable process model. The BPMN parser and the Python builder both produce it.

Nodes and flows are frozen dataclasses; a `ProcessModel` holds them sorted by id so that two models
built in different orders compare equal. Source line numbers are kept for error messages but take
no part in equality; nor do documentation and camunda:properties, kept as read-only data that
changes nothing the engine does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

from engine import scripting
from engine.errors import ModelError
from engine.expressions import Expression
from engine.forms import FormField
from engine.mappings import InputOutput
from engine.timers import DEFAULT_LIMITS as DEFAULT_TIMER_LIMITS
from engine.timers import TimerKind as TimerKind  # declared there
from engine.timers import TimerLimits


class NodeKind(StrEnum):
    START_EVENT = "startEvent"
    END_EVENT = "endEvent"
    SERVICE_TASK = "serviceTask"
    USER_TASK = "userTask"
    TASK = "task"
    MANUAL_TASK = "manualTask"
    INTERMEDIATE_THROW_EVENT = "intermediateThrowEvent"
    EXCLUSIVE_GATEWAY = "exclusiveGateway"
    PARALLEL_GATEWAY = "parallelGateway"
    INCLUSIVE_GATEWAY = "inclusiveGateway"
    EVENT_BASED_GATEWAY = "eventBasedGateway"
    INTERMEDIATE_CATCH_EVENT = "intermediateCatchEvent"
    RECEIVE_TASK = "receiveTask"
    BOUNDARY_EVENT = "boundaryEvent"
    SUB_PROCESS = "subProcess"
    SEND_TASK = "sendTask"
    SCRIPT_TASK = "scriptTask"
    CALL_ACTIVITY = "callActivity"
    BUSINESS_RULE_TASK = "businessRuleTask"


# camunda:properties: (name, value) pairs in document order, repeated names included.
Properties = tuple[tuple[str, str], ...]

# The largest BPMN input a deployment accepts unless its settings say otherwise.
MAX_BPMN_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ModelLimits:
    """How large a model a deployment accepts: bytes of BPMN or DMN input, flow nodes in one
    process, flows into or out of one node (the branches of a split, the arrivals of a join),
    rules in one decision table, and decisions in one DMN file (each decision's definition row
    holds its whole file). The parsers refuse a model beyond them before any work that grows
    faster than its size, with a ModelError naming the element that went over. `EngineSettings`
    carries a deployment's limits (`max_bpmn_bytes`, `max_process_nodes`, `max_fan_out`,
    `max_decision_rules`, `max_dmn_decisions`); these are their defaults."""

    max_bytes: int = MAX_BPMN_BYTES
    max_nodes: int = 10_000
    max_fan_out: int = 1_000
    max_rules: int = 10_000
    max_decisions: int = 100
    # The shortest cycle and longest duration a timer may be deployed with.
    timers: TimerLimits = DEFAULT_TIMER_LIMITS


DEFAULT_LIMITS = ModelLimits()


@dataclass(frozen=True, kw_only=True)
class TimerDefinition:
    """An ISO 8601 date, duration or cycle, or a `${...}` expression that yields one."""

    kind: TimerKind
    text: str


# The kinds of variable change a conditional event may be narrowed to (camunda:variableEvents).
VARIABLE_EVENTS = ("create", "update", "delete")


@dataclass(frozen=True, kw_only=True)
class ConditionalTrigger:
    """A conditionalEventDefinition: `condition` over the variables the event sees. A change of
    a variable evaluates it only if it is of `variable_name` (camunda:variableName; None: any)
    and of one of `variable_events` (camunda:variableEvents; empty: any)."""

    condition: Expression
    variable_name: str | None = None
    variable_events: tuple[str, ...] = ()

    def listens_to(self, name: str, change: str) -> bool:
        """Whether a `change` ("create", "update", "delete") of `name` evaluates the condition."""
        if self.variable_name is not None and name != self.variable_name:
            return False
        return not self.variable_events or change in self.variable_events


ScriptFormat = Literal["javascript", "expression"]


@dataclass(frozen=True, kw_only=True)
class Script:
    """A script as the model holds it: JavaScript (run in the isolate of engine/scripting.py) or
    a `${}` expression (`juel`/`expression` formats). A `camunda:resource` is read into `source`
    when the deployment is made; `resource` keeps the name it was read from."""

    format: ScriptFormat
    source: str
    resource: str | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class ScriptCondition:
    """A sequence flow's condition written in JavaScript (`language="javascript"`): its value over
    the visible variables must be a boolean."""

    source: str
    language: str = "javascript"

    def evaluate(self, values: Mapping[str, Any]) -> bool:
        """The condition's value over `values`, with the default limits (a running instance
        evaluates it in its command's isolate instead; see engine/semantics/listeners.py)."""
        value = scripting.evaluate(self.source, values, where="condition")
        if not isinstance(value, bool):
            message = f"condition: the script's value is {value!r}, not a boolean"
            raise scripting.ScriptError(message)
        return value


# Execution listener events (`take` only on sequence flows) and task listener events.
EXECUTION_EVENTS = ("start", "end")
TAKE_EVENT = "take"
TASK_EVENTS = ("create", "assignment", "complete", "delete")


@dataclass(frozen=True, kw_only=True)
class Listener:
    """An execution or task listener: either a Python handler registered under `handler`
    (camunda:class, or camunda:expression / camunda:delegateExpression naming one), or a
    `script`."""

    event: str
    handler: str | None = None
    script: Script | None = None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class MultiInstance:
    """multiInstanceLoopCharacteristics: the activity runs once per iteration, all at once or
    (`sequential`) one after another. The number of iterations is `cardinality` (an integer or a
    `${...}` expression) or else the length of `collection` (a variable name or a `${...}`
    expression yielding a list), whose items the iterations see as `element_variable`.
    `completion_condition` ends the activity early. `async_before` starts every iteration as an
    asynchronous continuation."""

    sequential: bool = False
    cardinality: str | None = None
    collection: str | None = None
    element_variable: str | None = None
    completion_condition: Expression | None = None
    async_before: bool = False


@dataclass(frozen=True, kw_only=True)
class StandardLoop:
    """standardLoopCharacteristics: the activity runs again while `condition` holds, at most
    `maximum` times; `test_before` checks the condition before the first run too."""

    condition: Expression | None = None
    test_before: bool = False
    maximum: int | None = None


Loop = MultiInstance | StandardLoop
# The node type of a multi-instance body's visit, as Camunda names the body's activity type; its
# activity id is the activity's id with `#multiInstanceBody` after it.
MULTI_INSTANCE_BODY = "multiInstanceBody"


@dataclass(frozen=True, kw_only=True)
class Node:
    id: str
    name: str | None = None
    incoming: tuple[str, ...] = ()
    outgoing: tuple[str, ...] = ()
    async_before: bool = False
    async_after: bool = False
    # The enclosing embedded subprocess; None at process level.
    parent: str | None = None
    # camunda:failedJobRetryTimeCycle, e.g. "R3/PT5M": how often and how soon a failed job retries.
    retry_cycle: str | None = None
    # camunda:executionListener on `start` and `end`, in document order.
    listeners: tuple[Listener, ...] = ()
    # camunda:inputOutput: input parameters become the activity instance's local variables.
    io: InputOutput | None = None
    # Multi-instance or standard loop characteristics (tasks and embedded subprocesses only).
    loop: Loop | None = None
    # isForCompensation: a compensation handler, run only when its activity is compensated.
    is_for_compensation: bool = False
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)

    @property
    def kind(self) -> NodeKind:
        raise NotImplementedError

    @property
    def label(self) -> str:
        return self.name or self.id


@dataclass(frozen=True, kw_only=True)
class StartEvent(Node):
    """A start event: a none start, or triggered by a message, a timer or a signal. Inside an event
    subprocess it may also be an error start (`is_error`; `error_code` None catches every error)
    or an escalation start (`is_escalation`; `escalation_code` None catches every escalation),
    and `interrupting` False lets the enclosing scope carry on while the event subprocess runs."""

    message_name: str | None = None
    timer: TimerDefinition | None = None
    signal_name: str | None = None
    conditional: ConditionalTrigger | None = None
    is_error: bool = False
    error_code: str | None = None
    # camunda:errorCodeVariable / errorMessageVariable of an error start: the variables that
    # receive the caught error's code and message.
    error_code_variable: str | None = None
    error_message_variable: str | None = None
    is_escalation: bool = False
    escalation_code: str | None = None
    # camunda:escalationCodeVariable of an escalation start: the variable that receives the
    # caught escalation's code.
    escalation_code_variable: str | None = None
    interrupting: bool = True
    # camunda:formKey of a start form, kept as written; camunda:formData fields of a none start.
    form_key: str | None = None
    form_fields: tuple[FormField, ...] = ()
    # camunda:initiator: the variable that receives the id of the user who started the instance.
    initiator: str | None = None
    # The start of a compensation event subprocess: it runs when its subprocess is compensated.
    is_compensation: bool = False

    @property
    def kind(self) -> NodeKind:
        return NodeKind.START_EVENT

    @property
    def is_none_start(self) -> bool:
        return (
            self.message_name is None
            and self.timer is None
            and self.signal_name is None
            and self.conditional is None
            and not self.is_error
            and not self.is_escalation
            and not self.is_compensation
        )


@dataclass(frozen=True, kw_only=True)
class CompensateThrow:
    """A compensation throw event's compensateEventDefinition: compensate `activity_ref` (None:
    every completed compensable activity of the event's scope), and whether the event waits
    until the handlers it started have ended (`waitForCompletion`, true by default)."""

    activity_ref: str | None = None
    wait_for_completion: bool = True


@dataclass(frozen=True, kw_only=True)
class MessageThrow:
    """What a message throw event (intermediate or end) adds. As in Camunda 7 it is implemented
    like a service task: a registered `handler` (camunda:class, expression or delegateExpression
    on its messageEventDefinition) or external work on `topic`; with neither, it is a pass-through
    (Camunda 7 does the same). `message_name` is its messageRef's message, if it names one."""

    is_message: bool = False
    message_name: str | None = None
    handler: str | None = None
    topic: str | None = None
    result_variable: str | None = None
    task_priority: int | str = 0

    @property
    def is_external(self) -> bool:
        return self.topic is not None

    @property
    def is_implemented(self) -> bool:
        return self.handler is not None or self.topic is not None


def _throws(
    event: EndEvent | IntermediateThrowEvent,
    *,
    terminate: bool = False,
    error: bool = False,
    link: bool = False,
) -> tuple[str, ...]:
    """What a throw or end event carries: "terminate", "error", "escalation", "signal",
    "message", "link"."""
    found = [
        what
        for what, present in (
            ("terminate", terminate),
            ("error", error),
            ("escalation", event.is_escalation),
            ("signal", event.signal_name is not None),
            ("message", event.is_message),
            ("link", link),
        )
        if present
    ]
    return tuple(found)


@dataclass(frozen=True, kw_only=True)
class EndEvent(MessageThrow, Node):
    """A none end event, a terminate end event, an error end event that throws `error_code`, an
    escalation end event that throws `escalation_code`, a signal end event that broadcasts
    `signal_name`, or a message end event (see `MessageThrow`)."""

    terminate: bool = False
    is_error: bool = False
    error_code: str | None = None
    is_escalation: bool = False
    escalation_code: str | None = None
    signal_name: str | None = None
    signal_inputs: tuple[CallMapping, ...] = ()

    @property
    def throws(self) -> tuple[str, ...]:
        """What the end event does besides ending its token (at most one, see validate)."""
        return _throws(self, terminate=self.terminate, error=self.is_error)

    # A compensation end event: it triggers compensation, then its token ends.
    compensation: CompensateThrow | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.END_EVENT


class Implemented(Protocol):
    """A node implemented like a service task: a service or send task, a message throw event."""

    @property
    def id(self) -> str: ...
    @property
    def handler(self) -> str | None: ...
    @property
    def topic(self) -> str | None: ...
    @property
    def result_variable(self) -> str | None: ...
    @property
    def task_priority(self) -> int | str: ...
    @property
    def is_external(self) -> bool: ...


@dataclass(frozen=True, kw_only=True)
class ServiceTask(Node):
    """Either a Python handler registered by name, or external work on a topic for workers."""

    handler: str | None = None
    topic: str | None = None
    result_variable: str | None = None
    # camunda:taskPriority of its external task: a number, or a `${...}` resolved at creation.
    task_priority: int | str = 0
    # camunda:expression that is more than a handler's name: evaluated (it may only read), its
    # value going to `result_variable` when there is one.
    expression: Expression | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.SERVICE_TASK

    @property
    def is_external(self) -> bool:
        return self.topic is not None


@dataclass(frozen=True, kw_only=True)
class SendTask(ServiceTask):
    """A send task: implemented exactly like a service task, as in Camunda 7."""

    @property
    def kind(self) -> NodeKind:
        return NodeKind.SEND_TASK


@dataclass(frozen=True, kw_only=True)
class UserTask(Node):
    """Assignment fields are kept as written (literal or `${...}`); they are resolved when the task
    is created."""

    assignee: str | None = None
    candidate_users: str | None = None
    candidate_groups: str | None = None
    due_date: str | None = None
    follow_up_date: str | None = None
    priority: str | None = None
    form_key: str | None = None
    # camunda:taskListener on create, assignment, complete and delete, in document order.
    task_listeners: tuple[Listener, ...] = ()
    # camunda:formData: the fields of the task's generated form (see engine/forms.py).
    form_fields: tuple[FormField, ...] = ()

    @property
    def kind(self) -> NodeKind:
        return NodeKind.USER_TASK


@dataclass(frozen=True, kw_only=True)
class ScriptTask(Node):
    """Runs `script`; its value goes to `result_variable` when one is named."""

    script: Script
    result_variable: str | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.SCRIPT_TASK


@dataclass(frozen=True, kw_only=True)
class NoneTask(Node):
    """`task` and `manualTask`: the token passes straight through."""

    manual: bool = False

    @property
    def kind(self) -> NodeKind:
        return NodeKind.MANUAL_TASK if self.manual else NodeKind.TASK


@dataclass(frozen=True, kw_only=True)
class IntermediateThrowEvent(MessageThrow, Node):
    """A none throw event passes the token on; with `signal_name` it broadcasts that signal, with
    `is_escalation` it throws `escalation_code`, with `link_name` the token goes on at the link
    catch event of that name in the same scope; a message throw event runs its implementation
    (see `MessageThrow`)."""

    signal_name: str | None = None
    # camunda:in of a signal throw: the variables its signal carries.
    signal_inputs: tuple[CallMapping, ...] = ()
    is_escalation: bool = False
    escalation_code: str | None = None
    link_name: str | None = None

    @property
    def throws(self) -> tuple[str, ...]:
        """What the throw event does besides passing the token on (at most one, see validate)."""
        return _throws(self, link=self.link_name is not None)

    # A compensation throw event (see `CompensateThrow`).
    compensation: CompensateThrow | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.INTERMEDIATE_THROW_EVENT


@dataclass(frozen=True, kw_only=True)
class ExclusiveGateway(Node):
    default_flow: str | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.EXCLUSIVE_GATEWAY


@dataclass(frozen=True, kw_only=True)
class ParallelGateway(Node):
    @property
    def kind(self) -> NodeKind:
        return NodeKind.PARALLEL_GATEWAY

    @property
    def is_join(self) -> bool:
        return len(self.incoming) > 1


@dataclass(frozen=True, kw_only=True)
class InclusiveGateway(Node):
    """Diverging: every outgoing flow whose condition is true, the default flow when none is.
    Converging (more than one incoming flow): the tokens that arrived wait until no other live
    token of their scope can still reach the gateway, then one token leaves."""

    default_flow: str | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.INCLUSIVE_GATEWAY

    @property
    def is_join(self) -> bool:
        return len(self.incoming) > 1


@dataclass(frozen=True, kw_only=True)
class EventBasedGateway(Node):
    """The token waits here for every catch event its outgoing flows lead to at once; the first
    to occur wins, the others' waits are retired, and the token goes on through the winner."""

    @property
    def kind(self) -> NodeKind:
        return NodeKind.EVENT_BASED_GATEWAY


@dataclass(frozen=True, kw_only=True)
class IntermediateCatchEvent(Node):
    """The token waits here for exactly one of: a timer, a message, a signal. A link catch event
    (`link_name`) does not wait: a token arrives at it from a link throw event of its scope and
    goes straight on."""

    timer: TimerDefinition | None = None
    message_name: str | None = None
    signal_name: str | None = None
    link_name: str | None = None
    conditional: ConditionalTrigger | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.INTERMEDIATE_CATCH_EVENT


@dataclass(frozen=True, kw_only=True)
class ReceiveTask(Node):
    message_name: str

    @property
    def kind(self) -> NodeKind:
        return NodeKind.RECEIVE_TASK


@dataclass(frozen=True, kw_only=True)
class BoundaryEvent(Node):
    """An event on the edge of `attached_to` (a task or subprocess) with exactly one trigger.
    Interrupting (`cancel_activity`) ends the activity; otherwise a new token leaves beside it.
    `is_error` with `error_code` None catches every error; `is_escalation` with `escalation_code`
    None every escalation."""

    attached_to: str
    cancel_activity: bool = True
    timer: TimerDefinition | None = None
    message_name: str | None = None
    signal_name: str | None = None
    conditional: ConditionalTrigger | None = None
    is_error: bool = False
    error_code: str | None = None
    # As on an error start event: the variables that receive the caught error's code and message.
    error_code_variable: str | None = None
    error_message_variable: str | None = None
    is_escalation: bool = False
    escalation_code: str | None = None
    escalation_code_variable: str | None = None
    # A compensation boundary event: once its activity completes it can be compensated by
    # `compensate_handler`, the isForCompensation activity its association leads to.
    is_compensation: bool = False
    compensate_handler: str | None = None

    @property
    def kind(self) -> NodeKind:
        return NodeKind.BOUNDARY_EVENT


@dataclass(frozen=True, kw_only=True)
class SubProcess(Node):
    """An embedded subprocess: a scope whose nodes name it as `parent`. An event subprocess
    (`triggered_by_event`) has no flows in or out and starts when its start event triggers."""

    triggered_by_event: bool = False

    @property
    def kind(self) -> NodeKind:
        return NodeKind.SUB_PROCESS


CalledBinding = Literal["latest", "deployment", "version", "versionTag"]


@dataclass(frozen=True, kw_only=True)
class CallMapping:
    """One `camunda:in` or `camunda:out` of a call activity: every variable (`all`), one variable
    `source` or the value of `source_expression` copied to `target`, or (`business_key`, in
    only) the called instance's business key: the value of `source_expression`, or the constant
    `source`. `local`: an in reads only
    the call activity's own locals; an out sets locals of the call activity."""

    all: bool = False
    source: str | None = None
    source_expression: Expression | None = None
    target: str | None = None
    local: bool = False
    business_key: bool = False
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class CallActivity(Node):
    """Starts an instance of the process `called_element` (a key, or a `${...}` expression that
    yields one) and waits until it ends. `binding` picks its version: the latest, the one
    deployed with the caller (`deployment`), `version` (a number or an expression) or the latest
    with `version_tag`."""

    called_element: str
    binding: CalledBinding = "latest"
    version: str | None = None
    version_tag: str | None = None
    inputs: tuple[CallMapping, ...] = ()
    outputs: tuple[CallMapping, ...] = ()

    @property
    def kind(self) -> NodeKind:
        return NodeKind.CALL_ACTIVITY


# camunda:mapDecisionResult: how a business rule task's decision result becomes its variable.
DecisionResultMapping = Literal["singleEntry", "singleResult", "collectEntries", "resultList"]
DECISION_RESULT_MAPPINGS: tuple[DecisionResultMapping, ...] = (
    "singleEntry",
    "singleResult",
    "collectEntries",
    "resultList",
)


@dataclass(frozen=True, kw_only=True)
class BusinessRuleTask(Node):
    """Evaluates the decision `decision_ref` (a key, or a `${...}` expression that yields one)
    in the command's transaction; `binding` picks its version as a call activity's does. The
    result, mapped as `map_decision_result` says, goes to `result_variable` when one is named."""

    decision_ref: str
    binding: CalledBinding = "latest"
    version: str | None = None
    version_tag: str | None = None
    result_variable: str | None = None
    map_decision_result: DecisionResultMapping = "resultList"

    @property
    def kind(self) -> NodeKind:
        return NodeKind.BUSINESS_RULE_TASK


ACTIVITY_TYPES = (
    NoneTask,
    ServiceTask,
    ScriptTask,
    BusinessRuleTask,
    UserTask,
    ReceiveTask,
    SubProcess,
    CallActivity,
)
# The events that may carry input/output parameters (besides every activity).
IO_EVENT_TYPES = (IntermediateCatchEvent, IntermediateThrowEvent, EndEvent)


@dataclass(frozen=True, kw_only=True)
class SequenceFlow:
    id: str
    source: str
    target: str
    name: str | None = None
    condition: Expression | ScriptCondition | None = None
    # camunda:executionListener on `take`.
    listeners: tuple[Listener, ...] = ()
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)


@dataclass(frozen=True, kw_only=True)
class ProcessModel:
    """One executable process. `key` is the BPMN process id; versions are assigned at deployment."""

    key: str
    name: str | None = None
    nodes: tuple[Node, ...] = ()
    flows: tuple[SequenceFlow, ...] = ()
    version_tag: str | None = None
    # camunda:historyTimeToLive, in days (None: the default setting applies; engine/retention.py).
    history_ttl_days: int | None = None
    # The process's camunda:executionListener on `start` and `end`.
    listeners: tuple[Listener, ...] = ()
    line: int | None = field(default=None, compare=False)
    documentation: str | None = field(default=None, compare=False)
    properties: Properties = field(default=(), compare=False)
    _nodes_by_id: dict[str, Node] = field(init=False, repr=False, compare=False)
    _flows_by_id: dict[str, SequenceFlow] = field(init=False, repr=False, compare=False)
    # Asked at every step of every token, so answered from a map instead of a scan of the nodes.
    _boundary_by_activity: dict[str, tuple[BoundaryEvent, ...]] = field(
        init=False, repr=False, compare=False
    )
    _children_by_scope: dict[str | None, tuple[Node, ...]] = field(
        init=False, repr=False, compare=False
    )
    _none_start_by_scope: dict[str | None, StartEvent] = field(
        init=False, repr=False, compare=False
    )
    _event_subprocesses_by_scope: dict[str | None, tuple[SubProcess, ...]] = field(
        init=False, repr=False, compare=False
    )
    # For each converging inclusive gateway, the nodes of its scope from which a token can still
    # reach it: computed once per model, asked whenever such a join may fire.
    _upstream_of_join: dict[str, frozenset[str]] = field(init=False, repr=False, compare=False)
    # The catch events an event-based gateway waits for on their behalf.
    _after_event_gateway: frozenset[str] = field(init=False, repr=False, compare=False)
    # Each link catch event by its scope and link name.
    _link_catches: dict[tuple[str | None, str], str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(sorted(self.nodes, key=lambda n: n.id)))
        object.__setattr__(self, "flows", tuple(sorted(self.flows, key=lambda f: f.id)))
        object.__setattr__(self, "_nodes_by_id", {n.id: n for n in self.nodes})
        object.__setattr__(self, "_flows_by_id", {f.id: f for f in self.flows})
        boundaries: dict[str, list[BoundaryEvent]] = {}
        children: dict[str | None, list[Node]] = {}
        none_starts: dict[str | None, StartEvent] = {}
        event_subprocesses: dict[str | None, list[SubProcess]] = {}
        for node in self.nodes:
            children.setdefault(node.parent, []).append(node)
            if isinstance(node, BoundaryEvent):
                boundaries.setdefault(node.attached_to, []).append(node)
            elif isinstance(node, StartEvent) and node.is_none_start:
                none_starts.setdefault(node.parent, node)
            elif isinstance(node, SubProcess) and node.triggered_by_event:
                event_subprocesses.setdefault(node.parent, []).append(node)
        object.__setattr__(
            self, "_boundary_by_activity", {k: tuple(v) for k, v in boundaries.items()}
        )
        object.__setattr__(self, "_children_by_scope", {k: tuple(v) for k, v in children.items()})
        object.__setattr__(self, "_none_start_by_scope", none_starts)
        object.__setattr__(
            self,
            "_event_subprocesses_by_scope",
            {k: tuple(v) for k, v in event_subprocesses.items()},
        )
        object.__setattr__(
            self,
            "_link_catches",
            {
                (n.parent, n.link_name): n.id
                for n in self.nodes
                if isinstance(n, IntermediateCatchEvent) and n.link_name is not None
            },
        )
        object.__setattr__(self, "_upstream_of_join", self._inclusive_upstreams())
        gateways = {n.id for n in self.nodes if isinstance(n, EventBasedGateway)}
        object.__setattr__(
            self,
            "_after_event_gateway",
            frozenset(f.target for f in self.flows if f.source in gateways),
        )

    def _inclusive_upstreams(self) -> dict[str, frozenset[str]]:
        """Walk back from each converging inclusive gateway along the flows into each node, from
        a link catch event to its throw events, and from a boundary event to the activity it is
        attached to (a token waiting in the activity
        may leave through it). Flows never leave a scope, so neither does the walk: a token in an
        embedded subprocess is represented here by the subprocess's own token."""
        joins = [n for n in self.nodes if isinstance(n, InclusiveGateway) and n.is_join]
        if not joins:
            return {}
        sources: dict[str, list[str]] = {}
        for flow in self.flows:
            sources.setdefault(flow.target, []).append(flow.source)
        for node in self.nodes:
            if isinstance(node, BoundaryEvent):
                sources.setdefault(node.id, []).append(node.attached_to)
            elif isinstance(node, IntermediateThrowEvent) and node.link_name is not None:
                target = self._link_catches.get((node.parent, node.link_name))
                if target is not None:  # a link leads from its throw event to its catch event
                    sources.setdefault(target, []).append(node.id)
        upstream: dict[str, frozenset[str]] = {}
        for join in joins:
            seen: set[str] = set()
            todo = list(sources.get(join.id, ()))
            while todo:
                node_id = todo.pop()
                if node_id in seen or node_id == join.id:
                    continue
                seen.add(node_id)
                todo.extend(sources.get(node_id, ()))
            upstream[join.id] = frozenset(seen)
        return upstream

    def __hash__(self) -> int:
        return hash((self.key, self.nodes, self.flows))

    def node(self, node_id: str) -> Node:
        return self._nodes_by_id[node_id]

    def flow(self, flow_id: str) -> SequenceFlow:
        return self._flows_by_id[flow_id]

    def has_node(self, node_id: str) -> bool:
        return node_id in self._nodes_by_id

    def has_flow(self, flow_id: str) -> bool:
        return flow_id in self._flows_by_id

    @property
    def has_inclusive_joins(self) -> bool:
        return bool(self._upstream_of_join)

    def upstream_of(self, join_id: str) -> frozenset[str]:
        """The nodes from which a token can still reach the converging inclusive gateway
        `join_id` (the gateway itself not included)."""
        return self._upstream_of_join.get(join_id, frozenset())

    def follows_event_gateway(self, node_id: str) -> bool:
        """Whether `node_id` is a catch event an event-based gateway waits for: a token arrives
        there only once its event has occurred."""
        return node_id in self._after_event_gateway

    def link_target(self, throw: IntermediateThrowEvent) -> str:
        """The link catch event a link throw event leads to (see validate)."""
        assert throw.link_name is not None
        return self._link_catches[(throw.parent, throw.link_name)]

    def boundary_events(self, activity_id: str) -> tuple[BoundaryEvent, ...]:
        return self._boundary_by_activity.get(activity_id, ())

    def children(self, scope_id: str | None) -> tuple[Node, ...]:
        """The nodes directly inside `scope_id` (None: the process level)."""
        return self._children_by_scope.get(scope_id, ())

    def none_start_of(self, scope_id: str | None) -> StartEvent:
        """The first none start event (by id) directly inside `scope_id`."""
        start = self._none_start_by_scope.get(scope_id)
        if start is None:
            raise ModelError("scope has no none start event", element_id=scope_id or self.key)
        return start

    def event_subprocesses(self, scope_id: str | None) -> tuple[SubProcess, ...]:
        return self._event_subprocesses_by_scope.get(scope_id, ())

    @property
    def none_start(self) -> StartEvent:
        """The start event a plain `start` enters through."""
        return self.none_start_of(None)


def triggers(node: Node) -> tuple[str, ...]:
    """The triggers an event carries: "timer", "message", "signal", "error", "escalation", "link",
    "compensation"
    (empty for a none event or a node that is not an event)."""
    if not isinstance(node, StartEvent | IntermediateCatchEvent | BoundaryEvent):
        return ()
    found: list[str] = []
    if node.timer is not None:
        found.append("timer")
    if node.message_name is not None:
        found.append("message")
    if node.signal_name is not None:
        found.append("signal")
    if node.conditional is not None:
        found.append("conditional")
    if isinstance(node, StartEvent | BoundaryEvent) and node.is_error:
        found.append("error")
    if isinstance(node, StartEvent | BoundaryEvent) and node.is_escalation:
        found.append("escalation")
    if isinstance(node, IntermediateCatchEvent) and node.link_name is not None:
        found.append("link")
    if isinstance(node, StartEvent | BoundaryEvent) and node.is_compensation:
        found.append("compensation")
    return tuple(found)
