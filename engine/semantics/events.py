"""Events: catch events, boundary events, end events and BPMN errors searched scope by scope."""

from __future__ import annotations

from engine import timers, waits
from engine.model import (
    BoundaryEvent,
    EndEvent,
    IntermediateCatchEvent,
    Node,
    StartEvent,
    SubProcess,
)
from engine.runtime import JobRow, Token
from engine.semantics.scopes import ScopeMoves
from engine.states import InstanceState, SubscriptionKind, TokenState, VisitState


class EventMoves(ScopeMoves):
    def _catch(self, token: Token, node: IntermediateCatchEvent) -> None:
        self._wait(token)
        self._listen(token, node)

    def _attach_boundary_events(self, token: Token, activity: Node) -> None:
        """Timers, messages and signals on the activity's edge start listening for its token."""
        for boundary in self.model.boundary_events(activity.id):
            self._listen(token, boundary)

    def _listen(self, token: Token, event: IntermediateCatchEvent | BoundaryEvent) -> None:
        """The wait that fires `event` for `token`: its timer's job, or its message's or
        signal's subscription."""
        run = self.run
        if event.timer is not None:
            retries = waits.retries_of(event.retry_cycle, self.default_retries)
            run.add_job(
                waits.timer_job(
                    event.timer,
                    token.id,
                    event.id,
                    run.values_for(token),
                    run.now,
                    retries,
                    limits=self.timer_limits,
                )
            )
        elif event.message_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.MESSAGE, event.message_name, token, event.id, run.now
                )
            )
        elif event.signal_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.SIGNAL, event.signal_name, token, event.id, run.now
                )
            )

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
        job.due_at = timers.next_due(timers.parse_cycle(job.timer_text), job.due_at)
        job.repetitions_left = None if left is None else left - 1
        job.lock_owner = None
        job.lock_expires_at = None
        job.dirty = True

    def _end(self, token: Token, node: EndEvent) -> None:
        if node.is_error:
            self._throw(token, node.error_code or "", "")
            return
        self._close_visit(token, VisitState.COMPLETED)
        token.move_to(TokenState.COMPLETED, self.run.now)
        if node.terminate:
            if token.scope_id is None:
                self.terminate_all(instance_state=InstanceState.COMPLETED)
                return
            self._kill_scope(token.scope_id)
        self._ended(token)

    def _throw(self, token: Token, code: str, message: str) -> None:
        current = token
        while True:
            host = self._host_of(current)
            if host is not None:  # the body's boundary events catch an iteration's errors
                current = host
                continue
            node = self.model.node(current.node_id)
            for boundary in self.model.boundary_events(node.id):
                if boundary.is_error and boundary.error_code in (None, code):
                    self.run.emit("error.caught", current)
                    self._trigger_boundary(boundary, current)
                    return
            for sub in self.model.event_subprocesses(node.parent):
                start = self._error_start(sub, code)
                if start is not None:
                    self._start_event_subprocess(sub, start, current.scope_id)
                    return
            if current.scope_id is None:
                break
            current = self.run.tokens[current.scope_id]
        if self.unhandled_error == "incident":
            self.fail(token, "unhandledBpmnError", f"BPMN error '{code}' was not caught: {message}")
            return
        # As in Camunda 7 by default: an uncaught BPMN error ends the execution that threw it.
        self._close_visit(token, VisitState.COMPLETED)
        token.move_to(TokenState.COMPLETED, self.run.now)
        self._ended(token)

    def _error_start(self, sub: SubProcess, code: str) -> StartEvent | None:
        for node in self.model.children(sub.id):
            if isinstance(node, StartEvent) and node.is_error and node.error_code in (None, code):
                return node
        return None
