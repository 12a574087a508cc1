"""Start, end, boundary, intermediate catch and throw events: their triggers (messages, timers,
signals, errors, escalations, conditions, links) and compensation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Self, TypedDict, Unpack

from engine.builder.base import BuilderBase, Continuations, NodeOptions, unexpected
from engine.language.expressions import is_expression
from engine.language.forms import FormField
from engine.model import (
    VARIABLE_EVENTS,
    BoundaryEvent,
    CallMapping,
    CompensateThrow,
    ConditionalTrigger,
    EndEvent,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    StartEvent,
    TimerDefinition,
)


class CatchTrigger(TypedDict, total=False):
    """What a start or boundary event catches, one at the most: a `message`, a `timer`, a
    `signal`, an error (`error=True` catches every error, `error_code` one code) or an
    escalation (likewise); the variables an error or escalation caught is written to."""

    timer: TimerDefinition | None
    message: str | None
    signal: str | None
    error: bool
    error_code: str | None
    error_code_variable: str | None
    error_message_variable: str | None
    escalation: bool
    escalation_code: str | None
    escalation_code_variable: str | None


class StartOptions(NodeOptions, CatchTrigger, total=False):
    pass


class BoundaryOptions(Continuations, CatchTrigger, total=False):
    pass


_CAUGHT_INTO = ("error_code_variable", "error_message_variable", "escalation_code_variable")


class Events(BuilderBase):
    def start_event(
        self,
        id: str,
        name: str | None = None,
        *,
        initiator: str | None = None,
        interrupting: bool = True,
        form_fields: Sequence[FormField] = (),
        **options: Unpack[StartOptions],
    ) -> Self:
        """A none start, or one triggered by a message, a timer or a signal; an error start (only
        in an event subprocess) with `error=True` or an `error_code`, an escalation start (there
        too) with `escalation=True` or an `escalation_code`. `form_fields` make a start form."""
        trigger, rest = self._caught(id, options)
        return self._node(
            StartEvent,
            id,
            name,
            rest,
            interrupting=interrupting,
            form_fields=self._form(id, form_fields),
            initiator=initiator,
            **trigger,
        )

    def boundary_event(
        self,
        id: str,
        attached_to: str,
        name: str | None = None,
        *,
        cancel_activity: bool = True,
        **options: Unpack[BoundaryOptions],
    ) -> Self:
        """An event on `attached_to` with one trigger; its parent is the activity's, found when
        the model is built. `cancel_activity=False` is non-interrupting."""
        trigger, rest = self._caught(id, options)
        unexpected(rest, Continuations.__optional_keys__)
        return self._node(
            BoundaryEvent,
            id,
            name,
            rest,
            attached_to=attached_to,
            cancel_activity=cancel_activity,
            **trigger,
        )

    def cancel_boundary(
        self,
        id: str,
        attached_to: str,
        name: str | None = None,
        **options: Unpack[Continuations],
    ) -> Self:
        """The cancel boundary event of the transaction subprocess `attached_to`: the
        transaction leaves through it once a cancel end event inside has cancelled it and its
        compensation has run. Always interrupting."""
        unexpected(dict(options), Continuations.__optional_keys__)
        return self._node(
            BoundaryEvent, id, name, dict(options), attached_to=attached_to, is_cancel=True
        )

    def _caught(self, id: str, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The fields of a start or boundary event's trigger, and the options that are not."""
        given = {k: v for k, v in options.items() if k in CatchTrigger.__optional_keys__}
        rest = {k: v for k, v in options.items() if k not in CatchTrigger.__optional_keys__}
        caught_into = {k: given.pop(k, None) for k in _CAUGHT_INTO}
        return {**self._trigger(id, **given), **caught_into}, rest

    def _trigger(
        self,
        element_id: str,
        *,
        timer: TimerDefinition | None = None,
        message: str | None = None,
        signal: str | None = None,
        error: bool = False,
        error_code: str | None = None,
        escalation: bool = False,
        escalation_code: str | None = None,
    ) -> dict[str, Any]:
        """The trigger fields of an event; `error_code` implies `error`, `escalation_code`
        implies `escalation`."""
        is_error = error or error_code is not None
        is_escalation = escalation or escalation_code is not None
        given = [
            what
            for what, present in (
                ("message", message is not None),
                ("timer", timer is not None),
                ("signal", signal is not None),
                ("error", is_error),
                ("escalation", is_escalation),
            )
            if present
        ]
        if len(given) > 1:
            raise self._error(
                "an event has either a message or a timer or a signal or an error, not "
                f"{' and '.join(given)}",
                element_id,
            )
        if error_code is not None and not error_code:
            raise self._error(
                "an error code cannot be empty (None catches every error)", element_id
            )
        if escalation_code is not None and not escalation_code:
            raise self._error(
                "an escalation code cannot be empty (None catches every escalation)", element_id
            )
        return {
            "timer": self._timer(element_id, timer),
            "message_name": self._named(element_id, "message", message),
            "signal_name": self._named(element_id, "signal", signal),
            "is_error": is_error,
            "error_code": error_code,
            "is_escalation": is_escalation,
            "escalation_code": escalation_code,
        }

    def end_event(
        self,
        id: str,
        name: str | None = None,
        *,
        terminate: bool = False,
        error: bool = False,
        error_code: str | None = None,
        escalation_code: str | None = None,
        signal: str | None = None,
        signal_inputs: Sequence[CallMapping] = (),
        message_event: bool = False,
        message: str | None = None,
        handler: str | None = None,
        topic: str | None = None,
        cancel: bool = False,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A none end, a terminate end, an error end that throws `error_code`, an escalation end
        that throws `escalation_code`, a signal end that broadcasts `signal` (with the variables
        its `signal_inputs` pass), a message end (`message_event`, or any of `message`,
        `handler`, `topic`: see `_message_throw`), or a cancel end (`cancel`: it cancels the
        transaction subprocess it is directly in)."""
        trigger = self._trigger(
            id, error=error, error_code=error_code, escalation_code=escalation_code
        )
        return self._node(
            EndEvent,
            id,
            name,
            options,
            terminate=terminate,
            is_error=trigger["is_error"],
            error_code=error_code,
            is_escalation=trigger["is_escalation"],
            escalation_code=escalation_code,
            signal_name=self._named(id, "signal", signal),
            signal_inputs=tuple(signal_inputs),
            cancel=cancel,
            **self._message_throw(id, message_event, message, handler, topic),
        )

    def intermediate_throw_event(
        self,
        id: str,
        name: str | None = None,
        *,
        signal: str | None = None,
        signal_inputs: Sequence[CallMapping] = (),
        escalation_code: str | None = None,
        link: str | None = None,
        message_event: bool = False,
        message: str | None = None,
        handler: str | None = None,
        topic: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """A none throw event, one that broadcasts `signal` (with the variables its
        `signal_inputs` pass), one that throws `escalation_code`,
        one that leads to the link catch event named `link`, or a message throw event
        (`message_event`, or any of `message`, `handler`, `topic`: see `_message_throw`)."""
        trigger = self._trigger(id, escalation_code=escalation_code)
        return self._node(
            IntermediateThrowEvent,
            id,
            name,
            options,
            signal_name=self._named(id, "signal", signal),
            signal_inputs=tuple(signal_inputs),
            is_escalation=trigger["is_escalation"],
            escalation_code=escalation_code,
            link_name=self._named(id, "link", link),
            **self._message_throw(id, message_event, message, handler, topic),
        )

    def _message_throw(
        self,
        id: str,
        message_event: bool,
        message: str | None,
        handler: str | None,
        topic: str | None,
    ) -> dict[str, Any]:
        """The fields of a message throw event: implemented by `handler` or external work on
        `topic` like a service task, or neither (it passes the token on); `message` names its
        message."""
        self._implementation(id, handler, topic)
        is_message = message_event or any(v is not None for v in (message, handler, topic))
        return {
            "is_message": is_message,
            "message_name": self._named(id, "message", message),
            "handler": handler,
            "topic": topic,
        }

    def intermediate_catch_event(
        self,
        id: str,
        name: str | None = None,
        *,
        timer: TimerDefinition | None = None,
        message: str | None = None,
        signal: str | None = None,
        link: str | None = None,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """The token waits for a timer, a message or a signal (exactly one); or it is the link
        catch event named `link`, where the link throw events of that name lead."""
        trigger = self._trigger(id, timer=timer, message=message, signal=signal)
        for kept_off in ("is_error", "error_code", "is_escalation", "escalation_code"):
            del trigger[kept_off]
        return self._node(
            IntermediateCatchEvent,
            id,
            name,
            options,
            link_name=self._named(id, "link", link),
            **trigger,
        )

    def conditional(
        self,
        node_id: str,
        condition: str,
        *,
        variable_name: str | None = None,
        variable_events: Sequence[str] = (),
    ) -> Self:
        """The start, intermediate catch or boundary event `node_id`, added before without a
        trigger, waits for `condition` to hold (a conditionalEventDefinition); `variable_name`
        and `variable_events` narrow the variable changes that evaluate it."""
        compiled = self._expression(node_id, "condition", condition)
        if not is_expression(condition):
            raise self._error("the condition of a conditional event is a ${} expression", node_id)
        if variable_name is not None and not variable_name.strip():
            raise self._error("variable_name must name a variable", node_id)
        unknown = [event for event in variable_events if event not in VARIABLE_EVENTS]
        if unknown:
            message = f"variable events are create, update or delete, not {unknown}"
            raise self._error(message, node_id)
        trigger = ConditionalTrigger(
            condition=compiled,
            variable_name=variable_name,
            variable_events=tuple(variable_events),
        )
        index = self._index(node_id)
        if index is None:
            raise self._error("no node with this id was added", node_id)
        node = self._nodes[index]
        if not isinstance(node, StartEvent | IntermediateCatchEvent | BoundaryEvent):
            message = "only a start, catch or boundary event is conditional"
            raise self._error(message, node_id)
        self._nodes[index] = replace(node, conditional=trigger)
        return self

    def compensation_boundary(
        self, id: str, attached_to: str, handler: str, name: str | None = None
    ) -> Self:
        """A compensation boundary event on `attached_to` whose handler is the task or
        subprocess `handler`, added before (it becomes isForCompensation: it runs only when
        `attached_to` is compensated, and has no flows)."""
        index = self._index(handler)
        if index is None:
            raise self._error(f"no handler '{handler}' was added", id)
        self._nodes[index] = replace(self._nodes[index], is_for_compensation=True)
        return self._add(
            BoundaryEvent(
                id=id,
                name=name,
                attached_to=attached_to,
                is_compensation=True,
                compensate_handler=handler,
            )
        )

    def compensation_throw(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        activity: str | None = None,
        wait_for_completion: bool = True,
        end: bool = False,
    ) -> Self:
        """An intermediate (or, with `end`, an end) compensation throw event: it compensates
        `activity`, or every completed compensable activity of its scope."""
        compensation = CompensateThrow(
            activity_ref=activity, wait_for_completion=wait_for_completion
        )
        kind = EndEvent if end else IntermediateThrowEvent
        return self._add(kind(id=id, name=name, parent=parent, compensation=compensation))

    def compensation_start(self, id: str, name: str | None = None, *, parent: str) -> Self:
        """The start event of the compensation event subprocess `parent` (a subprocess added
        with `triggered_by_event`, inside the embedded subprocess it compensates)."""
        return self._add(StartEvent(id=id, name=name, parent=parent, is_compensation=True))
