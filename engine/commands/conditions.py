"""Conditional start events: the variables a caller gives start an instance of every latest
definition whose conditional start event's condition holds over them (Camunda's
evaluateStartConditions), in one transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from engine.commands.instances import start_instance
from engine.core.executor import Result, Tx
from engine.core.permits import START_INSTANCE, Permit, check
from engine.errors import ExpressionError, NotFound
from engine.language.expression_context import ExpressionContext
from engine.language.variables import TypedValue
from engine.model import StartEvent
from engine.store import definitions, start_triggers


@dataclass(frozen=True)
class StartedInstance:
    instance_id: str
    definition_id: str
    definition_key: str
    business_key: str | None
    state: str


@dataclass(frozen=True)
class ConditionResult(Result):
    # The instances started, in the order of their definitions' keys.
    started: list[StartedInstance] = field(default_factory=list)


@dataclass(frozen=True)
class EvaluateStartConditions:
    """Evaluate the conditional start events of the latest definitions (of `definition_id`
    alone, if given) over `variables`; each whose condition holds starts an instance with
    `variables` and `business_key`. A start event narrowed to a camunda:variableName is
    evaluated only when `variables` has that name. No conditional start event to evaluate at all
    is NotFound; none that holds starts nothing."""

    name: ClassVar[str] = "EvaluateStartConditions"
    result_type: ClassVar[type[Result]] = ConditionResult
    permits: ClassVar[tuple[Permit, ...]] = (START_INSTANCE,)

    variables: Mapping[str, TypedValue] = field(default_factory=dict)
    business_key: str | None = None
    definition_id: str | None = None

    def execute(self, tx: Tx) -> ConditionResult:
        found = start_triggers.conditional(tx.conn, self.definition_id)
        if not found:
            where = f" of process definition '{self.definition_id}'" if self.definition_id else ""
            raise NotFound(f"no conditional start event{where} is deployed")
        values = {name: typed.value for name, typed in self.variables.items()}
        started: list[StartedInstance] = []
        for subscription in found:
            definition = definitions.by_id(tx.conn, subscription.definition_id)
            assert definition is not None
            model = tx.definitions.get(tx.conn, definition.id, definition.key)
            start = model.node(subscription.node_id)
            assert isinstance(start, StartEvent) and start.conditional is not None
            trigger = start.conditional
            if trigger.variable_name is not None and trigger.variable_name not in values:
                continue
            if not _holds(start, values, tx):
                continue
            check(tx, START_INSTANCE, definition=definition.key)
            result = start_instance(tx, definition, model, start, self.variables, self.business_key)
            started.append(
                StartedInstance(
                    result.instance_id,
                    result.definition_id,
                    definition.key,
                    self.business_key,
                    result.state,
                )
            )
        return ConditionResult(started)


def _holds(start: StartEvent, values: Mapping[str, object], tx: Tx) -> bool:
    """The start condition over the given variables alone (there is no execution yet); a name
    they do not have makes it false, as in Camunda."""
    assert start.conditional is not None
    condition = start.conditional.condition
    try:
        value = condition.evaluate(values, ExpressionContext(now=tx.now))
    except ExpressionError as exc:
        if exc.message.startswith("unknown variable"):
            return False
        message = f"condition of conditional start event '{start.id}' failed: {exc.message}"
        raise ExpressionError(message, node_id=start.id) from exc
    if value is not None and not isinstance(value, bool):
        message = f"condition of conditional start event '{start.id}' gave {value!r}, not a boolean"
        raise ExpressionError(message, node_id=start.id)
    return bool(value)
