"""Decision Model and Notation: DMN 1.1 to 1.3 files, their decision tables and requirement graphs.

The model keeps every expression as text with its language; evaluating them is the evaluator's
work. `hit_policy` turns already-evaluated rules into a table's result, `graph` orders a decision
after the decisions it requires.
"""

from __future__ import annotations

from engine.dmn.errors import DmnEvaluationError
from engine.dmn.model import (
    Aggregation,
    Decision,
    DecisionTable,
    DmnDefinitions,
    Entry,
    ExpressionLanguage,
    HitPolicy,
    InputClause,
    LiteralExpression,
    OutputClause,
    Rule,
)
from engine.dmn.parser import MAX_DMN_BYTES, parse_dmn

__all__ = [
    "MAX_DMN_BYTES",
    "Aggregation",
    "Decision",
    "DecisionTable",
    "DmnDefinitions",
    "DmnEvaluationError",
    "Entry",
    "ExpressionLanguage",
    "HitPolicy",
    "InputClause",
    "LiteralExpression",
    "OutputClause",
    "Rule",
    "parse_dmn",
]
