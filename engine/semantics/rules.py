"""Business rule tasks: a token evaluates a decision and goes on, in the command's transaction.

The evaluation itself (finding the definition the binding picks, evaluating it, writing its
history rows) is the command layer's (`DecisionEvaluator`, engine/commands/decisions.py), given
to the advance: semantics stay free of SQL. The result is mapped as Camunda's
`camunda:mapDecisionResult` says:

- `singleEntry`: the one output value of the one result entry (null without an entry);
- `singleResult`: the one result entry, a map of output name to value (null without one);
- `collectEntries`: the one output value of each entry, as a list;
- `resultList` (the default): every entry, as a list of maps.

Each is checked on the result the evaluation gave, not on the outputs the table declares (a rule
that fills one output of two gives a one-output entry). A mapping the result does not fit
(several entries for singleEntry or singleResult, several outputs for singleEntry or
collectEntries) fails the task with Camunda's message, like a decision's own failure: the
command, or in a job the usual retries and then an incident.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import UUID

from engine.core.runtime import Event, Token
from engine.errors import ExpressionError, InterlockError, NeedsTransaction
from engine.model import BusinessRuleTask, CalledBinding
from engine.semantics import conditions
from engine.semantics.calls import expression_text
from engine.semantics.events import EventMoves
from engine.states import OutboxEvent


@dataclass(frozen=True)
class DecisionCall:
    """What a business rule task asks the command layer to evaluate, and where."""

    key: str
    binding: CalledBinding
    version: int | None
    version_tag: str | None
    variables: Mapping[str, Any]
    instance_id: UUID
    process_definition_id: str
    token_id: UUID
    node_id: str
    history_id: UUID | None


class DecisionEvaluator(Protocol):
    def __call__(self, call: DecisionCall) -> tuple[list[dict[str, Any]], UUID]:
        """The decision's result entries and the id of its evaluation's history row."""
        ...


class RuleMoves(EventMoves):
    decisions: DecisionEvaluator | None

    def _business_rule_task(self, token: Token, node: BusinessRuleTask) -> None:
        run = self.run
        if self.optimistic or self.decisions is None:
            raise NeedsTransaction(f"business rule task '{node.id}' evaluates a decision")
        values = run.values_for(token)
        context = self._context(token, values)
        what = f"business rule task '{node.id}'"
        key = expression_text(
            what, node.id, node.decision_ref, "camunda:decisionRef", values, context
        )
        version = None
        if node.version is not None:
            written = expression_text(
                what, node.id, node.version, "camunda:decisionRefVersion", values, context
            )
            if not written.strip().isdigit():
                raise ExpressionError(
                    f"camunda:decisionRefVersion of {what} is '{written}', not a version number",
                    node_id=node.id,
                )
            version = int(written)
        call = DecisionCall(
            key=key,
            binding=node.binding,
            version=version,
            version_tag=node.version_tag,
            variables=values,
            instance_id=run.instance.id,
            process_definition_id=run.instance.definition_id,
            token_id=token.id,
            node_id=node.id,
            history_id=token.visit_id,
        )
        try:
            result, evaluation_id = self.decisions(call)
        except InterlockError as error:  # no such decision, or its evaluation failed
            raise ExpressionError(f"{what}: {error.message}", node_id=node.id) from None
        run.events.append(
            Event(OutboxEvent.DECISION_EVALUATED.value, token.id, node.id, evaluation_id)
        )
        if node.result_variable is not None:
            mapped = map_decision_result(node, result)
            self.set_variables({node.result_variable: mapped}, token)
        if conditions.settle(self, token):
            self._leave(token, node)


# The name of each mapping's mapper in Camunda's messages.
_MAPPERS = {
    "singleEntry": "SingleEntryDecisionResultMapper",
    "singleResult": "SingleResultDecisionResultMapper",
    "collectEntries": "CollectEntriesDecisionResultMapper",
    "resultList": "ResultListDecisionResultMapper",
}


def map_decision_result(node: BusinessRuleTask, result: list[dict[str, Any]]) -> Any:
    """The decision's result as `camunda:mapDecisionResult` maps it into the result variable,
    checked on the result itself as Camunda's mappers check it: the outputs a table declares
    do not matter, only the entries and outputs the evaluation gave."""
    mapping = node.map_decision_result
    if mapping == "resultList":
        return [dict(entry) for entry in result]
    if mapping == "collectEntries":
        names = sorted({name for entry in result for name in entry})
        if len(names) > 1:
            raise _refused(
                node,
                result,
                "ENGINE-22002",
                ". The decision outputs should only contains values for one output name but "
                f"found '{_render(names)}'.",
            )
        return [next(iter(entry.values()), None) for entry in result]
    if len(result) > 1:
        raise _refused(
            node,
            result,
            "ENGINE-22001",
            ": DMN-01011 Unable to get single decision result as it has more than one result "
            f"'{_render(result)}'",
        )
    if not result:
        return None
    if mapping == "singleResult":
        return dict(result[0])
    if len(result[0]) > 1:
        raise _refused(
            node,
            result,
            "ENGINE-22001",
            ": DMN-01010 Unable to get single decision result entry as it has more than one "
            f"entry '{_render(result[0])}'",
        )
    return next(iter(result[0].values()), None)


def _refused(
    node: BusinessRuleTask, result: list[dict[str, Any]], code: str, why: str
) -> ExpressionError:
    """The failure of a mapping the result does not fit, in Camunda's words."""
    mapping = node.map_decision_result
    return ExpressionError(
        f"camunda:mapDecisionResult {mapping} of business rule task '{node.id}': {code} The "
        f"decision result mapper '{_MAPPERS[mapping]}' failed to process '{_render(result)}'" + why,
        node_id=node.id,
    )


def _render(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)
