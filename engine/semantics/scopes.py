"""Scopes: entering an embedded subprocess, and ending tokens early with everything inside them
(cancellation, terminate end events, interrupting events)."""

from __future__ import annotations

from typing import Any

from engine.model import StartEvent, SubProcess, UserTask
from engine.runtime import Token
from engine.semantics import conditions
from engine.semantics.base import Moves
from engine.states import InstanceState, TaskState, TokenState, VisitState


class ScopeMoves(Moves):
    def terminate_all(self, *, instance_state: InstanceState) -> None:
        """End every live token (cancellation or a terminate end event) and retire their work."""
        run = self.run
        for token in run.live_tokens():
            self._kill(token)
        for key in list(run.joins):
            self._delete_join(key)
        conditions.close_scope(self, None)
        self.scripts.execution_event(None, self.model, "end")
        if instance_state is InstanceState.TERMINATED:
            run.instance.move_to(InstanceState.TERMINATING, run.now)
        run.instance.move_to(instance_state, run.now)
        run.emit(f"instance.{instance_state.value.lower()}")

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

    def _start_event_subprocess(self, sub: SubProcess, start: StartEvent, scope_id: Any) -> None:
        """An event subprocess of the scope `scope_id` (None: the process) starts through `start`.
        An interrupting one first ends everything else in its scope; a non-interrupting one runs
        beside it (and may run many times at once)."""
        if start.interrupting:
            conditions.close_scope(self, scope_id)
        if start.interrupting and scope_id is None:
            for live in self.run.live_tokens():
                self._kill(live)
        elif start.interrupting:
            self._kill_scope(scope_id)
        scope_token = self.run.new_token(sub.id, scope_id=scope_id)
        self._activate(scope_token)
        scope_token.node_id = sub.id
        self._open_visit(scope_token, sub)
        self._wait(scope_token)
        self._enter_scope(scope_token, start)

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
