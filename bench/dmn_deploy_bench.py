"""DMN deployment against table size: a decision table of N rules parsed, compiled and deployed.

For each of `--sizes` a table of N rules (three inputs: a string, a number range, a comparison;
two outputs) is written, then timed three ways, best of `--runs`: parsed alone (`parse_dmn`),
parsed and every entry compiled (`compile_definitions`), and deployed through the engine (one
`Deploy` command: parse, compile, the definition row and its source, on the benchmark's own
embedded server). Each line gives the ratio to the size before it: work that grows with the table
doubles when the rules double (a time ratio near the size ratio); a duplicate-id check walking
every earlier rule for each rule made it four times. Sizes past the rule limit are deployed with
the limit raised to fit.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.api import Engine
from engine.core.settings import EngineSettings
from engine.dmn import parse_dmn
from engine.dmn.evaluate import compile_definitions

SIZES = (1_500, 3_000, 6_000, 12_000)
TIERS = ("bronze", "silver", "gold", "platinum", "staff")


def rules_table(rules: int, key: str = "bench-rules") -> bytes:
    """A UNIQUE table of `rules` rules: rule i matches one tier and one band of amounts."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" '
        f'id="Definitions_{rules}" name="Rules" namespace="http://camunda.org/schema/1.0/dmn">\n'
        f'<decision id="{key}" name="Rules"><decisionTable id="Table" hitPolicy="UNIQUE">\n'
        '<input id="Input_tier" label="Tier"><inputExpression id="Expr_tier" typeRef="string">'
        "<text>tier</text></inputExpression></input>\n"
        '<input id="Input_amount" label="Amount"><inputExpression id="Expr_amount" '
        'typeRef="integer"><text>amount</text></inputExpression></input>\n'
        '<input id="Input_age" label="Age"><inputExpression id="Expr_age" typeRef="integer">'
        "<text>age</text></inputExpression></input>\n"
        '<output id="Output_offer" name="offer" typeRef="string" />\n'
        '<output id="Output_rate" name="rate" typeRef="double" />\n'
    ]
    for i in range(rules):
        band = i // len(TIERS)
        parts.append(
            f'<rule id="Rule_{i}">'
            f'<inputEntry id="In_{i}_0"><text>"{TIERS[i % len(TIERS)]}"</text></inputEntry>'
            f'<inputEntry id="In_{i}_1"><text>[{band * 100}..{band * 100 + 99}]</text></inputEntry>'
            f'<inputEntry id="In_{i}_2"><text>&gt;= 18</text></inputEntry>'
            f'<outputEntry id="Out_{i}_0"><text>"offer {i}"</text></outputEntry>'
            f'<outputEntry id="Out_{i}_1"><text>amount * {i % 7 + 1} / 100</text></outputEntry>'
            "</rule>\n"
        )
    parts.append("</decisionTable></decision></definitions>\n")
    return "".join(parts).encode()


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """The shortest of `runs` runs, each from a collected heap (a full collection that one run
    happens to trigger then costs what the table made, not what earlier runs left)."""
    times = []
    for _ in range(runs):
        gc.collect()
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def measure(engine: Engine, rules: int, runs: int) -> tuple[float, float, float]:
    """(parse, parse and compile, deploy) seconds for a table of `rules` rules."""
    data = rules_table(rules)
    parse = best_of(runs, lambda: parse_dmn(data, "rules.dmn", None))
    compiled = best_of(runs, lambda: compile_definitions(parse_dmn(data, "rules.dmn", None), ""))
    # Each deployment a new key, so that none is filtered out as unchanged.
    deploys = iter(range(runs))
    deploy = best_of(
        runs,
        lambda: engine.deploy(
            rules_table(rules, f"rules-{rules}-{next(deploys)}"), name=f"rules-{rules}.dmn"
        ),
    )
    return parse, compiled, deploy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="rules per table")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    settings = EngineSettings(max_decision_rules=max(sizes))
    with (
        tempfile.TemporaryDirectory(prefix="interlock-bench-") as home,
        Engine(args.database_url, home=Path(home), settings=settings) as engine,
    ):
        engine.deploy(rules_table(10, "warm-up"), name="warm-up.dmn")
        previous: tuple[int, float] | None = None
        for rules in sizes:
            parse, compiled, deploy = measure(engine, rules, args.runs)
            line = (
                f"{rules:>6} rules: parse {parse:6.3f} s, parse and compile {compiled:6.3f} s, "
                f"deploy {deploy:6.3f} s"
            )
            if previous is not None:
                size_ratio, time_ratio = rules / previous[0], deploy / previous[1]
                line += (
                    f", deploy x{time_ratio:4.2f} the time of {previous[0]} rules for "
                    f"x{size_ratio:.2f} the rules (per rule x{time_ratio / size_ratio:.2f}, "
                    "linear 1)"
                )
            print(line, flush=True)
            previous = (rules, deploy)


if __name__ == "__main__":
    main()
