"""`InstanceHandle`: a window on one instance that reads through `engine/queries/` and acts on the
instance as a whole through the engine's commands."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from engine.commands.executions import SignalExecution
from engine.commands.instances import (
    CancelInstance,
    ResumeInstance,
    SetVariables,
    SuspendInstance,
)
from engine.errors import NotFound
from engine.language.variables import TypedValue, from_row, infer
from engine.queries import instances as instance_reads
from engine.queries import tokens as token_reads
from engine.queries import work
from engine.queries.instances import InstanceInfo
from engine.queries.tokens import TokenPath, TokenPosition
from engine.queries.work import TaskRow
from engine.states import InstanceState

if TYPE_CHECKING:
    from engine.api import Engine

__all__ = ["InstanceHandle"]


class InstanceHandle:
    """A read-only window on one instance that always reflects the latest commit, plus the
    commands that act on it as a whole."""

    def __init__(self, engine: Engine, instance_id: UUID) -> None:
        self.engine = engine
        self.id = instance_id

    def __repr__(self) -> str:
        return f"InstanceHandle({self.id})"

    @property
    def state(self) -> InstanceState:
        state = instance_reads.state(self.engine, self.id)
        if state is None:
            raise NotFound(f"process instance {self.id} does not exist")
        return InstanceState(state)

    def info(self) -> InstanceInfo:
        found = instance_reads.instance(self.engine, self.id)
        if found is None:
            raise NotFound(f"process instance {self.id} does not exist")
        return found

    def children(self) -> list[InstanceHandle]:
        """The instances this one called through its call activities, in the order they
        started (ended ones included)."""
        called = instance_reads.called_instances(self.engine, self.id)
        return [InstanceHandle(self.engine, info.id) for info in called]

    def parent(self) -> InstanceHandle | None:
        """The instance that called this one, or None."""
        caller = self.info().super_instance_id
        return None if caller is None else InstanceHandle(self.engine, caller)

    def root(self) -> InstanceHandle:
        """The root of this instance's family: the instance at the top of the calls (this one
        when nobody called it)."""
        root = self.info().root_instance_id
        return InstanceHandle(self.engine, root if root is not None else self.id)

    def tokens(self) -> list[TokenPosition]:
        """Live positions: every token that has not finished."""
        return token_reads.positions(self.engine, self.engine.definition_cache, self.id)

    def history(self) -> list[TokenPath]:
        """Every track's recorded path, finished ones included, with fork/merge lineage."""
        return token_reads.paths(self.engine, self.id)

    def variables(self) -> dict[str, Any]:
        return {name: typed.value for name, typed in self.typed_variables().items()}

    def typed_variables(self) -> dict[str, TypedValue]:
        rows = instance_reads.variables(self.engine, self.id)
        return {name: from_row(type_name, value) for name, type_name, value in rows}

    def set_variables(self, values: Mapping[str, Any], deletions: Sequence[str] = ()) -> None:
        """Set `values` in the root scope, then delete `deletions` from it, in one transaction;
        conditional events the changes reach trigger in it."""
        typed = {k: infer(v) for k, v in values.items()}
        self.engine.run(SetVariables(self.id, typed, tuple(deletions)))

    def delete_variables(self, *names: str) -> None:
        self.set_variables({}, names)

    def user_tasks(self) -> list[TaskRow]:
        """The instance's open user tasks, oldest first."""
        return work.user_tasks(self.engine, instance_id=self.id)

    def signal(
        self, execution_id: UUID | str | None = None, variables: Mapping[str, Any] | None = None
    ) -> None:
        """Continue a waiting execution of this instance as Camunda's RuntimeService.signal
        does (a receive task with or without a message, an intermediate catch event, a user or
        external task): the token `execution_id`, or by default the instance's own execution,
        which is its one waiting token. `variables` are set first, as a completion sets them."""
        target = self.id if execution_id is None else UUID(str(execution_id))
        typed = {k: infer(v) for k, v in (variables or {}).items()}
        self.engine.run(SignalExecution(target, typed, instance_id=self.id))

    def cancel(self) -> InstanceState:
        return InstanceState(self.engine.run(CancelInstance(self.id)).state)

    def suspend(self) -> None:
        self.engine.run(SuspendInstance(self.id))

    def resume(self) -> None:
        self.engine.run(ResumeInstance(self.id))

    def wait_completion(self, timeout: float = 30.0) -> InstanceState:
        """Block until the instance ends or `timeout` seconds pass; return the state then."""
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            state = self.state
            if state.is_final or time.monotonic() >= deadline:
                return state
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.2)
