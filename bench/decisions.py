"""Decisions per second: a 50-rule FIRST table with 4 inputs, evaluated in process, through the
engine, and as a business rule task, each against the same run's baseline.

(a) in process: the compiled DMN file's `evaluate` alone, no database;
(b) through the engine: `engine.evaluate_decision`, one transaction each writing its
    decision_evaluation row and outbox row; against (c), a minimal transaction (INSERT one row,
    UPDATE one row, COMMIT) on one connection;
(d) instances of start -> business rule task (the same decision) -> end, against (e),
    instances of start -> end, both one `start_latest` each.
The inputs vary so that the matching rule spreads evenly over the 50 rules (FIRST stops at it:
25 rules tried on average). (b) and (c), then (d) and (e), run in alternating turns, so each pair
sees the same server; the figures worth reading are the ratios.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from bench.engine_throughput import minimal_transactions
from bench.scratch import scratch_engine
from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions
from engine.states import InstanceState

KEY = "bench-decision"
REGIONS = ("north", "east", "south", "west", "central")
TIERS = ("bronze", "silver", "gold", "platinum", "staff")
RULES = 50
SAMPLES = 1_000


def table() -> str:
    """The DMN file: rule i matches one region, one tier and one half of the amounts."""
    rules = []
    for i in range(RULES):
        amount = "&lt; 1000" if i < RULES // 2 else "&gt;= 1000"
        cells = [f'"{REGIONS[i % 5]}"', f'"{TIERS[(i // 5) % 5]}"', amount, "[18..120]"]
        entries = "".join(
            f'<inputEntry id="In_{i}_{k}"><text>{text}</text></inputEntry>'
            for k, text in enumerate(cells)
        )
        outputs = (
            f'<outputEntry id="Out_{i}_0"><text>"offer {i}"</text></outputEntry>'
            f'<outputEntry id="Out_{i}_1"><text>amount * {i % 7 + 1} / 100</text></outputEntry>'
        )
        rules.append(f'<rule id="Rule_{i}">{entries}{outputs}</rule>')
    inputs = "".join(
        f'<input id="Input_{name}" label="{name}"><inputExpression id="Expr_{name}" '
        f'typeRef="{kind}"><text>{name}</text></inputExpression></input>'
        for name, kind in (
            ("region", "string"),
            ("tier", "string"),
            ("amount", "integer"),
            ("age", "integer"),
        )
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" '
        'id="Definitions_Bench" name="Bench" namespace="http://camunda.org/schema/1.0/dmn">'
        f'<decision id="{KEY}" name="Offer"><decisionTable id="Table" hitPolicy="FIRST">'
        f'{inputs}<output id="Output_offer" name="offer" typeRef="string" />'
        '<output id="Output_discount" name="discount" typeRef="double" />'
        f"{''.join(rules)}</decisionTable></decision></definitions>"
    )


def samples(seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "region": rng.choice(REGIONS),
            "tier": rng.choice(TIERS),
            "amount": rng.randrange(0, 2000),
            "age": rng.randrange(18, 90),
        }
        for _ in range(SAMPLES)
    ]


def rate(action: Callable[[int], object], seconds: float) -> tuple[int, float]:
    """(times `action(i)` ran, seconds it took), running it for about `seconds`."""
    count = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline or count < 3:
        action(count)
        count += 1
    return count, time.perf_counter() - start


def in_process(seconds: float) -> float:
    compiled = compile_definitions(parse_dmn(table(), "bench.dmn"), "bench.dmn")
    inputs = samples()
    matched = {compiled.evaluate(KEY, v).evaluations[0].matched_rules for v in inputs}
    assert len(matched) == RULES, "the samples reach every rule"
    count, took = rate(lambda i: compiled.evaluate(KEY, inputs[i % SAMPLES]), seconds)
    return count / took


def alternating(actions: dict[str, Callable[[int], object]], seconds: float) -> dict[str, float]:
    """Per second for each action, run in four alternating turns sharing `seconds` each."""
    totals = {name: [0, 0.0] for name in actions}
    turns = 4
    for _ in range(turns):
        for name, action in actions.items():
            count, took = rate(action, seconds / turns)
            totals[name][0] += count
            totals[name][1] += took
    return {name: count / took for name, (count, took) in totals.items()}


def run(url: str | None, seconds: float) -> dict[str, float]:
    figures = {"in_process": in_process(seconds)}
    inputs = samples()
    with scratch_engine(url) as engine:
        engine.deploy(table())
        engine.deploy(
            ProcessBuilder("bench-rule")
            .start_event("start")
            .business_rule_task(
                "decide",
                decision_ref=KEY,
                result_variable="offer",
                map_decision_result="singleResult",
            )
            .end_event("end")
            .chain("start", "decide", "end")
            .build(),
            ProcessBuilder("bench-empty")
            .start_event("start")
            .end_event("end")
            .chain("start", "end")
            .build(),
        )
        for i in range(50):  # the pool, the compiled-file cache and prepared statements
            engine.evaluate_decision(KEY, inputs[i])
            engine.start_latest("bench-rule", inputs[i])
            engine.start_latest("bench-empty", inputs[i])
        last = engine.start_latest("bench-rule", inputs[0])
        assert last.state is InstanceState.COMPLETED
        figures.update(evaluations(engine, inputs, seconds))
        figures.update(
            alternating(
                {
                    "rule_task": lambda i: engine.start_latest("bench-rule", inputs[i % SAMPLES]),
                    "empty": lambda i: engine.start_latest("bench-empty", inputs[i % SAMPLES]),
                },
                seconds,
            )
        )
    return figures


def evaluations(engine: Engine, inputs: list[dict[str, Any]], seconds: float) -> dict[str, float]:
    url = engine.database.url
    baseline = minimal_transactions(url, seconds / 2)
    through = alternating(
        {"engine": lambda i: engine.evaluate_decision(KEY, inputs[i % SAMPLES])}, seconds
    )
    baseline_after = minimal_transactions(url, seconds / 2)
    return {"engine": through["engine"], "minimal": (baseline + baseline_after) / 2}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    f = run(args.database_url, args.seconds)
    print(f"{'':46} {'per s':>9}  ratio")
    print(f"{'(a) in process, CompiledDefinitions.evaluate':46} {f['in_process']:>9.0f}")
    print(
        f"{'(b) engine.evaluate_decision (history row)':46} {f['engine']:>9.0f}  "
        f"{f['engine'] / f['in_process']:.4f} of (a), {f['engine'] / f['minimal']:.3f} of (c)"
    )
    print(f"{'(c) minimal transaction':46} {f['minimal']:>9.0f}")
    print(
        f"{'(d) start -> business rule task -> end':46} {f['rule_task']:>9.0f}  "
        f"{f['rule_task'] / f['empty']:.3f} of (e)"
    )
    print(f"{'(e) start -> end':46} {f['empty']:>9.0f}")


if __name__ == "__main__":
    main()
