"""The builder's state and the checks every family of nodes shares: ids, expressions, timers,
retry cycles, forms, names, scripts; and the options every node takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self, TypedDict

from engine.bpmn.parser import timer_problem
from engine.bpmn.reading import is_handler_name, retry_cycle_problem, script_format
from engine.errors import ModelError
from engine.language.composite import compile_text_or_refuse, has_expression
from engine.language.expressions import NO_ACTING, Expression, compile_or_refuse
from engine.language.forms import FormField, form_problem
from engine.language.history_ttl import check_history_ttl
from engine.model import Listener, Node, Script, SequenceFlow, TimerDefinition


class Continuations(TypedDict, total=False):
    """What every activity, gateway and event takes: asynchronous continuations before and
    after it, and the retry cycle of their jobs (`retry_cycle`, e.g. "R3/PT5M")."""

    async_before: bool
    async_after: bool
    retry_cycle: str | None


class NodeOptions(Continuations, total=False):
    """The options of a node placed in a scope: `parent`, the embedded subprocess it is in
    (None: the process)."""

    parent: str | None


def unexpected(options: Mapping[str, object], allowed: frozenset[str]) -> None:
    """Refuse a keyword that is none of the options, as Python refuses an unknown parameter."""
    for keyword in options:
        if keyword not in allowed:
            raise TypeError(f"got an unexpected keyword argument '{keyword}'")


class BuilderBase:
    def __init__(
        self,
        key: str,
        name: str | None = None,
        version_tag: str | None = None,
        *,
        history_ttl_days: int | None = None,
    ) -> None:
        """`history_ttl_days`: camunda:historyTimeToLive (None: the default setting applies)."""
        self._file = f"<builder {key}>"
        if not key:
            raise ModelError("a process needs a key", file=self._file)
        if history_ttl_days is not None:
            try:
                check_history_ttl(history_ttl_days)
            except ValueError as exc:
                raise ModelError(str(exc), file=self._file, element_id=key) from None
        self._key = key
        self._name = name
        self._version_tag = version_tag
        self._history_ttl_days = history_ttl_days
        self._nodes: list[Node] = []
        self._flows: list[SequenceFlow] = []
        self._ids: set[str] = set()
        self._process_listeners: list[Listener] = []

    def _error(self, message: str, element_id: str) -> ModelError:
        return ModelError(message, file=self._file, element_id=element_id)

    def _claim(self, element_id: str) -> None:
        if not element_id:
            raise ModelError("an element needs a non-empty id", file=self._file)
        if element_id in self._ids:
            raise self._error("duplicate element id", element_id)
        self._ids.add(element_id)

    def _add(self, node: Node) -> Self:
        self._claim(node.id)
        self._nodes.append(node)
        return self

    def _node(
        self,
        kind: type[Node],
        id: str,
        name: str | None,
        options: Mapping[str, Any],
        **fields: Any,
    ) -> Self:
        """A node of `kind` with the options every node has, and its own `fields`."""
        unexpected(options, NodeOptions.__optional_keys__)
        retry = self._retry(id, options.get("retry_cycle"))
        return self._add(
            kind(
                id=id,
                name=name,
                parent=options.get("parent"),
                async_before=options.get("async_before", False),
                async_after=options.get("async_after", False),
                retry_cycle=retry,
                **fields,
            )
        )

    def _index(self, node_id: str) -> int | None:
        """Where the node added as `node_id` is in the list (None: no such node)."""
        return next((i for i, node in enumerate(self._nodes) if node.id == node_id), None)

    def _checked(self, element_id: str, what: str, value: str | None) -> str | None:
        """Text containing an expression must be exactly one safe expression, as in the parser."""
        if value is not None and ("${" in value or "#{" in value):
            self._expression(element_id, what, value)
        return value

    def _text(self, element_id: str, what: str, value: str | None) -> str | None:
        """Text evaluated when it is used: literal, one safe expression or a composite of text
        and expressions (`kermit_${loopCounter}`), as the parser reads it."""
        if value is not None and has_expression(value):
            compile_text_or_refuse(value, what, lambda message: self._error(message, element_id))
        return value

    def _expression(
        self, element_id: str, what: str, text: str, acting: frozenset[str] = NO_ACTING
    ) -> Expression:
        """`text` compiled (`acting`: what its calls may change, as `compile_expression` says)."""
        return compile_or_refuse(
            text, what, lambda message: self._error(message, element_id), acting
        )

    def _timer(self, element_id: str, timer: TimerDefinition | None) -> TimerDefinition | None:
        if timer is None:
            return None
        if timer.text != timer.text.strip():
            raise self._error("timer text must not start or end with whitespace", element_id)
        # Syntax only: the engine a model is deployed to holds its timers to its own limits.
        problem = timer_problem(timer.kind, timer.text, None)
        if problem is not None:
            raise self._error(f"timer: {problem}", element_id)
        return timer

    def _retry(self, element_id: str, retry_cycle: str | None) -> str | None:
        if retry_cycle is None:
            return None
        if retry_cycle != retry_cycle.strip():
            message = "retry_cycle must not start or end with whitespace"
            raise self._error(message, element_id)
        problem = retry_cycle_problem(retry_cycle)
        if problem is not None:
            raise self._error(problem, element_id)
        return retry_cycle

    def _form(self, element_id: str, fields: Sequence[FormField]) -> tuple[FormField, ...]:
        problem = form_problem(fields)
        if problem is not None:
            raise self._error(problem, element_id)
        return tuple(fields)

    def _named(self, element_id: str, what: str, value: str | None) -> str | None:
        if value is not None and not value:
            raise self._error(f"a {what} needs a non-empty name", element_id)
        return value

    def _handler(self, element_id: str, handler: str | None) -> None:
        if handler is not None and not is_handler_name(handler):
            message = f"handler '{handler}' is not a name or a dotted class name"
            raise self._error(message, element_id)

    def _implementation(self, id: str, handler: str | None, topic: str | None) -> None:
        self._handler(id, handler)
        if topic is not None and not topic:
            raise self._error("an external task needs a non-empty topic", id)

    def _script(
        self, element_id: str, format: str, source: str, acting: frozenset[str] = NO_ACTING
    ) -> Script:
        kind = script_format(format)
        if kind is None:
            raise self._error(f"script language '{format}' is not supported", element_id)
        if not source.strip():
            raise self._error("the script is empty", element_id)
        if kind == "expression":
            source = source.strip()
            self._expression(element_id, "script", source, acting)
        return Script(format=kind, source=source)
