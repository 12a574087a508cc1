"""Events: catch events, boundary events, end events and BPMN errors searched scope by scope."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any
from uuid import UUID

from engine.core.effects import ThrownToCaller
from engine.core.runtime import JobRow, Token
from engine.language import timers
from engine.model import (
    BoundaryEvent,
    EndEvent,
    EventBasedGateway,
    IntermediateCatchEvent,
    Node,
    StartEvent,
    SubProcess,
)
from engine.semantics import conditions, waits
from engine.semantics.mappings import set_locals
from engine.semantics.scopes import ScopeMoves
from engine.states import InstanceState, SubscriptionKind, TokenState, VisitState


class EventMoves(ScopeMoves):
    def _catch(self, token: Token, node: IntermediateCatchEvent) -> None:
        if self.model.follows_event_gateway(node.id):
            # The gateway waited for it: the token arrives here once the event has occurred.
            self._leave(token, node)
            return
        self._wait(token)
        self._listen(token, node)

    def _event_gateway(self, token: Token, gateway: EventBasedGateway) -> None:
        """The token waits at the gateway; on its behalf every catch event after it listens
        (each timer job and subscription names its catch event, so a trigger knows which won)."""
        self._wait(token)
        for flow_id in gateway.outgoing:
            event = self.model.node(self.model.flow(flow_id).target)
            assert isinstance(event, IntermediateCatchEvent)  # see model.validate
            self._listen(token, event)

    def _attach_boundary_events(self, token: Token, activity: Node) -> None:
        """Timers, messages and signals on the activity's edge start listening for its token."""
        for boundary in self.model.boundary_events(activity.id):
            self._listen(token, boundary)

    def _listen(
        self, token: Token | None, event: IntermediateCatchEvent | BoundaryEvent | StartEvent
    ) -> None:
        """The wait that fires `event` for `token`: its timer's job, or its message's or
        signal's subscription. An event subprocess's start event listens for its scope's token
        (None: the process, and the rows name no token)."""
        run = self.run
        if event.timer is not None:
            retries = waits.retries_of(event.retry_cycle, self.default_retries)
            values = run.values_for(token)
            run.add_job(
                waits.timer_job(
                    event.timer,
                    token.id if token is not None else None,
                    event.id,
                    values,
                    run.now,
                    retries,
                    limits=self.timer_limits,
                    context=self._context(token, values),
                    priority=self._job_priority(event, values, token),
                )
            )
        elif event.message_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.MESSAGE,
                    self._event_name(token, event.message_name),
                    token,
                    event.id,
                    run.now,
                )
            )
        elif event.signal_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.SIGNAL,
                    self._event_name(token, event.signal_name),
                    token,
                    event.id,
                    run.now,
                )
            )
        elif event.conditional is not None and not isinstance(event, StartEvent):
            # An event subprocess's conditional start waits through conditions.open_scope.
            assert token is not None
            conditions.listen(self, token, event)

    def _enter_scope(self, scope_token: Token, start: StartEvent) -> None:
        """A subprocess's scope starts (a token enters it, an iteration runs it, an event
        subprocess's run begins): its event subprocesses listen while it is active."""
        self._open_scope_events(scope_token)
        super()._enter_scope(scope_token, start)

    def _open_scope_events(self, scope_token: Token | None) -> None:
        """The scope of `scope_token` (None: the process) starts: the start event of each of its
        event subprocesses that waits for something (a timer, a message, a signal) listens on
        its behalf. `ScopeMoves._close_scope_events` is the other end. (Conditional starts wait
        through engine/semantics/conditions.py `open_scope`, which also evaluates them at once.)"""
        scope_id = scope_token.node_id if scope_token is not None else None
        for sub in self.model.event_subprocesses(scope_id):
            for start in self.model.children(sub.id):
                if isinstance(start, StartEvent) and start.conditional is None:
                    self._listen(scope_token, start)

    def _scope_event(
        self,
        start: StartEvent,
        owner_id: UUID | None,
        variables: Mapping[str, Any] | None = None,
        local_variables: Mapping[str, Any] | None = None,
    ) -> Token | None:
        """The event an event subprocess's start event listened for occurred in the scope owned
        by the token `owner_id` (None: the process): `variables` are set from the scope, the run
        starts and `local_variables` become its locals; the run's token. A trigger that comes
        after its scope ended does nothing: None (the caller drops what listened)."""
        scope_token = self.run.tokens.get(owner_id) if owner_id is not None else None
        late = owner_id is not None and (scope_token is None or not scope_token.is_live)
        if late or self.run.instance.state.is_final:
            return None
        self.set_variables(variables, scope_token)
        assert start.parent is not None
        sub = self.model.node(start.parent)
        assert isinstance(sub, SubProcess)
        run_token = self._start_event_subprocess(sub, start, owner_id)
        set_locals(self.run, run_token, local_variables)
        return run_token

    def _trigger_boundary(self, boundary: BoundaryEvent, activity_token: Token) -> None:
        """Interrupting: the activity's token and everything inside it end, its work retires.
        Either way a new token leaves through the boundary event."""
        if boundary.cancel_activity:
            self._kill(activity_token)
        token = self.run.new_token(
            boundary.id,
            parent_id=activity_token.id,
            scope_id=activity_token.scope_id,
            parallel_group=activity_token.parallel_group,
            mode=activity_token.mode,
        )
        self._activate(token)
        self._queue.append((token, boundary.id, None, False))

    def _reschedule(self, job: JobRow) -> None:
        assert job.timer_text is not None
        left = job.repetitions_left
        if left is not None and left <= 1:
            job.deleted = True
            return
        scheduled = job.due_at - timedelta(milliseconds=job.due_shift_ms)
        due = timers.next_cycle_due(job.timer_text, scheduled, self.run.now, self.timer_limits.zone)
        if due is None:  # a cron cycle whose years are over
            job.deleted = True
            return
        job.due_at = due
        job.due_shift_ms = 0
        job.repetitions_left = None if left is None else left - 1
        job.lock_owner = None
        job.lock_expires_at = None
        job.error_message = None  # this firing succeeded: the job is no longer retrying
        job.error_details = None
        job.dirty = True

    def _end(self, token: Token, node: EndEvent) -> None:
        if node.is_error:
            self._throw(token, node.error_code or "", "")
            return
        self.scripts.execution_event(token, node, "end")
        self._close_visit(token, VisitState.COMPLETED)
        token.move_to(TokenState.COMPLETED, self.run.now)
        if node.terminate:
            if token.scope_id is None:
                self.terminate_all(instance_state=InstanceState.COMPLETED)
                return
            self._kill_scope(token.scope_id)
        self._ended(token)

    def _throw(self, token: Token, code: str, message: str) -> None:
        caught = self._catcher(
            token,
            lambda boundary: boundary.is_error and boundary.error_code in (None, code),
            lambda sub: self._error_start(sub, code),
        )
        if caught is not None:
            current, catcher, sub = caught
            if isinstance(catcher, BoundaryEvent):
                self.run.emit("error.caught", current)
                self._trigger_boundary(catcher, current)
            else:
                assert sub is not None
                self._start_event_subprocess(sub, catcher, current.scope_id)
            self._set_caught_error(catcher, current, code, message)
            return
        if self.run.instance.super_instance_id is not None:
            # Uncaught in a called instance: thrown again at its caller's call activity, which
            # ends this instance (see engine/commands/family.py).
            self.run.effects.append(ThrownToCaller("error", code, message))
            return
        if self.unhandled_error == "incident":
            self.fail(token, "unhandledBpmnError", f"BPMN error '{code}' was not caught: {message}")
            return
        # As in Camunda 7 by default: an uncaught BPMN error ends the execution that threw it,
        # and with it the activity's work: its open task, its boundary events' jobs and
        # subscriptions.
        self._close_visit(token, VisitState.COMPLETED)
        token.move_to(TokenState.COMPLETED, self.run.now)
        self.run.retire_work(token)
        self._ended(token)

    def _catcher(
        self,
        token: Token,
        catches: Callable[[BoundaryEvent], bool],
        start_of: Callable[[SubProcess], StartEvent | None],
    ) -> tuple[Token, BoundaryEvent | StartEvent, SubProcess | None] | None:
        """What catches a throw where `token` is, searched outwards scope by scope (an iteration
        of a multi-instance activity by its body's boundary events): a boundary event of an
        enclosing activity that `catches` it, or the start event `start_of` finds in an event
        subprocess (named third; None for a boundary event); with the token whose activity or
        scope catches it. None: nothing does."""
        current = token
        while True:
            host = self._host_of(current)
            if host is not None:
                current = host
                continue
            node = self.model.node(current.node_id)
            for boundary in self.model.boundary_events(node.id):
                if catches(boundary):
                    return current, boundary, None
            for sub in self.model.event_subprocesses(node.parent):
                start = start_of(sub)
                if start is not None:
                    return current, start, sub
            if current.scope_id is None:
                return None
            current = self.run.tokens[current.scope_id]

    def _set_caught_error(
        self, catcher: StartEvent | BoundaryEvent, caught_at: Token, code: str, message: str
    ) -> None:
        """The caught error's code and message go to the variables the catching event names
        (camunda:errorCodeVariable, camunda:errorMessageVariable; no message is null), set as
        Camunda sets them: by setVariable from the scope that handles the error (the scope of
        `caught_at`, the token whose activity or scope caught it)."""
        caught = [
            (catcher.error_code_variable, code),
            (catcher.error_message_variable, message or None),
        ]
        scope = self.run.tokens[caught_at.scope_id] if caught_at.scope_id else None
        self.set_variables({name: value for name, value in caught if name}, scope)

    def _error_start(self, sub: SubProcess, code: str) -> StartEvent | None:
        for node in self.model.children(sub.id):
            if isinstance(node, StartEvent) and node.is_error and node.error_code in (None, code):
                return node
        return None
