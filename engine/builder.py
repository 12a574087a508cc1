"""Build a `ProcessModel` in Python; the result equals the model parsed from the same BPMN.

    model = (
        ProcessBuilder("invoice", "Invoice approval")
        .start_event("Start")
        .user_task("Approve", assignee="${approver}")
        .exclusive_gateway("Approved", default="Flow_Rejected")
        .service_task("Pay", handler="payInvoice")
        .end_event("Paid")
        .end_event("Rejected")
        .chain("Start", "Approve", "Approved")
        .flow("Approved", "Pay", condition="${approved}")
        .flow("Approved", "Rejected", id="Flow_Rejected")
        .chain("Pay", "Paid")
        .build()
    )

Incoming and outgoing flows are listed in the order the flows were added, as the parser lists them
in document order.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from engine.bpmn.parser import is_handler_name
from engine.errors import ExpressionError, ModelError
from engine.expressions import Expression, compile_expression
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
    TimerDefinition,
    UserTask,
    validate,
)


class ProcessBuilder:
    def __init__(self, key: str, name: str | None = None, version_tag: str | None = None) -> None:
        self._file = f"<builder {key}>"
        if not key:
            raise ModelError("a process needs a key", file=self._file)
        self._key = key
        self._name = name
        self._version_tag = version_tag
        self._nodes: list[Node] = []
        self._flows: list[SequenceFlow] = []
        self._ids: set[str] = set()

    def _error(self, message: str, element_id: str) -> ModelError:
        return ModelError(message, file=self._file, element_id=element_id)

    def _claim(self, element_id: str) -> None:
        if not element_id:
            raise ModelError("an element needs a non-empty id", file=self._file)
        if element_id in self._ids:
            raise self._error("duplicate element id", element_id)
        self._ids.add(element_id)

    def _add(self, node: Node) -> ProcessBuilder:
        self._claim(node.id)
        self._nodes.append(node)
        return self

    def _checked(self, element_id: str, what: str, value: str | None) -> str | None:
        """Text containing an expression must be exactly one safe expression, as in the parser."""
        if value is not None and ("${" in value or "#{" in value):
            try:
                compile_expression(value)
            except ExpressionError as error:
                raise self._error(f"{what}: {error.message}", element_id) from None
        return value

    def start_event(
        self,
        id: str,
        name: str | None = None,
        *,
        message: str | None = None,
        timer: TimerDefinition | None = None,
    ) -> ProcessBuilder:
        if message is not None and timer is not None:
            raise self._error("a start event has either a message or a timer, not both", id)
        if message is not None and not message:
            raise self._error("a message start event needs a message name", id)
        if timer is not None:
            if timer.kind not in ("date", "duration", "cycle") or not timer.text.strip():
                raise self._error("a timer needs a kind and a non-empty text", id)
            if timer.text != timer.text.strip():
                raise self._error("timer text must not start or end with whitespace", id)
            self._checked(id, "timer", timer.text)
        return self._add(StartEvent(id=id, name=name, message_name=message, timer=timer))

    def end_event(
        self, id: str, name: str | None = None, *, terminate: bool = False
    ) -> ProcessBuilder:
        return self._add(EndEvent(id=id, name=name, terminate=terminate))

    def service_task(
        self,
        id: str,
        name: str | None = None,
        *,
        handler: str | None = None,
        topic: str | None = None,
        result_variable: str | None = None,
        priority: int = 0,
        async_before: bool = False,
        async_after: bool = False,
    ) -> ProcessBuilder:
        if handler is not None and not is_handler_name(handler):
            raise self._error(f"handler '{handler}' is not a name or a dotted class name", id)
        if topic is not None and not topic:
            raise self._error("an external task needs a non-empty topic", id)
        return self._add(
            ServiceTask(
                id=id,
                name=name,
                handler=handler,
                topic=topic,
                result_variable=result_variable,
                task_priority=priority,
                async_before=async_before,
                async_after=async_after,
            )
        )

    def user_task(
        self,
        id: str,
        name: str | None = None,
        *,
        assignee: str | None = None,
        candidate_users: str | None = None,
        candidate_groups: str | None = None,
        due_date: str | None = None,
        priority: str | None = None,
        form_key: str | None = None,
        async_before: bool = False,
    ) -> ProcessBuilder:
        return self._add(
            UserTask(
                id=id,
                name=name,
                assignee=self._checked(id, "assignee", assignee),
                candidate_users=self._checked(id, "candidate_users", candidate_users),
                candidate_groups=self._checked(id, "candidate_groups", candidate_groups),
                due_date=self._checked(id, "due_date", due_date),
                priority=self._checked(id, "priority", priority),
                form_key=self._checked(id, "form_key", form_key),
                async_before=async_before,
            )
        )

    def task(
        self, id: str, name: str | None = None, *, manual: bool = False, async_before: bool = False
    ) -> ProcessBuilder:
        return self._add(NoneTask(id=id, name=name, manual=manual, async_before=async_before))

    def intermediate_throw_event(self, id: str, name: str | None = None) -> ProcessBuilder:
        return self._add(IntermediateThrowEvent(id=id, name=name))

    def exclusive_gateway(
        self, id: str, name: str | None = None, *, default: str | None = None
    ) -> ProcessBuilder:
        return self._add(ExclusiveGateway(id=id, name=name, default_flow=default))

    def parallel_gateway(self, id: str, name: str | None = None) -> ProcessBuilder:
        return self._add(ParallelGateway(id=id, name=name))

    def flow(
        self,
        source: str,
        target: str,
        *,
        id: str | None = None,
        condition: str | None = None,
        name: str | None = None,
    ) -> ProcessBuilder:
        flow_id = id if id is not None else f"Flow_{source}_{target}"
        self._claim(flow_id)
        compiled: Expression | None = None
        if condition is not None:
            try:
                compiled = compile_expression(condition)
            except ExpressionError as error:
                message = f"invalid condition on sequence flow '{flow_id}': {error.message}"
                raise self._error(message, flow_id) from None
        self._flows.append(
            SequenceFlow(id=flow_id, source=source, target=target, name=name, condition=compiled)
        )
        return self

    def chain(self, *node_ids: str) -> ProcessBuilder:
        for source, target in itertools.pairwise(node_ids):
            self.flow(source, target)
        return self

    def build(self) -> ProcessModel:
        nodes = tuple(
            replace(
                node,
                incoming=tuple(f.id for f in self._flows if f.target == node.id),
                outgoing=tuple(f.id for f in self._flows if f.source == node.id),
            )
            for node in self._nodes
        )
        model = ProcessModel(
            key=self._key,
            name=self._name,
            nodes=nodes,
            flows=tuple(self._flows),
            version_tag=self._version_tag,
        )
        return validate(model, file=self._file)
