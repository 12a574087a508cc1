"""Build a `ProcessModel` in Python; the result equals the model parsed from the same BPMN.

    model = (
        ProcessBuilder("invoice", "Invoice approval")
        .start_event("Start")
        .user_task("Approve", assignee="${approver}")
        .exclusive_gateway("Approved", default="Flow_Rejected")
        .service_task("Pay", handler="payInvoice")
        .end_event("Paid")
        .end_event("Rejected")
        .chain("Start", "Approve", "Approved")
        .flow("Approved", "Pay", condition="${approved}")
        .flow("Approved", "Rejected", id="Flow_Rejected")
        .chain("Pay", "Paid")
        .build()
    )

Incoming and outgoing flows are listed in the order the flows were added, as the parser lists them
in document order. Nodes inside an embedded subprocess name it as `parent`; a boundary event takes
the parent of the activity it is attached to:

    (
        ProcessBuilder("claims")
        .start_event("Start")
        .sub_process("Assess")
        .start_event("AssessStart", parent="Assess")
        .user_task("Review", parent="Assess", retry_cycle="R3/PT5M")
        .end_event("AssessEnd", parent="Assess")
        .chain("AssessStart", "Review", "AssessEnd")
        .boundary_event("TooLate", "Assess", timer=TimerDefinition(kind="duration", text="P2D"))
        ...
    )
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine.bpmn.parser import timer_problem
from engine.bpmn.reading import is_handler_name, retry_cycle_problem, script_format
from engine.errors import ExpressionError, ModelError
from engine.expressions import Expression, compile_expression, is_expression
from engine.forms import FormField, form_problem
from engine.history_ttl import check_history_ttl
from engine.mappings import InputOutput, Parameter, from_python
from engine.model import (
    EXECUTION_EVENTS,
    TAKE_EVENT,
    TASK_EVENTS,
    VARIABLE_EVENTS,
    BoundaryEvent,
    BusinessRuleTask,
    CallActivity,
    CalledBinding,
    CallMapping,
    CompensateThrow,
    ConditionalTrigger,
    DecisionResultMapping,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Listener,
    MultiInstance,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    Script,
    ScriptCondition,
    ScriptTask,
    SendTask,
    SequenceFlow,
    ServiceTask,
    StandardLoop,
    StartEvent,
    SubProcess,
    TimerDefinition,
    UserTask,
)
from engine.validation import validate


class ProcessBuilder:
    def __init__(
        self,
        key: str,
        name: str | None = None,
        version_tag: str | None = None,
        *,
        history_ttl_days: int | None = None,
    ) -> None:
        """`history_ttl_days`: camunda:historyTimeToLive (None: the default setting applies)."""
        self._file = f"<builder {key}>"
        if not key:
            raise ModelError("a process needs a key", file=self._file)
        if history_ttl_days is not None:
            try:
                check_history_ttl(history_ttl_days)
            except ValueError as exc:
                raise ModelError(str(exc), file=self._file, element_id=key) from None
        self._key = key
        self._name = name
        self._version_tag = version_tag
        self._history_ttl_days = history_ttl_days
        self._nodes: list[Node] = []
        self._flows: list[SequenceFlow] = []
        self._ids: set[str] = set()
        self._process_listeners: list[Listener] = []

    def _error(self, message: str, element_id: str) -> ModelError:
        return ModelError(message, file=self._file, element_id=element_id)

    def _claim(self, element_id: str) -> None:
        if not element_id:
            raise ModelError("an element needs a non-empty id", file=self._file)
        if element_id in self._ids:
            raise self._error("duplicate element id", element_id)
        self._ids.add(element_id)

    def _add(self, node: Node) -> ProcessBuilder:
        self._claim(node.id)
        self._nodes.append(node)
        return self

    def _checked(self, element_id: str, what: str, value: str | None) -> str | None:
        """Text containing an expression must be exactly one safe expression, as in the parser."""
        if value is not None and ("${" in value or "#{" in value):
            try:
                compile_expression(value)
            except ExpressionError as error:
                raise self._error(f"{what}: {error.message}", element_id) from None
        return value

    def _timer(self, element_id: str, timer: TimerDefinition | None) -> TimerDefinition | None:
        if timer is None:
            return None
        if timer.text != timer.text.strip():
            raise self._error("timer text must not start or end with whitespace", element_id)
        # Syntax only: the engine a model is deployed to holds its timers to its own limits.
        problem = timer_problem(timer.kind, timer.text, None)
        if problem is not None:
            raise self._error(f"timer: {problem}", element_id)
        return timer

    def _retry(self, element_id: str, retry_cycle: str | None) -> str | None:
        if retry_cycle is None:
            return None
        if retry_cycle != retry_cycle.strip():
            message = "retry_cycle must not start or end with whitespace"
            raise self._error(message, element_id)
        problem = retry_cycle_problem(retry_cycle)
        if problem is not None:
            raise self._error(problem, element_id)
        return retry_cycle

    def _form(self, element_id: str, fields: Sequence[FormField]) -> tuple[FormField, ...]:
        problem = form_problem(fields)
        if problem is not None:
            raise self._error(problem, element_id)
        return tuple(fields)

    def _named(self, element_id: str, what: str, value: str | None) -> str | None:
        if value is not None and not value:
            raise self._error(f"a {what} needs a non-empty name", element_id)
        return value

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

    def start_event(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        initiator: str | None = None,
        message: str | None = None,
        timer: TimerDefinition | None = None,
        signal: str | None = None,
        error: bool = False,
        error_code: str | None = None,
        error_code_variable: str | None = None,
        error_message_variable: str | None = None,
        escalation: bool = False,
        escalation_code: str | None = None,
        escalation_code_variable: str | None = None,
        interrupting: bool = True,
        form_fields: Sequence[FormField] = (),
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """A none start, or one triggered by a message, a timer or a signal; an error start (only
        in an event subprocess) with `error=True` or an `error_code`, an escalation start (there
        too) with `escalation=True` or an `escalation_code`. `form_fields` make a start form."""
        trigger = self._trigger(
            id,
            timer=timer,
            message=message,
            signal=signal,
            error=error,
            error_code=error_code,
            escalation=escalation,
            escalation_code=escalation_code,
        )
        return self._add(
            StartEvent(
                id=id,
                name=name,
                parent=parent,
                interrupting=interrupting,
                form_fields=self._form(id, form_fields),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
                error_code_variable=error_code_variable,
                error_message_variable=error_message_variable,
                escalation_code_variable=escalation_code_variable,
                initiator=initiator,
                **trigger,
            )
        )

    def end_event(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
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
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """A none end, a terminate end, an error end that throws `error_code`, an escalation end
        that throws `escalation_code`, a signal end that broadcasts `signal` (with the variables
        its `signal_inputs` pass), or a message end (`message_event`, or any of `message`,
        `handler`, `topic`: see `_message_throw`)."""
        trigger = self._trigger(
            id, error=error, error_code=error_code, escalation_code=escalation_code
        )
        return self._add(
            EndEvent(
                id=id,
                name=name,
                parent=parent,
                terminate=terminate,
                is_error=trigger["is_error"],
                error_code=error_code,
                is_escalation=trigger["is_escalation"],
                escalation_code=escalation_code,
                signal_name=self._named(id, "signal", signal),
                signal_inputs=tuple(signal_inputs),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
                **self._message_throw(id, message_event, message, handler, topic),
            )
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

    def _implementation(self, id: str, handler: str | None, topic: str | None) -> None:
        if handler is not None and not is_handler_name(handler):
            raise self._error(f"handler '{handler}' is not a name or a dotted class name", id)
        if topic is not None and not topic:
            raise self._error("an external task needs a non-empty topic", id)

    def service_task(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        handler: str | None = None,
        topic: str | None = None,
        result_variable: str | None = None,
        priority: int | str = 0,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
        send: bool = False,
        expression: str | None = None,
    ) -> ProcessBuilder:
        """A service task (a send task with `send`): a handler, external work on `topic` (its
        `priority` a number or a `${...}` resolved when the external task is created), or an
        `expression` evaluated, its value going to `result_variable`."""
        self._implementation(id, handler, topic)
        compiled = None
        if expression is not None:
            if not is_expression(expression):
                raise self._error(f"expression '{expression}' is not one ${{...}}", id)
            self._checked(id, "expression", expression)
            compiled = compile_expression(expression)
        if isinstance(priority, str) and not is_expression(priority):
            raise self._error(f"priority '{priority}' is neither a number nor ${{...}}", id)
        if isinstance(priority, str):
            self._checked(id, "priority", priority)
        kind = SendTask if send else ServiceTask
        return self._add(
            kind(
                id=id,
                name=name,
                parent=parent,
                handler=handler,
                topic=topic,
                result_variable=result_variable,
                task_priority=priority,
                expression=compiled,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def user_task(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        assignee: str | None = None,
        candidate_users: str | None = None,
        candidate_groups: str | None = None,
        due_date: str | None = None,
        priority: str | None = None,
        form_key: str | None = None,
        form_fields: Sequence[FormField] = (),
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        return self._add(
            UserTask(
                id=id,
                name=name,
                parent=parent,
                assignee=self._checked(id, "assignee", assignee),
                candidate_users=self._checked(id, "candidate_users", candidate_users),
                candidate_groups=self._checked(id, "candidate_groups", candidate_groups),
                due_date=self._checked(id, "due_date", due_date),
                priority=self._checked(id, "priority", priority),
                form_key=self._checked(id, "form_key", form_key),
                form_fields=self._form(id, form_fields),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def task(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        manual: bool = False,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        return self._add(
            NoneTask(
                id=id,
                name=name,
                parent=parent,
                manual=manual,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def receive_task(
        self,
        id: str,
        name: str | None = None,
        *,
        message: str,
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """A task that waits for `message`."""
        if not message:
            raise self._error("a receive task needs a message name", id)
        return self._add(
            ReceiveTask(
                id=id,
                name=name,
                parent=parent,
                message_name=message,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def call_activity(
        self,
        id: str,
        name: str | None = None,
        *,
        called_element: str,
        binding: CalledBinding = "latest",
        version: int | str | None = None,
        version_tag: str | None = None,
        inputs: Sequence[CallMapping] = (),
        outputs: Sequence[CallMapping] = (),
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """Calls the process `called_element` (a key or a `${...}` expression) in the version
        `binding` picks, and waits until the called instance ends; `inputs` and `outputs` are
        its camunda:in and camunda:out mappings."""
        if not called_element.strip():
            raise self._error("a call activity needs a called element", id)
        self._checked(id, "calledElement", called_element)
        if (binding == "version") != (version is not None):
            raise self._error('a version goes with binding="version", and only with it', id)
        if (binding == "versionTag") != (version_tag is not None):
            raise self._error('a version tag goes with binding="versionTag", and only with it', id)
        return self._add(
            CallActivity(
                id=id,
                name=name,
                parent=parent,
                called_element=called_element,
                binding=binding,
                version=None if version is None else str(version),
                version_tag=version_tag,
                inputs=tuple(inputs),
                outputs=tuple(outputs),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def sub_process(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        triggered_by_event: bool = False,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """An embedded subprocess; its nodes name it as `parent`. With `triggered_by_event` an
        event subprocess: no flows in or out, one start event with a trigger."""
        return self._add(
            SubProcess(
                id=id,
                name=name,
                parent=parent,
                triggered_by_event=triggered_by_event,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def boundary_event(
        self,
        id: str,
        attached_to: str,
        name: str | None = None,
        *,
        cancel_activity: bool = True,
        timer: TimerDefinition | None = None,
        message: str | None = None,
        signal: str | None = None,
        error: bool = False,
        error_code: str | None = None,
        error_code_variable: str | None = None,
        error_message_variable: str | None = None,
        escalation: bool = False,
        escalation_code: str | None = None,
        escalation_code_variable: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """An event on `attached_to` with one trigger; its parent is the activity's, found when
        the model is built. `cancel_activity=False` is non-interrupting."""
        trigger = self._trigger(
            id,
            timer=timer,
            message=message,
            signal=signal,
            error=error,
            error_code=error_code,
            escalation=escalation,
            escalation_code=escalation_code,
        )
        return self._add(
            BoundaryEvent(
                id=id,
                name=name,
                attached_to=attached_to,
                cancel_activity=cancel_activity,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
                error_code_variable=error_code_variable,
                error_message_variable=error_message_variable,
                escalation_code_variable=escalation_code_variable,
                **trigger,
            )
        )

    def intermediate_catch_event(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        timer: TimerDefinition | None = None,
        message: str | None = None,
        signal: str | None = None,
        link: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """The token waits for a timer, a message or a signal (exactly one); or it is the link
        catch event named `link`, where the link throw events of that name lead."""
        trigger = self._trigger(id, timer=timer, message=message, signal=signal)
        for kept_off in ("is_error", "error_code", "is_escalation", "escalation_code"):
            del trigger[kept_off]
        return self._add(
            IntermediateCatchEvent(
                id=id,
                name=name,
                parent=parent,
                link_name=self._named(id, "link", link),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
                **trigger,
            )
        )

    def intermediate_throw_event(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        signal: str | None = None,
        signal_inputs: Sequence[CallMapping] = (),
        escalation_code: str | None = None,
        link: str | None = None,
        message_event: bool = False,
        message: str | None = None,
        handler: str | None = None,
        topic: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """A none throw event, one that broadcasts `signal` (with the variables its
        `signal_inputs` pass), one that throws `escalation_code`,
        one that leads to the link catch event named `link`, or a message throw event
        (`message_event`, or any of `message`, `handler`, `topic`: see `_message_throw`)."""
        trigger = self._trigger(id, escalation_code=escalation_code)
        return self._add(
            IntermediateThrowEvent(
                id=id,
                name=name,
                parent=parent,
                signal_name=self._named(id, "signal", signal),
                signal_inputs=tuple(signal_inputs),
                is_escalation=trigger["is_escalation"],
                escalation_code=escalation_code,
                link_name=self._named(id, "link", link),
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
                **self._message_throw(id, message_event, message, handler, topic),
            )
        )

    def exclusive_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        default: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """The first outgoing flow whose condition is true, else `default`."""
        gateway = ExclusiveGateway
        return self._plain(
            gateway, id, name, parent, async_before, async_after, retry_cycle, default_flow=default
        )

    def inclusive_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        default: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """Diverging: every outgoing flow whose condition is true, else `default`. Converging
        (several flows in): waits until no other live token of its scope can reach it."""
        gateway = InclusiveGateway
        return self._plain(
            gateway, id, name, parent, async_before, async_after, retry_cycle, default_flow=default
        )

    def parallel_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        gateway = ParallelGateway
        return self._plain(gateway, id, name, parent, async_before, async_after, retry_cycle)

    def event_based_gateway(
        self,
        id: str,
        name: str | None = None,
        *,
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """Waits for the intermediate catch events its flows lead to; the first to occur wins."""
        gateway = EventBasedGateway
        return self._plain(gateway, id, name, parent, async_before, async_after, retry_cycle)

    def _plain(
        self,
        kind: type[Node],
        id: str,
        name: str | None,
        parent: str | None,
        async_before: bool,
        async_after: bool,
        retry_cycle: str | None,
        **fields: Any,
    ) -> ProcessBuilder:
        """A node of `kind` with the attributes every node has, and its own `fields`."""
        retry = self._retry(id, retry_cycle)
        return self._add(
            kind(
                id=id,
                name=name,
                parent=parent,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=retry,
                **fields,
            )
        )

    def business_rule_task(
        self,
        id: str,
        name: str | None = None,
        *,
        decision_ref: str,
        binding: CalledBinding = "latest",
        version: int | str | None = None,
        version_tag: str | None = None,
        result_variable: str | None = None,
        map_decision_result: DecisionResultMapping = "resultList",
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """Evaluates the decision `decision_ref` (a key or a `${...}` expression) in the version
        `binding` picks; its result, mapped as `map_decision_result` says (singleEntry,
        singleResult, collectEntries, resultList), goes to `result_variable`."""
        if not decision_ref.strip():
            raise self._error("a business rule task needs a decision", id)
        self._checked(id, "decisionRef", decision_ref)
        if (binding == "version") != (version is not None):
            raise self._error('a version goes with binding="version", and only with it', id)
        if (binding == "versionTag") != (version_tag is not None):
            raise self._error('a version tag goes with binding="versionTag", and only with it', id)
        if map_decision_result != "resultList" and result_variable is None:
            raise self._error("a result mapping needs a result variable", id)
        return self._add(
            BusinessRuleTask(
                id=id,
                name=name,
                parent=parent,
                decision_ref=decision_ref,
                binding=binding,
                version=str(version) if version is not None else None,
                version_tag=version_tag,
                result_variable=result_variable,
                map_decision_result=map_decision_result,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def script_task(
        self,
        id: str,
        name: str | None = None,
        *,
        script: str,
        format: str = "javascript",
        result_variable: str | None = None,
        parent: str | None = None,
        async_before: bool = False,
        async_after: bool = False,
        retry_cycle: str | None = None,
    ) -> ProcessBuilder:
        """A task that runs `script`: JavaScript, or a `${}` expression with format "juel"."""
        return self._add(
            ScriptTask(
                id=id,
                name=name,
                parent=parent,
                script=self._script(id, format, script),
                result_variable=result_variable,
                async_before=async_before,
                async_after=async_after,
                retry_cycle=self._retry(id, retry_cycle),
            )
        )

    def _script(self, element_id: str, format: str, source: str) -> Script:
        kind = script_format(format)
        if kind is None:
            raise self._error(f"script language '{format}' is not supported", element_id)
        if not source.strip():
            raise self._error("the script is empty", element_id)
        if kind == "expression":
            source = source.strip()
            try:
                compile_expression(source)
            except ExpressionError as error:
                raise self._error(f"script: {error.message}", element_id) from None
        return Script(format=kind, source=source)

    def listener(
        self,
        element_id: str,
        event: str,
        *,
        handler: str | None = None,
        script: str | None = None,
        format: str = "javascript",
        task: bool = False,
    ) -> ProcessBuilder:
        """Add a listener to the node, sequence flow or process (its key) `element_id`, already
        added: an execution listener on `start`/`end` (`take` on a flow), or with `task` a task
        listener of a user task on `create`/`assignment`/`complete`/`delete`. Either a registered
        `handler` or a `script`."""
        if (handler is None) == (script is None):
            raise self._error("a listener needs either a handler or a script", element_id)
        if handler is not None and not is_handler_name(handler):
            message = f"handler '{handler}' is not a name or a dotted class name"
            raise self._error(message, element_id)
        made = Listener(
            event=event,
            handler=handler,
            script=None if script is None else self._script(element_id, format, script),
        )
        for index, flow in enumerate(self._flows):
            if flow.id == element_id and not task:
                if event != TAKE_EVENT:
                    raise self._error("a sequence flow's listeners run on take", element_id)
                self._flows[index] = replace(flow, listeners=(*flow.listeners, made))
                return self
        for index, node in enumerate(self._nodes):
            if node.id != element_id:
                continue
            if task:
                if not isinstance(node, UserTask):
                    raise self._error("task listeners belong on a user task", element_id)
                if event not in TASK_EVENTS:
                    raise self._error(f"task listener event '{event}' is unknown", element_id)
                self._nodes[index] = replace(node, task_listeners=(*node.task_listeners, made))
            else:
                if event not in EXECUTION_EVENTS:
                    raise self._error(f"execution listener event '{event}' is unknown", element_id)
                self._nodes[index] = replace(node, listeners=(*node.listeners, made))
            return self
        if element_id == self._key and not task and event in EXECUTION_EVENTS:
            self._process_listeners.append(made)
            return self
        raise self._error("a listener needs an element added before it", element_id)

    def flow(
        self,
        source: str,
        target: str,
        *,
        id: str | None = None,
        condition: str | None = None,
        condition_language: str | None = None,
        name: str | None = None,
    ) -> ProcessBuilder:
        """A sequence flow; `condition` is a `${}` expression, or JavaScript when
        `condition_language` is "javascript"."""
        flow_id = id if id is not None else f"Flow_{source}_{target}"
        self._claim(flow_id)
        compiled: Expression | ScriptCondition | None = None
        if condition is not None and condition_language is not None:
            if script_format(condition_language) != "javascript":
                message = f"script language '{condition_language}' is not supported"
                raise self._error(message, flow_id)
            compiled = ScriptCondition(source=condition, language=condition_language)
        elif condition is not None:
            try:
                compiled = compile_expression(condition)
            except ExpressionError as error:
                message = f"invalid condition on sequence flow '{flow_id}': {error.message}"
                raise self._error(message, flow_id) from None
        self._flows.append(
            SequenceFlow(id=flow_id, source=source, target=target, name=name, condition=compiled)
        )
        return self

    def input_output(
        self,
        node_id: str,
        *,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
    ) -> ProcessBuilder:
        """camunda:inputOutput on the node added as `node_id`: each value a str (constant text or
        one `${...}`), None, or a list or dict of such values."""
        index = next((i for i, node in enumerate(self._nodes) if node.id == node_id), None)
        if index is None:
            raise self._error("input/output parameters name no node added so far", node_id)
        try:
            io = InputOutput(
                inputs=tuple(Parameter(k, from_python(v)) for k, v in (inputs or {}).items()),
                outputs=tuple(Parameter(k, from_python(v)) for k, v in (outputs or {}).items()),
            )
        except ExpressionError as error:
            raise self._error(f"input/output parameter: {error.message}", node_id) from None
        except TypeError as error:
            raise self._error(str(error), node_id) from None
        self._nodes[index] = replace(self._nodes[index], io=io)
        return self

    def multi_instance(
        self,
        node_id: str,
        *,
        sequential: bool = False,
        cardinality: str | int | None = None,
        collection: str | None = None,
        element_variable: str | None = None,
        completion_condition: str | None = None,
        async_before: bool = False,
    ) -> ProcessBuilder:
        """The task or subprocess `node_id`, added before, runs as a multi-instance activity."""
        condition = None
        if completion_condition is not None:
            condition = self._expression(node_id, "completion_condition", completion_condition)
        if isinstance(cardinality, str):
            self._checked(node_id, "cardinality", cardinality)
        return self._looping(
            node_id,
            MultiInstance(
                sequential=sequential,
                cardinality=None if cardinality is None else str(cardinality),
                collection=self._checked(node_id, "collection", collection),
                element_variable=element_variable,
                completion_condition=condition,
                async_before=async_before,
            ),
        )

    def standard_loop(
        self,
        node_id: str,
        *,
        condition: str | None = None,
        test_before: bool = False,
        maximum: int | None = None,
    ) -> ProcessBuilder:
        """The task or subprocess `node_id`, added before, runs again while `condition` holds,
        at most `maximum` times."""
        if condition is None and maximum is None:
            raise self._error("a standard loop needs a condition or a maximum", node_id)
        compiled = None if condition is None else self._expression(node_id, "condition", condition)
        loop = StandardLoop(condition=compiled, test_before=test_before, maximum=maximum)
        return self._looping(node_id, loop)

    def _expression(self, element_id: str, what: str, text: str) -> Expression:
        try:
            return compile_expression(text)
        except ExpressionError as error:
            raise self._error(f"{what}: {error.message}", element_id) from None

    def conditional(
        self,
        node_id: str,
        condition: str,
        *,
        variable_name: str | None = None,
        variable_events: Sequence[str] = (),
    ) -> ProcessBuilder:
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
        for index, node in enumerate(self._nodes):
            if node.id == node_id:
                if not isinstance(node, StartEvent | IntermediateCatchEvent | BoundaryEvent):
                    message = "only a start, catch or boundary event is conditional"
                    raise self._error(message, node_id)
                self._nodes[index] = replace(node, conditional=trigger)
                return self
        raise self._error("no node with this id was added", node_id)

    def _looping(self, node_id: str, loop: MultiInstance | StandardLoop) -> ProcessBuilder:
        for index, node in enumerate(self._nodes):
            if node.id == node_id:
                self._nodes[index] = replace(node, loop=loop)
                return self
        raise self._error("no node with this id was added", node_id)

    def compensation_boundary(
        self, id: str, attached_to: str, handler: str, name: str | None = None
    ) -> ProcessBuilder:
        """A compensation boundary event on `attached_to` whose handler is the task or
        subprocess `handler`, added before (it becomes isForCompensation: it runs only when
        `attached_to` is compensated, and has no flows)."""
        for index, node in enumerate(self._nodes):
            if node.id == handler:
                self._nodes[index] = replace(node, is_for_compensation=True)
                break
        else:
            raise self._error(f"no handler '{handler}' was added", id)
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
    ) -> ProcessBuilder:
        """An intermediate (or, with `end`, an end) compensation throw event: it compensates
        `activity`, or every completed compensable activity of its scope."""
        compensation = CompensateThrow(
            activity_ref=activity, wait_for_completion=wait_for_completion
        )
        kind = EndEvent if end else IntermediateThrowEvent
        return self._add(kind(id=id, name=name, parent=parent, compensation=compensation))

    def compensation_start(
        self, id: str, name: str | None = None, *, parent: str
    ) -> ProcessBuilder:
        """The start event of the compensation event subprocess `parent` (a subprocess added
        with `triggered_by_event`, inside the embedded subprocess it compensates)."""
        return self._add(StartEvent(id=id, name=name, parent=parent, is_compensation=True))

    def chain(self, *node_ids: str) -> ProcessBuilder:
        for source, target in itertools.pairwise(node_ids):
            self.flow(source, target)
        return self

    def build(self) -> ProcessModel:
        by_id = {node.id: node for node in self._nodes}

        def parent_of(node: Node) -> str | None:
            if isinstance(node, BoundaryEvent) and node.attached_to in by_id:
                return by_id[node.attached_to].parent
            return node.parent

        # Every node's flows in the order they were added, from one pass over the flows.
        flows_in: dict[str, list[str]] = {}
        flows_out: dict[str, list[str]] = {}
        for flow in self._flows:
            flows_in.setdefault(flow.target, []).append(flow.id)
            flows_out.setdefault(flow.source, []).append(flow.id)
        nodes = tuple(
            replace(
                node,
                parent=parent_of(node),
                incoming=tuple(flows_in.get(node.id, ())),
                outgoing=tuple(flows_out.get(node.id, ())),
            )
            for node in self._nodes
        )
        model = ProcessModel(
            key=self._key,
            name=self._name,
            nodes=nodes,
            flows=tuple(self._flows),
            version_tag=self._version_tag,
            history_ttl_days=self._history_ttl_days,
            listeners=tuple(self._process_listeners),
        )
        return validate(model, file=self._file)
