"""Scopes: entering an embedded subprocess, starting an event subprocess, and ending tokens early
with everything inside them (cancellation, terminate end events, interrupting events).

A scope (the process, an embedded subprocess's run, an event subprocess's run, a multi-instance
iteration of a subprocess) listens for the start events of its event subprocesses exactly while
it is active: `EventMoves._open_scope_events` (engine/semantics/events.py) creates their jobs
and subscriptions when the scope starts, owned by the scope's token (None at process level: the
rows name the instance and no token). They go with the scope: the scope token's work retires when
it leaves or is killed (`InstanceRun.drop_listeners`), and `_close_scope_events` removes them
when the instance ends or an interrupting event subprocess starts in the scope."""

from __future__ import annotations

from typing import Any

from engine.core.effects import CalledInstanceEnds
from engine.core.runtime import Token
from engine.model import CallActivity, StartEvent, SubProcess, UserTask
from engine.semantics import conditions
from engine.semantics.base import Moves
from engine.states import InstanceState, SubscriptionKind, TaskState, TokenState, VisitState


class ScopeMoves(Moves):
    def terminate_all(self, *, instance_state: InstanceState) -> None:
        """End every live token (cancellation or a terminate end event) and retire their work."""
        run = self.run
        for token in run.live_tokens():
            self._kill(token)
        for key in list(run.joins):
            self._delete_join(key)
        self._close_scope_events(None)
        self._forget_compensations()
        conditions.close_scope(self, None)
        self.scripts.execution_event(None, self.model, "end")
        if instance_state is InstanceState.COMPLETED:
            self._completed()
            return
        run.instance.move_to(InstanceState.TERMINATING, run.now)
        run.instance.move_to(instance_state, run.now)
        run.emit(f"instance.{instance_state.value.lower()}")

    def _forget_compensations(self) -> None:
        """The instance ends: nothing of it can be compensated any more."""
        for row in self.run.subscriptions.values():
            if row.kind == SubscriptionKind.COMPENSATE:
                row.deleted = True
                self.run.drop_locals(row.id)  # a snapshot kept for it goes too

    def _enter_scope(self, scope_token: Token, start: StartEvent) -> None:
        child = self.run.new_token(
            start.id,
            parent_id=scope_token.id,
            scope_id=scope_token.id,
            mode=scope_token.mode,
        )
        self._activate(child)
        self._queue.append((child, start.id, None, False))
        conditions.open_scope(self, scope_token)

    def _start_event_subprocess(self, sub: SubProcess, start: StartEvent, scope_id: Any) -> Token:
        """An event subprocess of the scope `scope_id` (None: the process) starts through `start`;
        the token of its run, which waits in the scope while the run lasts. An interrupting one
        first ends everything else in its scope, and the scope's event subprocesses stop
        listening (as in Camunda); a non-interrupting one runs beside it (and may run many times
        at once)."""
        if start.interrupting:
            self._close_scope_events(scope_id)
            conditions.close_scope(self, scope_id)
        if start.interrupting and scope_id is None:
            for live in self.run.live_tokens():
                self._kill(live)
            for key in self.run.joins_in_scope(""):  # the process's joins go with its tokens
                self._delete_join(key)
        elif start.interrupting:
            self._kill_scope(scope_id)
        scope_token = self.run.new_token(sub.id, scope_id=scope_id)
        self._activate(scope_token)
        scope_token.node_id = sub.id
        self._open_visit(scope_token, sub)
        self._wait(scope_token)
        self._enter_scope(scope_token, start)
        return scope_token

    def _close_scope_events(self, owner_id: Any) -> None:
        """The scope owned by the token `owner_id` (None: the process) stops listening for the
        start events of its event subprocesses: their jobs and subscriptions go. The owner's
        other waits (a subprocess's boundary events) stay."""
        run = self.run
        for job in run.jobs.values():
            if job.token_id == owner_id and self._starts_event_subprocess(job.node_id):
                job.deleted = True
        for subscription in run.subscriptions.values():
            if subscription.token_id == owner_id and self._starts_event_subprocess(
                subscription.node_id
            ):
                subscription.deleted = True

    def _starts_event_subprocess(self, node_id: str) -> bool:
        """Whether `node_id` is the start event of an event subprocess."""
        if not self.model.has_node(node_id):
            return False
        node = self.model.node(node_id)
        if not isinstance(node, StartEvent) or node.parent is None:
            return False
        parent = self.model.node(node.parent)
        return isinstance(parent, SubProcess) and parent.triggered_by_event

    def _kill(self, token: Token) -> None:
        """End a live token early, with everything inside it if it is a subprocess's scope."""
        if not token.is_live:
            return
        self._kill_scope(token.id)
        self._task_deleted(token)
        if token.visit_id is not None and self.model.has_node(token.node_id):
            # As in Camunda, an activity ended early still runs its end listeners.
            self.scripts.execution_event(token, self.model.node(token.node_id), "end")
        self._close_visit(token, VisitState.TERMINATED)
        token.move_to(TokenState.TERMINATED, self.run.now)
        self.run.retire_work(token)
        self.run.emit("token.terminated", token)
        if self.model.has_node(token.node_id) and isinstance(
            self.model.node(token.node_id), CallActivity
        ):
            self.run.effects.append(CalledInstanceEnds(token.id))  # what it called ends too

    def _task_deleted(self, token: Token) -> None:
        """The delete listeners of the open user task the token leaves behind."""
        node = self.model.node(token.node_id) if self.model.has_node(token.node_id) else None
        if not isinstance(node, UserTask) or not node.task_listeners:
            return
        for task in list(self.run.tasks.values()):
            if task.token_id == token.id and task.state == TaskState.OPEN:
                self.scripts.task_event(task, token, node, "delete")

    def _kill_scope(self, scope_id: Any) -> None:
        for token in self.run.live_in_scope(scope_id):
            self._kill(token)
        for key in self.run.joins_in_scope(str(scope_id)):
            self._delete_join(key)
