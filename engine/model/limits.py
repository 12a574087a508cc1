"""How large a model a deployment accepts (`ModelLimits`) and the defaults."""

from __future__ import annotations

from dataclasses import dataclass

from engine.language.timers import DEFAULT_LIMITS as DEFAULT_TIMER_LIMITS
from engine.language.timers import TimerLimits

# The largest BPMN input a deployment accepts unless its settings say otherwise.
MAX_BPMN_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ModelLimits:
    """How large a model a deployment accepts: bytes of BPMN or DMN input, flow nodes in one
    process, flows into or out of one node (the branches of a split, the arrivals of a join),
    rules in one decision table, and decisions in one DMN file (each decision's definition row
    holds its whole file). The parsers refuse a model beyond them before any work that grows
    faster than its size, with a ModelError naming the element that went over. `EngineSettings`
    carries a deployment's limits (`max_bpmn_bytes`, `max_process_nodes`, `max_fan_out`,
    `max_decision_rules`, `max_dmn_decisions`); these are their defaults."""

    max_bytes: int = MAX_BPMN_BYTES
    max_nodes: int = 10_000
    max_fan_out: int = 1_000
    max_rules: int = 10_000
    max_decisions: int = 100
    # The shortest cycle and longest duration a timer may be deployed with.
    timers: TimerLimits = DEFAULT_TIMER_LIMITS


DEFAULT_LIMITS = ModelLimits()
