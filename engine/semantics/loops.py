"""Multi-instance and standard loops: a token arriving at a looping activity becomes its host,
the body's token, which waits while iteration tokens (scope: the host) each run the activity once.

The counters are local variables, committed rows like every other: the body's (the host's)
`nrOfInstances`, `nrOfActiveInstances`, `nrOfCompletedInstances` (a standard loop's host keeps
its `loopCounter`), each iteration's `loopCounter` and element variable. An iteration whose
activity completes does not follow the activity's flows: it ends, the counters move on, and the
completion condition is asked with the iteration's variables. When it holds or every iteration
is done, the iterations still running end with their work retired and the host leaves the
activity along its flows, all in the command that completed the last iteration.

Boundary events belong to the body (as in Camunda): they listen for the host, and an interrupting
one ends every iteration with it. A BPMN error thrown in an iteration is caught from the body
outwards.
"""

from __future__ import annotations

from typing import Any, Literal

from engine.core.runtime import Token
from engine.errors import ExpressionError
from engine.language.expressions import Expression, compile_expression, is_expression
from engine.language.variables import infer
from engine.model import MULTI_INSTANCE_BODY, MultiInstance, Node, SequenceFlow, StandardLoop
from engine.semantics import waits
from engine.semantics.events import EventMoves
from engine.semantics.mappings import map_outputs
from engine.states import TokenState, VisitState

INSTANCES = "nrOfInstances"
ACTIVE = "nrOfActiveInstances"
COMPLETED = "nrOfCompletedInstances"
COUNTER = "loopCounter"
# The most iterations one multi-instance body runs (a larger collection or cardinality fails the
# command), and the most runs of a standard loop (whose condition holding longer fails it too:
# it would never end otherwise).
MAX_ITERATIONS = 100_000
MAX_LOOP_RUNS = 10_000

# What a body does once an iteration is done: leave, wait for the iterations still running, or
# start the iteration with this loopCounter.
After = Literal["finish", "wait"] | int


class LoopMoves(EventMoves):
    def _loops(self, token: Token, node: Node) -> bool:
        """A token arriving at a looping activity: a new host starts the body (True); an
        iteration goes on to run the activity itself (False)."""
        if self._host_of(token) is not None:
            return False
        if isinstance(node.loop, MultiInstance) and token.visit_id is not None:
            visit = self.run.visit(token.visit_id)
            if visit is not None:
                visit.node_type = MULTI_INSTANCE_BODY
        self._attach_boundary_events(token, node)
        self._wait(token)
        loop = node.loop
        if isinstance(loop, StandardLoop):
            self.run.set_local(token.id, COUNTER, infer(0))
            if loop.test_before and not self._loop_condition(node, loop, token):
                self._finish_body(token, node)
            else:
                self._start_iteration(token, node, 0, None)
            return True
        assert isinstance(loop, MultiInstance)
        count, items = self._iterations(token, node, loop)
        run = self.run
        run.set_local(token.id, INSTANCES, infer(count))
        run.set_local(token.id, ACTIVE, infer(min(count, 1) if loop.sequential else count))
        run.set_local(token.id, COMPLETED, infer(0))
        if count == 0:
            self._finish_body(token, node)
        for index in range(min(count, 1) if loop.sequential else count):
            self._start_iteration(token, node, index, items)
        return True

    def _leave(self, token: Token, node: Node, flows: list[SequenceFlow] | None = None) -> None:
        """An iteration whose activity completed ends instead of following the flows."""
        if node.loop is not None and flows is None:
            host = self._host_of(token)
            if host is not None:
                self._iteration_done(host, token, node)
                return
        super()._leave(token, node, flows)

    def _iteration_done(self, host: Token, iteration: Token, node: Node) -> None:
        self.scripts.execution_event(iteration, node, "end")
        map_outputs(self.run, iteration, node)
        after = self._count(host, iteration, node)
        self._end_iteration(iteration)
        self._go_on(host, node, after)

    def _ended(self, token: Token) -> None:
        """An iteration that ended some other way (an uncaught BPMN error ends the execution
        that threw it) counts as done too: the body goes on from its counters."""
        host = self._host_of(token)
        if host is None or not host.is_live:
            super()._ended(token)
            return
        node = self.model.node(host.node_id)
        self._go_on(host, node, self._count(host, token, node))

    def _count(self, host: Token, iteration: Token, node: Node) -> After:
        """Count `iteration` as done on its host: what the body does next."""
        run = self.run
        loop = node.loop
        counters = run.local_values(host.id)
        if isinstance(loop, StandardLoop):
            counter = int(counters.get(COUNTER, 0)) + 1
            if counter >= MAX_LOOP_RUNS:
                raise ExpressionError(
                    f"the loopCondition of activity '{node.id}' still holds after {counter} "
                    "runs, the most an activity may loop",
                    node_id=node.id,
                )
            run.set_local(host.id, COUNTER, infer(counter))
            again = (loop.maximum is None or counter < loop.maximum) and (
                loop.condition is None or self._loop_condition(node, loop, iteration)
            )
            return counter if again else "finish"
        assert isinstance(loop, MultiInstance)
        completed = int(counters.get(COMPLETED, 0)) + 1
        total = int(counters.get(INSTANCES, 0))
        run.set_local(host.id, COMPLETED, infer(completed))
        active = max(int(counters.get(ACTIVE, 1)) - 1, 0)
        early = loop.completion_condition is not None and self._truth(
            loop.completion_condition, node, run.values_for(iteration), "completionCondition"
        )
        if early or completed >= total:
            run.set_local(host.id, ACTIVE, infer(active))
            return "finish"
        if not loop.sequential:
            run.set_local(host.id, ACTIVE, infer(active))
            return "wait"
        return completed

    def _go_on(self, host: Token, node: Node, after: After) -> None:
        if after == "finish":
            self._finish_body(host, node)
        elif after != "wait":
            assert isinstance(after, int)
            items = None
            loop = node.loop
            if isinstance(loop, MultiInstance) and loop.element_variable is not None:
                # Camunda reads the collection again for each sequential iteration.
                items = self._items(host, node, loop)
            self._start_iteration(host, node, after, items)

    def _end_iteration(self, iteration: Token) -> None:
        self._close_visit(iteration, VisitState.COMPLETED)
        self.run.drop_listeners(iteration)
        iteration.move_to(TokenState.COMPLETED, self.run.now)

    def _finish_body(self, host: Token, node: Node) -> None:
        """The body completes: iterations still running end with their work, the host leaves."""
        for live in self.run.live_in_scope(host.id):
            self._kill(live)
        host.move_to(TokenState.EXECUTING, self.run.now)
        super()._leave(host, node)

    def _start_iteration(
        self, host: Token, node: Node, index: int, items: list[Any] | None
    ) -> None:
        run = self.run
        iteration = run.new_token(node.id, parent_id=host.id, scope_id=host.id, mode=host.mode)
        self._activate(iteration)
        run.set_local(iteration.id, COUNTER, infer(index))
        loop = node.loop
        if isinstance(loop, MultiInstance) and loop.element_variable is not None:
            item = items[index] if items is not None and index < len(items) else None
            run.set_local(iteration.id, loop.element_variable, infer(item))
        if isinstance(loop, MultiInstance) and loop.async_before:
            iteration.move_to(TokenState.READY, run.now)
            retries = waits.retries_of(node.retry_cycle, self.default_retries)
            priority = self._job_priority(node, None, iteration)
            run.add_job(waits.async_job(iteration, node.id, retries, run.now, priority=priority))
            run.emit("token.ready", iteration)
            return
        self._queue.append((iteration, node.id, None, True))

    def _iterations(
        self, host: Token, node: Node, loop: MultiInstance
    ) -> tuple[int, list[Any] | None]:
        """How many iterations the body runs, and the collection's items (None without one)."""
        values = self.run.values_for(host)
        items = self._items(host, node, loop, values)
        if loop.cardinality is None:
            assert items is not None
            count: Any = len(items)
        else:
            count = loop.cardinality
        if loop.cardinality is not None and is_expression(loop.cardinality):
            count = self._value(loop.cardinality, node, values, "loopCardinality")
        if isinstance(count, str) and count.strip().isdigit():
            count = int(count)
        if isinstance(count, int) and count > MAX_ITERATIONS:
            raise ExpressionError(
                f"the loopCardinality or collection of multi-instance activity '{node.id}' asks "
                f"for {count} iterations, more than the {MAX_ITERATIONS} one activity may run",
                node_id=node.id,
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ExpressionError(
                f"the loopCardinality of multi-instance activity '{node.id}' is {count!r}, "
                "not a whole number",
                node_id=node.id,
            )
        return count, items

    def _items(
        self,
        host: Token,
        node: Node,
        loop: MultiInstance,
        values: dict[str, Any] | None = None,
    ) -> list[Any] | None:
        """The collection's items, None without a collection."""
        if loop.collection is None:
            return None
        if values is None:
            values = self.run.values_for(host)
        found = (
            self._value(loop.collection, node, values, "camunda:collection")
            if is_expression(loop.collection)
            else values.get(loop.collection)
        )
        if not isinstance(found, list):
            raise ExpressionError(
                f"the collection of multi-instance activity '{node.id}' "
                f"({loop.collection}) is {type(found).__name__}, not a list",
                node_id=node.id,
            )
        return found

    def _loop_condition(self, node: Node, loop: StandardLoop, token: Token) -> bool:
        assert loop.condition is not None
        return self._truth(loop.condition, node, self.run.values_for(token), "loopCondition")

    def _truth(self, expression: Expression, node: Node, values: dict[str, Any], what: str) -> bool:
        return bool(self._value(expression, node, values, what))

    @staticmethod
    def _value(expression: Expression | str, node: Node, values: dict[str, Any], what: str) -> Any:
        compiled = compile_expression(expression) if isinstance(expression, str) else expression
        try:
            return compiled.evaluate(values)
        except ExpressionError as exc:
            raise ExpressionError(
                f"{what} of activity '{node.id}' failed: {exc.message}", node_id=node.id
            ) from exc
