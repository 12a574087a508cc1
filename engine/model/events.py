"""Event nodes: start, end, intermediate throw and catch, boundary events and their
triggers (timers, messages, signals, errors, escalations, conditions, links, compensation)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.language.expressions import Expression
from engine.language.forms import FormField
from engine.language.timers import TimerKind
from engine.model.node import Node, NodeKind
from engine.model.scopes import CallMapping


@dataclass(frozen=True, kw_only=True)
class TimerDefinition:
    """An ISO 8601 date, duration or cycle (or a Quartz cron expression as a cycle), or a `${...}`
    expression that yields one."""

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


@dataclass(frozen=True, kw_only=True)
class Waits:
    """What an event can wait for: a timer, a message, a signal or a condition."""

    timer: TimerDefinition | None = None
    message_name: str | None = None
    signal_name: str | None = None
    conditional: ConditionalTrigger | None = None


@dataclass(frozen=True, kw_only=True)
class Catches(Waits):
    """What a start event of an event subprocess and a boundary event can catch besides: an error
    (`is_error`; `error_code` None catches every error), an escalation (`is_escalation`;
    `escalation_code` None catches every escalation), or compensation (`is_compensation`)."""

    is_error: bool = False
    error_code: str | None = None
    # camunda:errorCodeVariable / errorMessageVariable: the variables that receive the caught
    # error's code and message.
    error_code_variable: str | None = None
    error_message_variable: str | None = None
    is_escalation: bool = False
    escalation_code: str | None = None
    # camunda:escalationCodeVariable: the variable that receives the caught escalation's code.
    escalation_code_variable: str | None = None
    is_compensation: bool = False


@dataclass(frozen=True, kw_only=True)
class StartEvent(Catches, Node):
    """A start event: a none start, or triggered by a message, a timer or a signal. Inside an event
    subprocess it may also be an error or an escalation start (see `Catches`), and `interrupting`
    False lets the enclosing scope carry on while the event subprocess runs; a compensation
    start (`is_compensation`) starts a compensation event subprocess, run when its subprocess is
    compensated."""

    interrupting: bool = True
    # camunda:formKey of a start form, kept as written; camunda:formData fields of a none start.
    form_key: str | None = None
    form_fields: tuple[FormField, ...] = ()
    # camunda:initiator: the variable that receives the id of the user who started the instance.
    initiator: str | None = None

    _kind = NodeKind.START_EVENT

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
    cancel: bool = False,
) -> tuple[str, ...]:
    """What a throw or end event carries: "terminate", "error", "cancel", "escalation",
    "signal", "message", "link"."""
    found = [
        what
        for what, present in (
            ("terminate", terminate),
            ("error", error),
            ("cancel", cancel),
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
    # A cancel end event (cancelEventDefinition): it cancels the transaction it is directly in.
    cancel: bool = False

    @property
    def throws(self) -> tuple[str, ...]:
        """What the end event does besides ending its token (at most one, see validate)."""
        return _throws(self, terminate=self.terminate, error=self.is_error, cancel=self.cancel)

    # A compensation end event: it triggers compensation, then its token ends.
    compensation: CompensateThrow | None = None

    _kind = NodeKind.END_EVENT


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

    _kind = NodeKind.INTERMEDIATE_THROW_EVENT


@dataclass(frozen=True, kw_only=True)
class IntermediateCatchEvent(Waits, Node):
    """The token waits here for exactly one of: a timer, a message, a signal. A link catch event
    (`link_name`) does not wait: a token arrives at it from a link throw event of its scope and
    goes straight on."""

    link_name: str | None = None

    _kind = NodeKind.INTERMEDIATE_CATCH_EVENT


@dataclass(frozen=True, kw_only=True)
class BoundaryEvent(Catches, Node):
    """An event on the edge of `attached_to` (a task or subprocess) with exactly one trigger.
    Interrupting (`cancel_activity`) ends the activity; otherwise a new token leaves beside it.
    A compensation boundary event (`is_compensation`): once its activity completes it can be
    compensated by `compensate_handler`, the isForCompensation activity its association leads
    to. A cancel boundary event (`is_cancel`) on a transaction subprocess is where the
    transaction leaves once a cancel end event inside it has cancelled it."""

    attached_to: str
    cancel_activity: bool = True
    compensate_handler: str | None = None
    is_cancel: bool = False

    _kind = NodeKind.BOUNDARY_EVENT


def triggers(node: Node) -> tuple[str, ...]:
    """The triggers an event carries: "timer", "message", "signal", "error", "escalation", "link",
    "compensation", "cancel"
    (empty for a none event or a node that is not an event)."""
    return _triggers(node) if isinstance(node, Waits) else ()


def _triggers(node: Waits) -> tuple[str, ...]:
    found: list[str] = []
    if node.timer is not None:
        found.append("timer")
    if node.message_name is not None:
        found.append("message")
    if node.signal_name is not None:
        found.append("signal")
    if node.conditional is not None:
        found.append("conditional")
    if isinstance(node, Catches) and node.is_error:
        found.append("error")
    if isinstance(node, Catches) and node.is_escalation:
        found.append("escalation")
    if isinstance(node, IntermediateCatchEvent) and node.link_name is not None:
        found.append("link")
    if isinstance(node, Catches) and node.is_compensation:
        found.append("compensation")
    if isinstance(node, BoundaryEvent) and node.is_cancel:
        found.append("cancel")
    return tuple(found)
