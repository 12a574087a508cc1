"""The error a decision raises while evaluated (a file refused at deployment is a ModelError)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import ExpressionError


class DmnEvaluationError(ExpressionError):
    """A decision whose evaluation breaks its table's rules (two matches under UNIQUE, ...).
    Names the decision and the rules involved."""

    code = "DmnEvaluationError"

    def __init__(self, message: str, *, decision_id: str, rule_ids: Sequence[str] = ()) -> None:
        super().__init__(
            f"decision '{decision_id}': {message}", decision_id=decision_id, rule_ids=list(rule_ids)
        )
        self.decision_id = decision_id
        self.rule_ids = tuple(rule_ids)
