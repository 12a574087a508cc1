"""Tasks: a service task runs its handler or waits as external work. So do a send task and a
message throw event with an implementation, as in Camunda 7."""

from __future__ import annotations

from collections.abc import Mapping

from engine.core.handlers import TaskContext
from engine.core.runtime import Token
from engine.errors import (
    BpmnError,
    ExpressionError,
    HandlerError,
    InterlockError,
    NeedsTransaction,
)
from engine.language.acting import ChangeLog
from engine.language.expression_context import context_for
from engine.language.expressions import Expression
from engine.model import Implemented, ServiceTask
from engine.semantics import conditions, waits
from engine.semantics.changes import apply_changes
from engine.semantics.events import EventMoves


class TaskMoves(EventMoves):
    def _service_task(self, token: Token, node: Implemented) -> None:
        run = self.run
        if node.is_external:
            self._wait(token)
            values = run.values_for(token) if isinstance(node.task_priority, str) else {}
            expression_context = self._context(token, values)
            external = waits.external_task(node, token, run.now, values, expression_context)
            run.external_tasks[external.id] = external
            return
        if isinstance(node, ServiceTask) and node.expression is not None:
            self._expression_task(token, node, node.expression)
            return
        assert node.handler is not None
        if self.optimistic:
            raise NeedsTransaction(f"service task '{node.id}' runs a handler")
        handler = self.handlers.get(node.handler)
        if handler is None:
            where = f"service task '{node.id}'"
            raise _handler_error(
                node, f"no handler is registered under the name '{node.handler}' ({where})"
            )
        context = TaskContext(
            instance_id=run.instance.id,
            business_key=run.instance.business_key,
            node_id=node.id,
            token_id=token.id,
            variables=run.values_for(token),
            connection=self.connection,
        )
        try:
            returned = handler(context)
        except BpmnError as error:
            self.set_variables(context.updates, token)
            self._throw(token, error.code, error.message)
            return
        except InterlockError:
            raise
        except Exception as exc:
            where = f"service task '{node.id}'"
            raise _handler_error(
                node, f"handler '{node.handler}' of {where} raised {type(exc).__name__}: {exc}"
            ) from exc
        updates = dict(context.updates)
        if node.result_variable is not None:
            updates[node.result_variable] = returned
        elif isinstance(returned, Mapping):
            updates.update(returned)
        self.set_variables(updates, token)
        if conditions.settle(self, token):
            self._leave(token, self.model.node(node.id))

    def _expression_task(self, token: Token, node: ServiceTask, expression: Expression) -> None:
        """camunda:expression evaluated in the execution's context; its value goes to the result
        variable, if the task names one (as setVariable from the task does), after what its
        calls changed (`${execution.setVariable('x', 1)}`)."""
        values = self.run.values_for(token)
        changes = ChangeLog()
        try:
            value = expression.evaluate(values, context_for(self.run, token, values, None, changes))
        except ExpressionError as exc:
            message = f"camunda:expression of service task '{node.id}' failed: {exc.message}"
            raise ExpressionError(message, node_id=node.id) from exc
        apply_changes(self.run, token, None, changes.changes)
        if node.result_variable is not None:
            self.set_variables({node.result_variable: value}, token)
        if conditions.settle(self, token):
            self._leave(token, node)


def _handler_error(node: Implemented, message: str) -> HandlerError:
    """The failure of the handler that implements `node`."""
    return HandlerError(message, node_id=node.id, handler=node.handler)
