"""`ProcessBuilder`: the node families together, with the sequence flows, listeners and
input/output mappings that join and decorate them, and the model they build."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from engine.bpmn.reading import script_format
from engine.builder.events import Events
from engine.builder.gateways import Gateways
from engine.builder.scopes import Scopes
from engine.builder.tasks import Tasks
from engine.errors import ExpressionError
from engine.language.expressions import (
    ACTS_ON_EXECUTION,
    ACTS_ON_TASK,
    Expression,
    compile_expression,
)
from engine.language.mappings import InputOutput, Parameter, from_python
from engine.model import (
    EXECUTION_EVENTS,
    TAKE_EVENT,
    TASK_EVENTS,
    BoundaryEvent,
    Listener,
    Node,
    ProcessModel,
    ScriptCondition,
    SequenceFlow,
    UserTask,
)
from engine.model.validation import validate


class ProcessBuilder(Events, Tasks, Gateways, Scopes):
    """A process built node by node (see engine/builder/__init__.py). Every method that adds
    an activity, gateway or event also takes the keywords `parent` (the embedded subprocess it
    is in; a boundary event takes its activity's), `async_before`, `async_after` and
    `retry_cycle` (`NodeOptions`)."""

    def listener(
        self,
        element_id: str,
        event: str,
        *,
        handler: str | None = None,
        script: str | None = None,
        format: str = "javascript",
        task: bool = False,
    ) -> ProcessBuilder:
        """Add a listener to the node, sequence flow or process (its key) `element_id`, already
        added: an execution listener on `start`/`end` (`take` on a flow), or with `task` a task
        listener of a user task on `create`/`assignment`/`complete`/`delete`. Either a registered
        `handler` or a `script`."""
        if (handler is None) == (script is None):
            raise self._error("a listener needs either a handler or a script", element_id)
        self._handler(element_id, handler)
        made = Listener(
            event=event,
            handler=handler,
            script=None
            if script is None
            else self._script(
                element_id, format, script, ACTS_ON_TASK if task else ACTS_ON_EXECUTION
            ),
        )
        for index, flow in enumerate(self._flows):
            if flow.id == element_id and not task:
                if event != TAKE_EVENT:
                    raise self._error("a sequence flow's listeners run on take", element_id)
                self._flows[index] = replace(flow, listeners=(*flow.listeners, made))
                return self
        at = self._index(element_id)
        if at is not None:
            node = self._nodes[at]
            if task:
                if not isinstance(node, UserTask):
                    raise self._error("task listeners belong on a user task", element_id)
                if event not in TASK_EVENTS:
                    raise self._error(f"task listener event '{event}' is unknown", element_id)
                self._nodes[at] = replace(node, task_listeners=(*node.task_listeners, made))
            else:
                if event not in EXECUTION_EVENTS:
                    raise self._error(f"execution listener event '{event}' is unknown", element_id)
                self._nodes[at] = replace(node, listeners=(*node.listeners, made))
            return self
        if element_id == self._key and not task and event in EXECUTION_EVENTS:
            self._process_listeners.append(made)
            return self
        raise self._error("a listener needs an element added before it", element_id)

    def flow(
        self,
        source: str,
        target: str,
        *,
        id: str | None = None,
        condition: str | None = None,
        condition_language: str | None = None,
        name: str | None = None,
    ) -> ProcessBuilder:
        """A sequence flow; `condition` is a `${}` expression, or JavaScript when
        `condition_language` is "javascript"."""
        flow_id = id if id is not None else f"Flow_{source}_{target}"
        self._claim(flow_id)
        compiled: Expression | ScriptCondition | None = None
        if condition is not None and condition_language is not None:
            if script_format(condition_language) != "javascript":
                message = f"script language '{condition_language}' is not supported"
                raise self._error(message, flow_id)
            compiled = ScriptCondition(source=condition, language=condition_language)
        elif condition is not None:
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

    def input_output(
        self,
        node_id: str,
        *,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
    ) -> ProcessBuilder:
        """camunda:inputOutput on the node added as `node_id`: each value a str (constant text or
        one `${...}`), None, or a list or dict of such values."""
        index = self._index(node_id)
        if index is None:
            raise self._error("input/output parameters name no node added so far", node_id)
        try:
            io = InputOutput(
                inputs=tuple(Parameter(k, from_python(v)) for k, v in (inputs or {}).items()),
                outputs=tuple(Parameter(k, from_python(v)) for k, v in (outputs or {}).items()),
            )
        except ExpressionError as error:
            raise self._error(f"input/output parameter: {error.message}", node_id) from None
        except TypeError as error:
            raise self._error(str(error), node_id) from None
        self._nodes[index] = replace(self._nodes[index], io=io)
        return self

    def build(self) -> ProcessModel:
        by_id = {node.id: node for node in self._nodes}

        def parent_of(node: Node) -> str | None:
            if isinstance(node, BoundaryEvent) and node.attached_to in by_id:
                return by_id[node.attached_to].parent
            return node.parent

        # Every node's flows in the order they were added, from one pass over the flows.
        flows_in: dict[str, list[str]] = {}
        flows_out: dict[str, list[str]] = {}
        for flow in self._flows:
            flows_in.setdefault(flow.target, []).append(flow.id)
            flows_out.setdefault(flow.source, []).append(flow.id)
        nodes = tuple(
            replace(
                node,
                parent=parent_of(node),
                incoming=tuple(flows_in.get(node.id, ())),
                outgoing=tuple(flows_out.get(node.id, ())),
            )
            for node in self._nodes
        )
        model = ProcessModel(
            key=self._key,
            name=self._name,
            nodes=nodes,
            flows=tuple(self._flows),
            version_tag=self._version_tag,
            history_ttl_days=self._history_ttl_days,
            listeners=tuple(self._process_listeners),
        )
        return validate(model, file=self._file)
