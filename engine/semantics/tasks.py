"""Tasks: a service task runs its handler or waits as external work."""

from __future__ import annotations

from collections.abc import Mapping

from engine import waits
from engine.errors import BpmnError, HandlerError, InterlockError, NeedsTransaction
from engine.handlers import TaskContext
from engine.model import ServiceTask
from engine.runtime import Token
from engine.semantics.events import EventMoves


class TaskMoves(EventMoves):
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
        self.set_variables(updates, token)
        self._leave(token, node)
