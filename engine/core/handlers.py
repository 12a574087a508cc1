"""Service-task handlers: Python callables registered by name in the hosting process.

A handler runs inside the command's transaction, for deterministic local work. It reads the
instance's variables and returns (or sets) new ones. Remote effects belong in external tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from engine.errors import InterlockError


class TaskContext:
    """What a handler sees: identifiers, the variables, and a way to set variables. A listener's
    handler also sees the listener's `event_name`; a task listener's, the user task's `task_id`
    and `assignee`, which `set_assignee` changes."""

    def __init__(
        self,
        *,
        instance_id: UUID,
        business_key: str | None,
        node_id: str,
        token_id: UUID,
        variables: Mapping[str, Any],
        connection: Any,
        event_name: str | None = None,
        task_id: UUID | None = None,
        assignee: str | None = None,
    ) -> None:
        self.instance_id = instance_id
        self.business_key = business_key
        self.node_id = node_id
        self.token_id = token_id
        self.variables: Mapping[str, Any] = variables
        # The command's open database connection, for side effects that must commit or roll back
        # with the step (for example an insert into an application table).
        self.connection = connection
        self.updates: dict[str, Any] = {}
        self.event_name = event_name
        self.task_id = task_id
        self.assignee = assignee
        self.assignee_changed = False

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.updates:
            return self.updates[name]
        return self.variables.get(name, default)

    def set(self, name: str, value: Any) -> None:
        self.updates[name] = value

    def set_assignee(self, user_id: str | None) -> None:
        """In a task listener: the user task's new assignee (None: nobody)."""
        self.assignee, self.assignee_changed = user_id, True


Handler = Callable[[TaskContext], Mapping[str, Any] | None]


class HandlerRegistry:
    """Handlers by name. Deployments do not check names: handlers may live in another process."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, name: str, handler: Handler) -> None:
        if not name:
            raise InterlockError("a handler needs a non-empty name")
        self._handlers[name] = handler

    def get(self, name: str) -> Handler | None:
        return self._handlers.get(name)

    def names(self) -> list[str]:
        return sorted(self._handlers)
