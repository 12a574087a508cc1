"""Evaluating decisions inside a command's transaction, and the direct evaluation command.

A business rule task (engine/semantics/rules.py) and `EvaluateDecision` both go through
`evaluate`: it evaluates the decision definition the binding picked (`find`) with its DMN file
compiled once per process (engine/core/decision_cache.py `deployed`), and writes one
decision_evaluation row per decision evaluated (the asked one and each it required) in the
command's transaction, so the history holds an evaluation exactly when its command committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar
from uuid import UUID

from engine.core import decision_cache
from engine.core.executor import Result, Tx
from engine.core.permits import EVALUATE_DECISION, Permit
from engine.core.permits import check as check_permit
from engine.db.ids import new_id
from engine.dmn.evaluate import DecisionResult
from engine.errors import BadRequest, NotFound
from engine.feel import FeelError, feel_string
from engine.language.json_input import check
from engine.schema import OUTBOX_CHANNEL
from engine.semantics.rules import DecisionCall, DecisionEvaluator
from engine.states import OutboxEvent
from engine.store import decisions


def json_ready(value: Any) -> Any:
    """A value as JSON keeps it: dates as ISO text, durations as FEEL writes them, decimals as
    numbers."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    try:
        return feel_string(value)
    except FeelError:  # not a FEEL value (a variable of another kind): its text
        return str(value)


@dataclass(frozen=True)
class Where:
    """Where a decision is evaluated: a business rule task's token, or nowhere (direct)."""

    instance_id: UUID | None = None
    process_definition_id: str | None = None
    token_id: UUID | None = None
    node_id: str | None = None
    history_id: UUID | None = None
    user_id: str | None = None


@dataclass(frozen=True)
class Evaluated:
    result: DecisionResult
    definition: decisions.DecisionRow
    # The decision_evaluation row of the asked decision.
    evaluation_id: UUID


def find(
    tx: Tx,
    key: str,
    *,
    binding: str = "latest",
    version: int | None = None,
    version_tag: str | None = None,
    process_definition_id: str | None = None,
) -> decisions.DecisionRow:
    """The decision definition `key` that `binding` picks (Camunda's decisionRefBinding), of the
    tenant of the process definition `process_definition_id` when a process calls it."""
    row = decisions.find(
        tx.conn,
        key,
        version=version if binding == "version" else None,
        version_tag=version_tag if binding == "versionTag" else None,
        deployed_with=process_definition_id if binding == "deployment" else None,
        called_from=process_definition_id,
    )
    if row is None:
        picked = {
            "version": f" version {version}",
            "versionTag": f" with version tag '{version_tag}'",
            "deployment": " in the process's deployment",
        }.get(binding, "")
        raise NotFound(f"no decision definition '{key}'{picked} is deployed", decision_key=key)
    return row


def evaluate(
    tx: Tx, row: decisions.DecisionRow, variables: Mapping[str, Any], where: Where
) -> Evaluated:
    """Evaluate the decision `row` over `variables` and write its evaluations' rows."""
    found = decision_cache.deployed(tx.conn, row.id)
    if found is None:
        raise NotFound(f"decision definition {row.id} does not exist")
    outcome = found.file.evaluate(row.key, variables)
    root_id = new_id()
    rows: list[decisions.EvaluationRow] = []
    for evaluation in outcome.evaluations:
        asked = evaluation.decision_id == row.key
        rows.append(
            decisions.EvaluationRow(
                id=root_id if asked else new_id(),
                root_id=None if asked else root_id,
                definition_id=found.deployed_with.get(evaluation.decision_id, row.id),
                decision_key=evaluation.decision_id,
                evaluated_at=tx.now,
                instance_id=where.instance_id,
                process_definition_id=where.process_definition_id,
                token_id=where.token_id,
                node_id=where.node_id,
                history_id=where.history_id,
                user_id=where.user_id,
                variables=json_ready(evaluation.variables),
                inputs=json_ready(
                    [
                        {"id": i.id, "label": i.label, "type": i.type_ref, "value": i.value}
                        for i in evaluation.inputs
                    ]
                ),
                matched_rules=json_ready(list(evaluation.matched_rules)),
                outputs=json_ready(
                    [
                        {
                            "id": o.id,
                            "label": o.label,
                            "name": o.name,
                            "rule_id": o.rule_id,
                            "rule_order": o.rule_order,
                            "type": o.type_ref,
                            "value": o.value,
                        }
                        for o in evaluation.outputs
                    ]
                ),
                result=json_ready(evaluation.result),
                collect_value=json_ready(evaluation.collect_value),
            )
        )
    # The required decisions' rows first, the asked one's last, as they were evaluated.
    decisions.insert_evaluations(tx.conn, rows)
    return Evaluated(outcome, row, root_id)


def evaluator(tx: Tx) -> DecisionEvaluator:
    """What a business rule task of this command calls to evaluate its decision."""

    def evaluate_call(call: DecisionCall) -> tuple[list[dict[str, Any]], UUID]:
        row = find(
            tx,
            call.key,
            binding=call.binding,
            version=call.version,
            version_tag=call.version_tag,
            process_definition_id=call.process_definition_id,
        )
        where = Where(
            instance_id=call.instance_id,
            process_definition_id=call.process_definition_id,
            token_id=call.token_id,
            node_id=call.node_id,
            history_id=call.history_id,
        )
        evaluated = evaluate(tx, row, call.variables, where)
        return evaluated.result.result, evaluated.evaluation_id

    return evaluate_call


@dataclass(frozen=True)
class DecisionEvaluated(Result):
    evaluation_id: str
    definition_id: str
    key: str
    version: int
    # The decision's result: a list of entries (output name to value).
    result: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class EvaluateDecision:
    """Evaluate a decision outside any instance: by definition id, or the latest version of a
    key (or the version / version tag given). Its evaluations are history rows like a business
    rule task's, naming the user who asked, and an outbox event names the asked one's row."""

    name: ClassVar[str] = "EvaluateDecision"
    result_type: ClassVar[type[Result]] = DecisionEvaluated
    permits: ClassVar[tuple[Permit, ...]] = (EVALUATE_DECISION,)

    variables: Mapping[str, Any]
    key: str | None = None
    definition_id: str | None = None
    version: int | None = None
    version_tag: str | None = None

    def execute(self, tx: Tx) -> DecisionEvaluated:
        # What no history row could hold (NUL, lone surrogates, NaN) is refused naming its path.
        check(dict(self.variables))
        if self.definition_id is not None:
            row = decisions.by_id(tx.conn, self.definition_id)
            if row is None:
                raise NotFound(f"decision definition {self.definition_id} does not exist")
        elif self.key is not None:
            binding = (
                "version"
                if self.version is not None
                else "versionTag"
                if self.version_tag is not None
                else "latest"
            )
            row = find(
                tx, self.key, binding=binding, version=self.version, version_tag=self.version_tag
            )
        else:
            raise BadRequest("a decision to evaluate needs a key or a definition id", field="key")
        check_permit(tx, EVALUATE_DECISION, decision=row.key)
        user = tx.actor.user if tx.actor is not None else None
        evaluated = evaluate(tx, row, self.variables, Where(user_id=user))
        decisions.insert_outbox(
            tx.conn, OutboxEvent.DECISION_EVALUATED, evaluated.evaluation_id, row.key
        )
        tx.announcements.add(OUTBOX_CHANNEL)
        return DecisionEvaluated(
            str(evaluated.evaluation_id), row.id, row.key, row.version, evaluated.result.result
        )
