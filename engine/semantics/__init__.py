"""Token semantics: how tokens move through nodes. No SQL, no clock, no IO of its own.

`Advance` works on one `InstanceRun` (the locked instance in memory). Every entry point runs the
tokens it is given through automatic nodes until each one waits or ends, then completes scopes and
the instance when no live token is left in them. Service-task handlers are the only foreign code it
calls.

The node families' moves live in the modules of this package (base, scopes, events, tasks,
gateways, loops, throws, calls, compensation, transactions); `Advance` combines them with the
entry points and the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core.runtime import JobRow, Subscription, Token, UserTaskRow
from engine.errors import Conflict, InterlockError
from engine.model import (
    ACTIVITY_TYPES,
    BoundaryEvent,
    BusinessRuleTask,
    CallActivity,
    EndEvent,
    EventBasedGateway,
    ExclusiveGateway,
    InclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ReceiveTask,
    ScriptTask,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    SubProcess,
    UserTask,
)
from engine.semantics import conditions, waits
from engine.semantics.base import Step, UnhandledError
from engine.semantics.calls import CallMoves
from engine.semantics.gateways import GatewayMoves
from engine.semantics.loops import LoopMoves
from engine.semantics.mappings import map_inputs, set_locals
from engine.semantics.rules import RuleMoves
from engine.semantics.tasks import TaskMoves
from engine.semantics.throws import ThrowMoves
from engine.semantics.transactions import TransactionMoves
from engine.states import InstanceState, JobKind, SubscriptionKind, TokenState

__all__ = ["Advance", "Step", "UnhandledError"]


class Advance(
    TransactionMoves, LoopMoves, TaskMoves, ThrowMoves, GatewayMoves, CallMoves, RuleMoves
):
    """Runs tokens through the nodes of one locked instance; the entry points of the commands."""

    def start(self, start: StartEvent) -> Token:
        """A new instance: one token enters through `start`."""
        run = self.run
        run.instance.move_to(InstanceState.ACTIVE, run.now)
        run.emit("instance.started")
        token = run.new_token(start.id)
        self._activate(token)
        self.scripts.execution_event(token, self.model, "start")
        self._open_scope_events(None)  # the process's event subprocesses listen while it runs
        self._queue.append((token, start.id, None, False))
        conditions.open_scope(self, None)
        self._drain()
        return token

    def resume(
        self,
        token: Token,
        variables: Mapping[str, Any] | None = None,
        local_variables: Mapping[str, Any] | None = None,
    ) -> None:
        """A waiting token's wait is over (task completed, message arrived): it leaves its node.
        `local_variables` become locals of its activity instance first (an output parameter
        may copy them out)."""
        token.move_to(TokenState.EXECUTING, self.run.now)
        self.set_variables(variables, token)
        set_locals(self.run, token, local_variables)
        self._leave(token, self.model.node(token.node_id))
        self._drain()

    def signal(self, token: Token, variables: Mapping[str, Any] | None = None) -> None:
        """Camunda's RuntimeService.signal: the waiting `token` leaves its node as if its wait
        were over, `variables` set first as a completion sets them. What it waited on goes with
        it: its user or external task retires, its jobs and subscriptions are dropped. Raises
        Conflict when the token waits where no signal continues it (`signal_refusal`)."""
        problem = self.signal_refusal(token)
        if problem is not None:
            raise Conflict(
                f"execution {token.id} cannot be signalled: {problem}", node_id=token.node_id
            )
        self.run.retire_work(token)
        self.resume(token, variables)

    def signal_refusal(self, token: Token) -> str | None:
        """Why `token` cannot be signalled, or None: only a token waiting at a receive task, an
        intermediate catch event, a user task or an external service task can (Camunda's
        signallable activities); a scope, a call, a loop's body or a join waits for its
        content instead."""
        node = self.model.node(token.node_id)
        if token.state != TokenState.WAITING:
            return f"it is {token.state.value} at '{node.id}', not waiting"
        scope = self.run.tokens.get(token.scope_id) if token.scope_id is not None else None
        if node.loop is not None and (scope is None or scope.node_id != node.id):
            return f"it is the multi-instance body of '{node.id}': signal one of its instances"
        external = isinstance(node, ServiceTask) and node.is_external
        if isinstance(node, ReceiveTask | IntermediateCatchEvent | UserTask) or external:
            return None
        return f"it waits at '{node.id}' ({node.kind.value}), which a signal does not continue"

    def complete_task(
        self, task: UserTaskRow, token: Token, variables: Mapping[str, Any] | None = None
    ) -> None:
        """A user task is completed with `variables`: its complete listeners run, then its token
        leaves the task."""
        self.set_variables(variables, token)
        node = self.model.node(task.node_id)
        if isinstance(node, UserTask):
            self.scripts.task_event(task, token, node, "complete")
        self.resume(token)

    def assigned(self, task: UserTaskRow) -> None:
        """A user task got a new assignee: its assignment listeners run."""
        node = self.model.node(task.node_id)
        if isinstance(node, UserTask):
            self.scripts.task_event(task, self.run.tokens[task.token_id], node, "assignment")

    def execute_ready(self, token: Token) -> None:
        """A claimed token (Ready -> Executing by compare-and-swap) runs the node it was parked
        at; parked after the node (`camunda:asyncAfter`), it takes the node's outgoing flows."""
        kinds = {job.kind: job for job in self.run.jobs.values() if job.token_id == token.id}
        if JobKind.ASYNC_AFTER in kinds:
            node = self.model.node(token.node_id)
            self.run.drop_listeners(token)
            self._follow(token, node, self._flows_after(token, node))
        else:
            before = kinds.get(JobKind.ASYNC)
            via = before.flow_id if before is not None else None
            self._queue.append((token, token.node_id, via, True))
        self._drain()

    def _flows_after(self, token: Token, node: Node) -> list[SequenceFlow] | None:
        """The flows a token parked after `node` takes: a gateway chooses them now (with the
        variables as they are when the job runs); any other node takes every outgoing flow whose
        condition holds (None)."""
        if isinstance(node, ExclusiveGateway):
            return [self._choose(token, node)]
        if isinstance(node, InclusiveGateway):
            return self._inclusive_flows(token, node)
        if isinstance(node, ParallelGateway):
            return [self.model.flow(f) for f in node.outgoing]
        return None

    def fire_timer(self, job: JobRow) -> None:
        """A timer job is due: a catch event's token moves on, a boundary event triggers, or an
        event subprocess starts (a cycle of a non-interrupting one fires again later)."""
        node = self.model.node(job.node_id)
        if isinstance(node, StartEvent):
            started = self._scope_event(node, job.token_id)
            if started is not None and not node.interrupting and job.timer_text is not None:
                self._reschedule(job)
            else:
                job.deleted = True
            self._drain()
            return
        assert job.token_id is not None
        token = self.run.tokens[job.token_id]
        non_interrupting = isinstance(node, BoundaryEvent) and not node.cancel_activity
        if non_interrupting and job.timer_text is not None:
            self._reschedule(job)
        else:
            job.deleted = True
        self._caught(token, node)

    def deliver(
        self,
        subscription: Subscription,
        variables: Mapping[str, Any] | None,
        local_variables: Mapping[str, Any] | None = None,
    ) -> None:
        """A message or signal reaches a waiting subscription; `local_variables` become locals
        of the token that receives it."""
        node = self.model.node(subscription.node_id)
        if isinstance(node, StartEvent):  # an event subprocess's: it stays unless interrupting
            started = self._scope_event(node, subscription.token_id, variables, local_variables)
            if started is None:
                subscription.deleted = True
            self._drain()
            return
        assert subscription.token_id is not None
        token = self.run.tokens[subscription.token_id]
        self.set_variables(variables, token)
        set_locals(self.run, token, local_variables)
        if not isinstance(node, BoundaryEvent) or node.cancel_activity:
            subscription.deleted = True
        self._caught(token, node)

    def _caught(self, token: Token, node: Node) -> None:
        """The event of `node` that `token` waited for occurred: a boundary event triggers, a
        catch event lets the token go on."""
        if isinstance(node, BoundaryEvent):
            self._trigger_boundary(node, token)
            self._drain()
        else:
            self._occurred(token, node.id)

    def _occurred(self, token: Token, event_id: str) -> None:
        """The event `event_id` the waiting token listened for occurred. At an event-based gateway
        it wins: leaving the gateway drops every other job and subscription of the token, and
        the token passes through the winning catch event. Elsewhere the token leaves its node."""
        gateway = self.model.node(token.node_id)
        if not isinstance(gateway, EventBasedGateway):
            self.resume(token)
            return
        [flow] = [
            self.model.flow(f) for f in gateway.outgoing if self.model.flow(f).target == event_id
        ]
        token.move_to(TokenState.EXECUTING, self.run.now)
        self._leave(token, gateway, [flow])
        self._drain()

    def throw_error(self, token: Token, code: str, message: str = "") -> None:
        """A BPMN error thrown where `token` is: the nearest matching boundary error event or
        error event subprocess, searching outwards scope by scope, catches it."""
        self._throw(token, code, message)
        self._drain()

    def throw_escalation(self, token: Token, code: str) -> None:
        """An escalation that a called instance did not catch, thrown again at `token`, its
        caller's token at the call activity: the call activity's escalation boundary events
        first, then outwards scope by scope, as for one thrown here."""
        self._escalate(token, code, None)
        self._drain()

    def _drain(self) -> None:
        """Run the queued tokens until each waits or ends; then converging inclusive gateways
        whose last possible arrival has come or gone fire, and their tokens run in turn."""
        while True:
            while self._queue:
                token, node_id, via, skip_async = self._queue.popleft()
                if token.is_live:
                    self._arrive(token, self.model.node(node_id), via, skip_async)
            if self.run.instance.state.is_final:
                break
            if not conditions.dispatch(self) and not self._fire_inclusive_joins():
                break
        if not self.run.instance.state.is_final and not self.run.has_live_tokens():
            self._close_scope_events(None)
            conditions.close_scope(self, None)
            self.scripts.execution_event(None, self.model, "end")
            self._forget_compensations()
            self._completed()

    def _arrive(self, token: Token, node: Node, via: str | None, skip_async: bool) -> None:
        run = self.run
        token.node_id = node.id
        token.dirty = True
        if node.async_before and not skip_async:
            self._park(token, node, JobKind.ASYNC, via)
            return
        self._open_visit(token, node, via)
        if node.loop is not None and self._loops(token, node):
            return  # a loop's body: its iterations run the activity, mappings and listeners
        map_inputs(run, token, node)  # input parameters first: start listeners see them
        self.scripts.execution_event(token, node, "start")
        if isinstance(node, ACTIVITY_TYPES) and node.loop is None:
            self._attach_boundary_events(token, node)
            if not conditions.settle(self, token):
                return
        if isinstance(node, IntermediateThrowEvent | EndEvent) and node.compensation is not None:
            self._throw_compensation(token, node)
        elif isinstance(node, IntermediateThrowEvent | EndEvent) and node.is_implemented:
            self._service_task(token, node)  # a message throw event: run like a service task
        elif isinstance(node, IntermediateThrowEvent):
            self._throw_event(token, node)
        elif isinstance(node, IntermediateCatchEvent) and node.link_name is not None:
            self._leave(token, node)  # a link's token arrives here and goes straight on
        elif isinstance(node, (StartEvent, NoneTask, BoundaryEvent)):
            self._leave(token, node)
        elif isinstance(node, ServiceTask):
            self._service_task(token, node)
        elif isinstance(node, BusinessRuleTask):
            self._business_rule_task(token, node)
        elif isinstance(node, ScriptTask):
            self.scripts.script_task(token, node)
            if conditions.settle(self, token):
                self._leave(token, node)
        elif isinstance(node, UserTask):
            self._wait(token)
            values = run.values_for(token)
            task = waits.user_task(node, token, values, run.now, self._context(token, values))
            self._name_visit(token, task.name)
            run.tasks[task.id] = task
            self.scripts.task_event(task, token, node, "create")
        elif isinstance(node, ReceiveTask):
            self._wait(token)  # with no message, until its execution is signalled
            if node.message_name is not None:
                run.add_subscription(
                    waits.subscription(
                        SubscriptionKind.MESSAGE,
                        self._event_name(token, node.message_name),
                        token,
                        node.id,
                        run.now,
                    )
                )
        elif isinstance(node, IntermediateCatchEvent):
            self._catch(token, node)
        elif isinstance(node, CallActivity):
            self._call(token, node)
        elif isinstance(node, SubProcess):
            self._wait(token)
            self._enter_scope(token, self.model.none_start_of(node.id))
        elif isinstance(node, EndEvent):
            self._end(token, node)
        elif isinstance(node, ExclusiveGateway):
            self._leave(token, node, [self._choose(token, node)])
        elif isinstance(node, EventBasedGateway):
            self._event_gateway(token, node)
        elif isinstance(node, InclusiveGateway) and node.is_join:
            self._inclusive_arrive(token, node, via)
        elif isinstance(node, InclusiveGateway):
            self._leave(token, node, self._inclusive_flows(token, node))
        elif isinstance(node, ParallelGateway) and node.is_join:
            self._join(token, node, via)
        elif isinstance(node, ParallelGateway):
            self._leave(token, node, [self.model.flow(f) for f in node.outgoing])
        else:  # pragma: no cover - deployment refuses models with other node kinds
            raise InterlockError(f"node kind {node.kind.value} cannot execute", node_id=node.id)
