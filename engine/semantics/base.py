"""The state of one advance and the moves every node family shares: leaving a node along its
flows (forking when there are several), ending a token, visits and variables."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

from engine import timers
from engine.errors import ExpressionError
from engine.handlers import HandlerRegistry
from engine.ids import new_id
from engine.model import Node, ProcessModel, SequenceFlow
from engine.runtime import IncidentRow, InstanceRun, Token, Visit
from engine.states import IncidentState, TokenState, VisitState
from engine.variables import infer

# A token travelling to a node: (token, node id, flow it arrived by, skip the async-before park).
Step = tuple[Token, str, str | None, bool]
UnhandledError = Literal["end", "incident"]


class Moves:
    """What an advance holds, and the moves all node families make."""

    def __init__(
        self,
        run: InstanceRun,
        model: ProcessModel,
        handlers: HandlerRegistry,
        connection: Any = None,
        *,
        optimistic: bool = False,
        default_retries: int = 3,
        unhandled_error: UnhandledError = "end",
        timer_limits: timers.TimerLimits = timers.DEFAULT_LIMITS,
    ) -> None:
        self.run = run
        self.model = model
        self.handlers = handlers
        self.connection = connection
        # Handlers may write with the connection, which an optimistic attempt has no
        # transaction on: reaching one sends the command back to run under the lock.
        self.optimistic = optimistic
        self.default_retries = default_retries
        self.unhandled_error = unhandled_error
        self.timer_limits = timer_limits
        self._queue: deque[Step] = deque()

    def fail(self, token: Token, incident_type: str, message: str, **links: Any) -> IncidentRow:
        """The token's path stops with an incident; the rest of the instance keeps running."""
        run = self.run
        token.move_to(TokenState.FAILED, run.now)
        incident = IncidentRow(
            id=new_id(),
            type=incident_type,
            token_id=token.id,
            node_id=token.node_id,
            message=message,
            state=IncidentState.OPEN,
            created_at=run.now,
            is_new=True,
            **links,
        )
        run.open_incident(incident)
        return incident

    def set_variables(self, values: Mapping[str, Any] | None, token: Token | None = None) -> None:
        """Set `values` as Camunda's setVariable does from `token`: a name a scope the token
        sees already has is set there, any other in the root scope."""
        for name, value in (values or {}).items():
            self.run.set_visible(token, name, infer(value))

    def _leave(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None:
        """Complete the visit and follow `flows` (default: every outgoing flow whose condition
        holds). One flow: the token moves on. Several: it forks into children sharing a group.
        None: the token ends here."""
        run = self.run
        self._close_visit(token, VisitState.COMPLETED)
        run.drop_listeners(token)
        if flows is None:
            outgoing = [self.model.flow(f) for f in node.outgoing]
            values = run.values_for(token) if any(f.condition is not None for f in outgoing) else {}
            flows = [f for f in outgoing if f.condition is None or self._holds(f, values)]
        if not flows:
            token.move_to(TokenState.COMPLETED, run.now)
            self._ended(token)
            return
        if len(flows) == 1:
            self._queue.append((token, flows[0].target, flows[0].id, False))
            return
        group = new_id().hex[:12]
        if token.parallel_group:
            group = f"{token.parallel_group}.{group}"
        token.move_to(TokenState.COMPLETED, run.now)
        run.emit("token.forked", token)
        for flow in flows:
            child = run.new_token(
                flow.target,
                parent_id=token.id,
                parallel_group=group,
                scope_id=token.scope_id,
                mode=token.mode,
            )
            self._activate(child)
            self._queue.append((child, flow.target, flow.id, False))

    def _holds(self, flow: SequenceFlow, values: Mapping[str, Any]) -> bool:
        assert flow.condition is not None
        try:
            return bool(flow.condition.evaluate(values))
        except ExpressionError as exc:
            raise ExpressionError(
                f"condition of sequence flow '{flow.id}' failed: {exc.message}", flow_id=flow.id
            ) from exc

    def _ended(self, token: Token) -> None:
        """A token finished. When it was the last live one of its subprocess, the subprocess
        completes and its scope token leaves it."""
        scope_id = token.scope_id
        if scope_id is None:
            return
        if self.run.has_live_in_scope(scope_id):
            return
        scope_token = self.run.tokens[scope_id]
        if not scope_token.is_live:
            return
        scope_token.move_to(TokenState.EXECUTING, self.run.now)
        self._leave(scope_token, self.model.node(scope_token.node_id))

    def _activate(self, token: Token) -> None:
        token.move_to(TokenState.READY, self.run.now)
        token.move_to(TokenState.EXECUTING, self.run.now)

    def _wait(self, token: Token) -> None:
        token.move_to(TokenState.WAITING, self.run.now)

    def _open_visit(self, token: Token, node: Node) -> None:
        visit = Visit(
            id=new_id(),
            token_id=token.id,
            node_id=node.id,
            node_name=node.name,
            node_type=node.kind.value,
            state=VisitState.ACTIVE,
            started_at=self.run.now,
            is_new=True,
        )
        self.run.add_visit(visit)
        token.visit_id = visit.id

    def _close_visit(self, token: Token, state: VisitState) -> None:
        """End the token's open visit; a visit already loaded from the database is updated."""
        self.run.drop_locals(token.id)  # the activity instance ends: its locals vanish with it
        if token.visit_id is None:
            return
        run = self.run
        visit = run.visit(token.visit_id)
        if visit is None:
            visit = Visit(
                id=token.visit_id,
                token_id=token.id,
                node_id=token.node_id,
                state=state,
                started_at=run.now,
            )
            run.add_visit(visit)
        visit.state = state
        visit.ended_at = run.now
        token.visit_id = None
        token.dirty = True

    def _host_of(self, token: Token) -> Token | None:
        """The host of a looping activity whose iteration `token` is (its scope token, at the
        same node), or None."""
        if token.scope_id is None:
            return None
        host = self.run.tokens.get(token.scope_id)
        return host if host is not None and host.node_id == token.node_id else None

    def _delete_join(self, key: tuple[str, str]) -> None:
        join = self.run.pop_join(key)
        if join.version is not None:
            self.run.deleted_joins[key] = join.version
