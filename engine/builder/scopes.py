"""Scopes and loops: embedded and event subprocesses, multi-instance activities and standard
loops."""

from __future__ import annotations

from dataclasses import replace
from typing import Self, Unpack

from engine.builder.base import BuilderBase, NodeOptions
from engine.model import MultiInstance, StandardLoop, SubProcess, Transaction


class Scopes(BuilderBase):
    def sub_process(
        self,
        id: str,
        name: str | None = None,
        *,
        triggered_by_event: bool = False,
        **options: Unpack[NodeOptions],
    ) -> Self:
        """An embedded subprocess; its nodes name it as `parent`. With `triggered_by_event` an
        event subprocess: no flows in or out, one start event with a trigger."""
        return self._node(SubProcess, id, name, options, triggered_by_event=triggered_by_event)

    def transaction(self, id: str, name: str | None = None, **options: Unpack[NodeOptions]) -> Self:
        """A transaction subprocess: an embedded subprocess (its nodes name it as `parent`) that
        a cancel end event inside it (`end_event(..., cancel=True)`) cancels: its other work
        ends, what completed inside it is compensated, newest first, and it leaves through its
        cancel boundary event (`cancel_boundary`)."""
        return self._node(Transaction, id, name, options)

    def multi_instance(
        self,
        node_id: str,
        *,
        sequential: bool = False,
        cardinality: str | int | None = None,
        collection: str | None = None,
        element_variable: str | None = None,
        completion_condition: str | None = None,
        async_before: bool = False,
    ) -> Self:
        """The task or subprocess `node_id`, added before, runs as a multi-instance activity."""
        condition = None
        if completion_condition is not None:
            condition = self._expression(node_id, "completion_condition", completion_condition)
        if isinstance(cardinality, str):
            self._checked(node_id, "cardinality", cardinality)
        return self._looping(
            node_id,
            MultiInstance(
                sequential=sequential,
                cardinality=None if cardinality is None else str(cardinality),
                collection=self._checked(node_id, "collection", collection),
                element_variable=element_variable,
                completion_condition=condition,
                async_before=async_before,
            ),
        )

    def standard_loop(
        self,
        node_id: str,
        *,
        condition: str | None = None,
        test_before: bool = False,
        maximum: int | None = None,
    ) -> Self:
        """The task or subprocess `node_id`, added before, runs again while `condition` holds,
        at most `maximum` times."""
        if condition is None and maximum is None:
            raise self._error("a standard loop needs a condition or a maximum", node_id)
        compiled = None if condition is None else self._expression(node_id, "condition", condition)
        loop = StandardLoop(condition=compiled, test_before=test_before, maximum=maximum)
        return self._looping(node_id, loop)

    def _looping(self, node_id: str, loop: MultiInstance | StandardLoop) -> Self:
        index = self._index(node_id)
        if index is None:
            raise self._error("no node with this id was added", node_id)
        self._nodes[index] = replace(self._nodes[index], loop=loop)
        return self
