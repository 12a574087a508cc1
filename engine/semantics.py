"""Token semantics: how tokens move through nodes. No SQL, no clock, no IO of its own.

`Advance` works on one `InstanceRun` (the locked instance in memory). Every entry point runs the
tokens it is given through automatic nodes until each one waits or ends, then completes scopes and
the instance when no live token is left in them. Service-task handlers are the only foreign code it
calls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any, Literal
from uuid import UUID

from engine import timers, waits
from engine.errors import (
    BpmnError,
    ExpressionError,
    HandlerError,
    InterlockError,
    InvariantViolation,
    InvariantViolationKind,
    NeedsTransaction,
    NoMatchingFlow,
)
from engine.handlers import HandlerRegistry, TaskContext
from engine.ids import new_id
from engine.model import (
    ACTIVITY_TYPES,
    BoundaryEvent,
    EndEvent,
    ExclusiveGateway,
    IntermediateCatchEvent,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    ReceiveTask,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    SubProcess,
    UserTask,
)
from engine.runtime import IncidentRow, InstanceRun, JobRow, Join, Subscription, Token, Visit
from engine.states import (
    IncidentState,
    InstanceState,
    SubscriptionKind,
    TokenState,
    VisitState,
)
from engine.variables import infer

# A token travelling to a node: (token, node id, flow it arrived by, skip the async-before park).
Step = tuple[Token, str, str | None, bool]
UnhandledError = Literal["end", "incident"]


class Advance:
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

    # -- entry points ---------------------------------------------------------------------------

    def start(self, start: StartEvent) -> Token:
        """A new instance: one token enters through `start`."""
        run = self.run
        run.instance.move_to(InstanceState.ACTIVE, run.now)
        run.emit("instance.started")
        token = run.new_token(start.id)
        self._activate(token)
        self._queue.append((token, start.id, None, False))
        self._drain()
        return token

    def resume(self, token: Token, variables: Mapping[str, Any] | None = None) -> None:
        """A waiting token's wait is over (task completed, message arrived): it leaves its node."""
        token.move_to(TokenState.EXECUTING, self.run.now)
        self.set_variables(variables)
        self._leave(token, self.model.node(token.node_id))
        self._drain()

    def execute_ready(self, token: Token) -> None:
        """A claimed token (Ready -> Executing by compare-and-swap) runs the node it was parked
        at."""
        self._queue.append((token, token.node_id, None, True))
        self._drain()

    def fire_timer(self, job: JobRow) -> None:
        """A timer job is due: a catch event's token moves on, or a boundary event triggers."""
        node = self.model.node(job.node_id)
        assert job.token_id is not None
        token = self.run.tokens[job.token_id]
        if isinstance(node, BoundaryEvent):
            if not node.cancel_activity and job.timer_text is not None:
                self._reschedule(job)
            else:
                job.deleted = True
            self._trigger_boundary(node, token)
            self._drain()
        else:
            job.deleted = True
            self.resume(token)

    def deliver(self, subscription: Subscription, variables: Mapping[str, Any] | None) -> None:
        """A message or signal reaches a waiting subscription."""
        node = self.model.node(subscription.node_id)
        assert subscription.token_id is not None
        token = self.run.tokens[subscription.token_id]
        self.set_variables(variables)
        if isinstance(node, BoundaryEvent):
            if node.cancel_activity:
                subscription.deleted = True
            self._trigger_boundary(node, token)
            self._drain()
        else:
            subscription.deleted = True
            self.resume(token)

    def throw_error(self, token: Token, code: str, message: str = "") -> None:
        """A BPMN error thrown where `token` is: the nearest matching boundary error event or
        error event subprocess, searching outwards scope by scope, catches it."""
        self._throw(token, code, message)
        self._drain()

    def terminate_all(self, *, instance_state: InstanceState) -> None:
        """End every live token (cancellation or a terminate end event) and retire their work."""
        run = self.run
        for token in run.live_tokens():
            self._kill(token)
        for key in list(run.joins):
            self._delete_join(key)
        if instance_state is InstanceState.TERMINATED:
            run.instance.move_to(InstanceState.TERMINATING, run.now)
        run.instance.move_to(instance_state, run.now)
        run.emit(f"instance.{instance_state.value.lower()}")

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

    # -- the loop ---------------------------------------------------------------------------------

    def _drain(self) -> None:
        while self._queue:
            token, node_id, via, skip_async = self._queue.popleft()
            if token.is_live:
                self._arrive(token, self.model.node(node_id), via, skip_async)
        if not self.run.instance.state.is_final and not self.run.has_live_tokens():
            self.run.instance.move_to(InstanceState.COMPLETED, self.run.now)
            self.run.emit("instance.completed")

    def _arrive(self, token: Token, node: Node, via: str | None, skip_async: bool) -> None:
        run = self.run
        token.node_id = node.id
        token.dirty = True
        if node.async_before and not skip_async:
            token.move_to(TokenState.READY, run.now)
            retries = waits.retries_of(node.retry_cycle, self.default_retries)
            run.add_job(waits.async_job(token, node.id, retries, run.now))
            run.emit("token.ready", token)
            return
        self._open_visit(token, node)
        if isinstance(node, ACTIVITY_TYPES):
            self._attach_boundary_events(token, node)
        if isinstance(node, (StartEvent, NoneTask, IntermediateThrowEvent, BoundaryEvent)):
            self._leave(token, node)
        elif isinstance(node, ServiceTask):
            self._service_task(token, node)
        elif isinstance(node, UserTask):
            self._wait(token)
            task = waits.user_task(node, token, run.variable_values(), run.now)
            run.tasks[task.id] = task
        elif isinstance(node, ReceiveTask):
            self._wait(token)
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.MESSAGE, node.message_name, token, node.id, run.now
                )
            )
        elif isinstance(node, IntermediateCatchEvent):
            self._catch(token, node)
        elif isinstance(node, SubProcess):
            self._wait(token)
            self._enter_scope(token, self.model.none_start_of(node.id))
        elif isinstance(node, EndEvent):
            self._end(token, node)
        elif isinstance(node, ExclusiveGateway):
            self._leave(token, node, [self._choose(node)])
        elif isinstance(node, ParallelGateway) and node.is_join:
            self._join(token, node, via)
        elif isinstance(node, ParallelGateway):
            self._leave(token, node, [self.model.flow(f) for f in node.outgoing])
        else:  # pragma: no cover - deployment refuses models with other node kinds
            raise InterlockError(f"node kind {node.kind.value} cannot execute", node_id=node.id)

    # -- node behaviours --------------------------------------------------------------------------

    def _service_task(self, token: Token, node: ServiceTask) -> None:
        run = self.run
        if node.is_external:
            self._wait(token)
            external = waits.external_task(node, token, run.now)
            run.external_tasks[external.id] = external
            return
        assert node.handler is not None
        if self.optimistic:
            raise NeedsTransaction(f"service task '{node.id}' runs a handler")
        handler = self.handlers.get(node.handler)
        if handler is None:
            raise HandlerError(
                f"no handler is registered under the name '{node.handler}' "
                f"(service task '{node.id}')",
                node_id=node.id,
                handler=node.handler,
            )
        context = TaskContext(
            instance_id=run.instance.id,
            business_key=run.instance.business_key,
            node_id=node.id,
            token_id=token.id,
            variables=run.variable_values(),
            connection=self.connection,
        )
        try:
            returned = handler(context)
        except BpmnError as error:
            self.set_variables(context.updates)
            self._throw(token, error.code, error.message)
            return
        except InterlockError:
            raise
        except Exception as exc:
            raise HandlerError(
                f"handler '{node.handler}' of service task '{node.id}' raised "
                f"{type(exc).__name__}: {exc}",
                node_id=node.id,
                handler=node.handler,
            ) from exc
        updates = dict(context.updates)
        if node.result_variable is not None:
            updates[node.result_variable] = returned
        elif isinstance(returned, Mapping):
            updates.update(returned)
        self.set_variables(updates)
        self._leave(token, node)

    def _catch(self, token: Token, node: IntermediateCatchEvent) -> None:
        run = self.run
        self._wait(token)
        if node.timer is not None:
            retries = waits.retries_of(node.retry_cycle, self.default_retries)
            run.add_job(
                waits.timer_job(
                    node.timer,
                    token.id,
                    node.id,
                    run.variable_values(),
                    run.now,
                    retries,
                    limits=self.timer_limits,
                )
            )
        elif node.message_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.MESSAGE, node.message_name, token, node.id, run.now
                )
            )
        elif node.signal_name is not None:
            run.add_subscription(
                waits.subscription(
                    SubscriptionKind.SIGNAL, node.signal_name, token, node.id, run.now
                )
            )

    def _attach_boundary_events(self, token: Token, activity: Node) -> None:
        """Timers, messages and signals on the activity's edge start listening for its token."""
        run = self.run
        for boundary in self.model.boundary_events(activity.id):
            if boundary.timer is not None:
                retries = waits.retries_of(boundary.retry_cycle, self.default_retries)
                run.add_job(
                    waits.timer_job(
                        boundary.timer,
                        token.id,
                        boundary.id,
                        run.variable_values(),
                        run.now,
                        retries,
                        limits=self.timer_limits,
                    )
                )
            elif boundary.message_name is not None:
                run.add_subscription(
                    waits.subscription(
                        SubscriptionKind.MESSAGE, boundary.message_name, token, boundary.id, run.now
                    )
                )
            elif boundary.signal_name is not None:
                run.add_subscription(
                    waits.subscription(
                        SubscriptionKind.SIGNAL, boundary.signal_name, token, boundary.id, run.now
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

    def _enter_scope(self, scope_token: Token, start: StartEvent) -> None:
        child = self.run.new_token(
            start.id,
            parent_id=scope_token.id,
            scope_id=scope_token.id,
            mode=scope_token.mode,
        )
        self._activate(child)
        self._queue.append((child, start.id, None, False))

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

    def _throw(self, token: Token, code: str, message: str) -> None:
        current = token
        while True:
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

    def _start_event_subprocess(self, sub: SubProcess, start: StartEvent, scope_id: Any) -> None:
        """An interrupting error event subprocess replaces everything else in its scope."""
        if scope_id is None:
            for live in self.run.live_tokens():
                self._kill(live)
        else:
            self._kill_scope(scope_id)
        scope_token = self.run.new_token(sub.id, scope_id=scope_id)
        self._activate(scope_token)
        scope_token.node_id = sub.id
        self._open_visit(scope_token, sub)
        self._wait(scope_token)
        self._enter_scope(scope_token, start)

    def _choose(self, gateway: ExclusiveGateway) -> SequenceFlow:
        values = self.run.variable_values()
        for flow_id in gateway.outgoing:
            if flow_id == gateway.default_flow:
                continue
            flow = self.model.flow(flow_id)
            if flow.condition is None or self._holds(flow, values):
                return flow
        if gateway.default_flow is not None:
            return self.model.flow(gateway.default_flow)
        raise NoMatchingFlow(
            f"exclusive gateway '{gateway.id}' has no outgoing flow whose condition is true "
            "and no default flow",
            node_id=gateway.id,
        )

    def _holds(self, flow: SequenceFlow, values: Mapping[str, Any]) -> bool:
        assert flow.condition is not None
        try:
            return bool(flow.condition.evaluate(values))
        except ExpressionError as exc:
            raise ExpressionError(
                f"condition of sequence flow '{flow.id}' failed: {exc.message}", flow_id=flow.id
            ) from exc

    def _join(self, token: Token, gateway: ParallelGateway, via: str | None) -> None:
        run = self.run
        key = (gateway.id, token.scope_key)
        join = run.joins.get(key)
        if join is None:
            # A join that fired earlier in this command keeps its row: updated, not re-inserted.
            join = Join(gateway.id, token.scope_key, [], run.deleted_joins.pop(key, None))
            run.put_join(join)
        join.arrivals.append({"token": str(token.id), "flow": via or ""})
        self._wait(token)
        arrived = join.arrived_flows  # not a set of the incoming flows at every arrival
        if len(arrived) < len(gateway.incoming) or not arrived.issuperset(gateway.incoming):
            return
        # Every incoming flow has a token: the first arrival on each is merged, the last one
        # (this token) survives and continues. Later arrivals on a flow wait for the next round.
        merged: dict[str, str] = {}
        for arrival in join.arrivals:
            merged.setdefault(arrival["flow"], arrival["token"])
        if len(merged) != len(gateway.incoming) or str(token.id) not in merged.values():
            raise InvariantViolation(
                InvariantViolationKind.JOIN_INCOMPLETE,
                f"join '{gateway.id}' would fire without one token on each incoming flow",
                gateway_id=gateway.id,
            )
        groups: list[str] = []
        absorbed_ids = set(merged.values())
        for token_id in merged.values():
            absorbed = run.tokens[UUID(token_id)]
            groups.append(absorbed.parallel_group or "")
            if absorbed is token:
                continue
            self._close_visit(absorbed, VisitState.COMPLETED)
            absorbed.merged_into = token.id
            absorbed.move_to(TokenState.COMPLETED, run.now)
            run.emit("token.merged", absorbed)
        remaining = [a for a in join.arrivals if a["token"] not in absorbed_ids]
        if remaining:
            join.arrivals = remaining
        else:
            self._delete_join(key)
        token.parallel_group = _joined_group(groups)
        token.move_to(TokenState.EXECUTING, run.now)
        self._leave(token, gateway)

    # -- moving on --------------------------------------------------------------------------------

    def _leave(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None:
        """Complete the visit and follow `flows` (default: every outgoing flow whose condition
        holds). One flow: the token moves on. Several: it forks into children sharing a group.
        None: the token ends here."""
        run = self.run
        self._close_visit(token, VisitState.COMPLETED)
        run.drop_listeners(token)
        if flows is None:
            outgoing = [self.model.flow(f) for f in node.outgoing]
            values = run.variable_values() if any(f.condition is not None for f in outgoing) else {}
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

    def _activate(self, token: Token) -> None:
        token.move_to(TokenState.READY, self.run.now)
        token.move_to(TokenState.EXECUTING, self.run.now)

    def _wait(self, token: Token) -> None:
        token.move_to(TokenState.WAITING, self.run.now)

    def _kill(self, token: Token) -> None:
        """End a live token early, with everything inside it if it is a subprocess's scope."""
        if not token.is_live:
            return
        self._kill_scope(token.id)
        self._close_visit(token, VisitState.TERMINATED)
        token.move_to(TokenState.TERMINATED, self.run.now)
        self.run.retire_work(token)
        self.run.emit("token.terminated", token)

    def _kill_scope(self, scope_id: Any) -> None:
        for token in self.run.live_in_scope(scope_id):
            self._kill(token)
        for key in self.run.joins_in_scope(str(scope_id)):
            self._delete_join(key)

    def set_variables(self, values: Mapping[str, Any] | None) -> None:
        for name, value in (values or {}).items():
            self.run.set_variable(name, infer(value))

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

    def _delete_join(self, key: tuple[str, str]) -> None:
        join = self.run.pop_join(key)
        if join.version is not None:
            self.run.deleted_joins[key] = join.version


def _joined_group(groups: list[str]) -> str | None:
    """The group a token continues in after a join: the merged tokens' common group path,
    one level up when they all came from the same fork."""
    paths = [g.split(".") if g else [] for g in groups]
    common: list[str] = []
    for parts in zip(*paths, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    if all(len(p) == len(common) for p in paths) and common:
        common.pop()
    return ".".join(common) or None
