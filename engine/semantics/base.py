"""The state of one advance and the moves every node family shares: leaving a node along its
flows (forking when there are several), ending a token, visits and variables."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

from engine.core.effects import CalledCompleted
from engine.core.handlers import HandlerRegistry
from engine.core.runtime import IncidentRow, InstanceRun, Token, Visit
from engine.db.ids import new_id
from engine.errors import ExpressionError
from engine.language import timers
from engine.language.composite import as_text, evaluate_text, has_expression
from engine.language.expression_context import ExpressionContext, TaskFacts, context_for
from engine.language.variables import infer
from engine.model import Node, ProcessModel, ScriptCondition, SequenceFlow
from engine.scripting import DEFAULT_LIMITS as DEFAULT_SCRIPT_LIMITS
from engine.scripting import ScriptLimits
from engine.semantics import waits
from engine.semantics.listeners import Scripts
from engine.semantics.mappings import map_outputs
from engine.states import IncidentState, InstanceState, JobKind, TokenState, VisitState

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
        script_limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS,
        decisions: Any = None,
    ) -> None:
        self.run = run
        # Evaluates a business rule task's decision in the command's transaction (see
        # engine/semantics/rules.py); None where no transaction is at hand.
        self.decisions = decisions
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
        # Listeners, script tasks and JavaScript conditions, with the command's isolate.
        self.scripts = Scripts(
            run, handlers, connection, optimistic=optimistic, limits=script_limits
        )

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
        if node.loop is None:  # a loop's body has none: its iterations ran them
            self.scripts.execution_event(token, node, "end")
            map_outputs(self.run, token, node)
        self._close_visit(token, VisitState.COMPLETED)
        self.run.drop_listeners(token)
        if node.async_after:
            self._park(token, node, JobKind.ASYNC_AFTER)
            return
        self._follow(token, node, flows)

    def _park(self, token: Token, node: Node, kind: JobKind, via: str | None = None) -> None:
        """The token waits Ready at `node` for an asynchronous continuation job: before the node
        runs (`camunda:asyncBefore`) or after its work is done (`camunda:asyncAfter`). The job is
        a row: the continuation survives a restart, and its failure retries only the job."""
        run = self.run
        token.move_to(TokenState.READY, run.now)
        retries = waits.retries_of(node.retry_cycle, self.default_retries)
        priority = self._job_priority(node, None, token)
        run.add_job(waits.async_job(token, node.id, retries, run.now, kind, via, priority))
        run.emit("token.ready", token)

    def _follow(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None:
        """Follow `flows` out of `node` (see `_leave`)."""
        run = self.run
        if flows is None:
            outgoing = [self.model.flow(f) for f in node.outgoing]
            values = run.values_for(token) if any(f.condition is not None for f in outgoing) else {}
            flows = [f for f in outgoing if f.condition is None or self._holds(f, values, token)]
        for flow in flows:
            self.scripts.execution_event(token, flow, "take", activity=node)
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

    def _holds(
        self, flow: SequenceFlow, values: Mapping[str, Any], token: Token | None = None
    ) -> bool:
        assert flow.condition is not None
        if isinstance(flow.condition, ScriptCondition):
            return self.scripts.holds(flow, flow.condition, token)
        try:
            return bool(flow.condition.evaluate(values, self._context(token, values)))
        except ExpressionError as exc:
            raise ExpressionError(
                f"condition of sequence flow '{flow.id}' failed: {exc.message}", flow_id=flow.id
            ) from exc

    def _job_priority(
        self, node: Node, values: Mapping[str, Any] | None, token: Token | None
    ) -> int:
        """The priority of a job of `node`: its camunda:jobPriority, else its process's (an
        expression resolved over the variables `token` sees, or `values`)."""
        priority = node.job_priority if node.job_priority is not None else self.model.job_priority
        if not isinstance(priority, str):
            return priority or 0
        if values is None:
            values = self.run.values_for(token)
        context = self._context(token, values)
        return waits.resolve_priority(
            priority, node.id, "camunda:jobPriority", values, context, self.run.now
        )

    def _context(
        self, token: Token | None, values: Mapping[str, Any], task: TaskFacts | None = None
    ) -> ExpressionContext:
        """What an expression evaluated for `token` reaches beyond `values` (see
        `context_for`)."""
        return context_for(self.run, token, values, task)

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

    def _completed(self) -> None:
        """The instance completed (its last token ended, or a terminate end event ended them
        all); a called instance's caller goes on, in the same transaction."""
        run = self.run
        if run.instance.state is not InstanceState.COMPLETED:
            run.instance.move_to(InstanceState.COMPLETED, run.now)
        run.emit("instance.completed")
        if run.instance.super_instance_id is not None:
            run.effects.append(CalledCompleted())

    def _activate(self, token: Token) -> None:
        token.move_to(TokenState.READY, self.run.now)
        token.move_to(TokenState.EXECUTING, self.run.now)

    def _wait(self, token: Token) -> None:
        token.move_to(TokenState.WAITING, self.run.now)

    def _open_visit(self, token: Token, node: Node, via: str | None = None) -> None:
        """The token visits `node`, entered by the sequence flow `via` (None: by no flow)."""
        visit = Visit(
            id=new_id(),
            token_id=token.id,
            node_id=node.id,
            node_name=self._display_name(token, node),
            node_type=node.kind.value,
            state=VisitState.ACTIVE,
            started_at=self.run.now,
            mode=token.mode,
            flow_id=via,
            is_new=True,
        )
        self.run.add_visit(visit)
        token.visit_id = visit.id

    def _display_name(self, token: Token, node: Node) -> str | None:
        """The name the visit shows: a name with `${...}` parts evaluated over what the token
        sees as it enters (`Review ${loopCounter}`); one that cannot be evaluated there (it names
        a variable the activity does not have yet) shows as written. A user task's visit shows
        its task's name (see `_name_visit`)."""
        name = node.name
        if name is None or not has_expression(name):
            return name
        values = self.run.values_for(token)
        try:
            return as_text(evaluate_text(name, values, self._context(token, values)))
        except ExpressionError:
            return name

    def _event_name(self, token: Token | None, name: str) -> str:
        """A message or signal name as the event uses it: `order-${orderId}` evaluated over what
        `token` sees (None: the instance's variables); a plain name as it is."""
        if not has_expression(name):
            return name
        values = self.run.values_for(token)
        return as_text(evaluate_text(name, values, self._context(token, values)))

    def _name_visit(self, token: Token, name: str | None) -> None:
        """The token's open visit shows `name` (a user task's evaluated name)."""
        visit = self.run.visit(token.visit_id) if token.visit_id is not None else None
        if visit is not None:
            visit.node_name = name

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
