"""Token semantics: how tokens move through nodes. No SQL, no clock, no IO of its own.

`Advance` works on one `InstanceRun` (the locked instance in memory). Every entry point runs the
tokens it is given through automatic nodes until each one waits or ends, then completes the
instance when no live token is left. Service-task handlers are the only foreign code it calls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from engine.errors import (
    ExpressionError,
    HandlerError,
    InterlockError,
    InvariantViolation,
    InvariantViolationKind,
    NoMatchingFlow,
)
from engine.handlers import HandlerRegistry, TaskContext
from engine.ids import new_id
from engine.model import (
    EndEvent,
    ExclusiveGateway,
    IntermediateThrowEvent,
    Node,
    NoneTask,
    ParallelGateway,
    ProcessModel,
    SequenceFlow,
    ServiceTask,
    StartEvent,
    UserTask,
)
from engine.runtime import InstanceRun, Join, Token, UserTaskRow, Visit
from engine.states import InstanceState, TokenState
from engine.variables import infer

# A token travelling to a node: (token, node id, flow it arrived by, skip the async-before park).
Step = tuple[Token, str, str | None, bool]


class Advance:
    def __init__(
        self,
        run: InstanceRun,
        model: ProcessModel,
        handlers: HandlerRegistry,
        connection: Any = None,
    ) -> None:
        self.run = run
        self.model = model
        self.handlers = handlers
        self.connection = connection
        self._queue: deque[Step] = deque()

    # -- entry points ---------------------------------------------------------------------------

    def start(self, start: StartEvent) -> Token:
        """A new instance: one token enters through `start`."""
        run = self.run
        run.instance.move_to(InstanceState.ACTIVE, run.now)
        run.emit("instance.started")
        token = run.new_token(start.id)
        token.move_to(TokenState.READY, run.now)
        token.move_to(TokenState.EXECUTING, run.now)
        self._queue.append((token, start.id, None, False))
        self._drain()
        return token

    def resume(self, token: Token, variables: Mapping[str, Any] | None = None) -> None:
        """A waiting token's wait is over (its user task was completed): it leaves its node."""
        token.move_to(TokenState.EXECUTING, self.run.now)
        for name, value in (variables or {}).items():
            self.run.set_variable(name, infer(value))
        self._leave(token, self.model.node(token.node_id))
        self._drain()

    def execute_ready(self, token: Token) -> None:
        """A claimed token (Ready -> Executing by compare-and-swap) runs the node it was parked
        at."""
        self._queue.append((token, token.node_id, None, True))
        self._drain()

    def terminate_all(self, *, instance_state: InstanceState) -> None:
        """End every live token (cancellation or a terminate end event) and retire their work."""
        run = self.run
        for token in run.live_tokens():
            self._close_visit(token, "Terminated")
            token.move_to(TokenState.TERMINATED, run.now)
            run.retire_work(token)
            run.emit("token.terminated", token)
        for key in list(run.joins):
            self._delete_join(key)
        if instance_state is InstanceState.TERMINATED:
            run.instance.move_to(InstanceState.TERMINATING, run.now)
        run.instance.move_to(instance_state, run.now)
        run.emit(f"instance.{instance_state.value.lower()}")

    # -- the loop ---------------------------------------------------------------------------------

    def _drain(self) -> None:
        while self._queue:
            token, node_id, via, skip_async = self._queue.popleft()
            if token.is_live:
                self._arrive(token, self.model.node(node_id), via, skip_async)
        if not self.run.instance.state.is_final and not self.run.live_tokens():
            self.run.instance.move_to(InstanceState.COMPLETED, self.run.now)
            self.run.emit("instance.completed")

    def _arrive(self, token: Token, node: Node, via: str | None, skip_async: bool) -> None:
        run = self.run
        token.node_id = node.id
        token.dirty = True
        if node.async_before and not skip_async:
            token.move_to(TokenState.READY, run.now)
            run.emit("token.ready", token)
            return
        self._open_visit(token, node)
        if isinstance(node, (StartEvent, NoneTask, IntermediateThrowEvent)):
            self._leave(token, node)
        elif isinstance(node, ServiceTask):
            self._service_task(token, node)
        elif isinstance(node, UserTask):
            self._wait(token)
            task = UserTaskRow(
                id=new_id(),
                token_id=token.id,
                node_id=node.id,
                name=node.name,
                state="Open",
                created_at=run.now,
                is_new=True,
            )
            run.tasks.append(task)
        elif isinstance(node, EndEvent):
            self._close_visit(token, "Completed")
            token.move_to(TokenState.COMPLETED, run.now)
            if node.terminate:
                self.terminate_all(instance_state=InstanceState.COMPLETED)
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
        if node.is_external:
            self._wait(token)
            return
        assert node.handler is not None
        handler = self.handlers.get(node.handler)
        if handler is None:
            raise HandlerError(
                f"no handler is registered under the name '{node.handler}' "
                f"(service task '{node.id}')",
                node_id=node.id,
                handler=node.handler,
            )
        run = self.run
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
        for name, value in updates.items():
            run.set_variable(name, infer(value))
        self._leave(token, node)

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
            run.joins[key] = join
        join.arrivals = [*join.arrivals, {"token": str(token.id), "flow": via or ""}]
        self._wait(token)
        if not set(gateway.incoming) <= join.arrived_flows:
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
        for token_id in merged.values():
            absorbed = next(t for t in run.tokens.values() if str(t.id) == token_id)
            groups.append(absorbed.parallel_group or "")
            if absorbed is token:
                continue
            self._close_visit(absorbed, "Completed")
            absorbed.merged_into = token.id
            absorbed.move_to(TokenState.COMPLETED, run.now)
            run.emit("token.merged", absorbed)
        remaining = [a for a in join.arrivals if a["token"] not in merged.values()]
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
        holds). One flow: the token moves on. Several: it forks into children sharing a group."""
        run = self.run
        self._close_visit(token, "Completed")
        if flows is None:
            values = run.variable_values()
            flows = [
                self.model.flow(f)
                for f in node.outgoing
                if self.model.flow(f).condition is None or self._holds(self.model.flow(f), values)
            ]
        if not flows:
            token.move_to(TokenState.COMPLETED, run.now)
            return
        if len(flows) == 1:
            self._queue.append((token, flows[0].target, flows[0].id, False))
            return
        group = (
            f"{token.parallel_group}.{new_id().hex[:12]}"
            if token.parallel_group
            else new_id().hex[:12]
        )
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
            child.move_to(TokenState.READY, run.now)
            child.move_to(TokenState.EXECUTING, run.now)
            self._queue.append((child, flow.target, flow.id, False))

    def _wait(self, token: Token) -> None:
        token.move_to(TokenState.WAITING, self.run.now)

    def _open_visit(self, token: Token, node: Node) -> None:
        visit = Visit(
            id=new_id(),
            token_id=token.id,
            node_id=node.id,
            node_name=node.name,
            node_type=node.kind.value,
            state="Active",
            started_at=self.run.now,
            is_new=True,
        )
        self.run.visits.append(visit)
        token.visit_id = visit.id

    def _close_visit(self, token: Token, state: str) -> None:
        """End the token's open visit; a visit already loaded from the database is updated."""
        if token.visit_id is None:
            return
        run = self.run
        visit = next((v for v in run.visits if v.id == token.visit_id), None)
        if visit is None:
            visit = Visit(
                id=token.visit_id,
                token_id=token.id,
                node_id=token.node_id,
                state=state,
                started_at=run.now,
            )
            run.visits.append(visit)
        visit.state = state
        visit.ended_at = run.now
        token.visit_id = None
        token.dirty = True

    def _delete_join(self, key: tuple[str, str]) -> None:
        join = self.run.joins.pop(key)
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
