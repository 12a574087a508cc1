"""BPMN parsing against model size, and a wide parallel split deployed, started and cancelled.

Parsing: a chain of N tasks (start, N tasks, end) is parsed and validated, without a database, for
each of `--sizes`; the best of three runs is printed with the ratio to the size before. Work that
grows with the model doubles when the size doubles (a time ratio near the size ratio); a walk of
every flow for every node made it four times. The sizes past the default node limit are parsed with
the limit raised to fit.

Wide split: start, a parallel split into `--branches` branches (a user task with a timer on its
edge and an external task, alternately), a join, end; deployed with the fan-out limit raised, one
instance started (every branch then waits) and cancelled (one command terminates every token and
retires every task, timer and subscription), on the benchmark's own embedded server.
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from engine.api import Engine
from engine.bpmn.parser import parse_bpmn
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.model import ModelLimits, ProcessModel, TimerDefinition

T = TypeVar("T")
SIZES = (1_000, 2_000, 4_000, 8_000, 50_000)
BRANCHES = 5_000

_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="Defs" '
    'targetNamespace="http://bpmn.io/schema/bpmn">\n'
    '<bpmn:process id="chain" isExecutable="true">\n<bpmn:startEvent id="Start"/>\n'
)


def chain_xml(tasks: int) -> bytes:
    """A process that runs `tasks` tasks one after the other (50,000 of them in 4.8 MB, within
    the default size limit)."""
    parts = [_HEAD]
    previous = "Start"
    for n in range(tasks):
        parts.append(
            f'<bpmn:task id="T{n}"/>'
            f'<bpmn:sequenceFlow id="F{n}" sourceRef="{previous}" targetRef="T{n}"/>\n'
        )
        previous = f"T{n}"
    parts.append(
        '<bpmn:endEvent id="End"/>\n'
        f'<bpmn:sequenceFlow id="FEnd" sourceRef="{previous}" targetRef="End"/>\n'
        "</bpmn:process>\n</bpmn:definitions>\n"
    )
    return "".join(parts).encode()


def wide_split(branches: int) -> ProcessModel:
    """Start, a split into `branches` waiting branches, a join, end."""
    builder = ProcessBuilder("wide").start_event("Start").parallel_gateway("Split")
    builder.parallel_gateway("Join").end_event("End").chain("Start", "Split")
    builder.chain("Join", "End")
    for n in range(branches):
        if n % 2:
            builder.service_task(f"Work_{n}", topic="wide")
        else:
            builder.user_task(f"Work_{n}")
            timer = TimerDefinition(kind="duration", text="P1D")
            builder.boundary_event(f"Late_{n}", f"Work_{n}", timer=timer)
            builder.end_event(f"LateEnd_{n}").chain(f"Late_{n}", f"LateEnd_{n}")
        builder.chain("Split", f"Work_{n}", "Join")
    return builder.build()


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    began = time.perf_counter()
    result = fn()
    return time.perf_counter() - began, result


def parse_sizes(sizes: list[int]) -> None:
    previous: tuple[int, float] | None = None
    for size in sizes:
        data = chain_xml(size)
        limits = ModelLimits(max_bytes=max(len(data), ModelLimits().max_bytes), max_nodes=size + 2)
        seconds = best_of(3, functools.partial(parse_bpmn, data, "chain", limits))
        line = f"chain of {size:>6} tasks ({len(data) / 1e6:4.1f} MB): parse {seconds:7.3f} s"
        if previous is not None:
            size_ratio, time_ratio = size / previous[0], seconds / previous[1]
            line += (
                f", x{time_ratio:5.2f} the time of {previous[0]} tasks for x{size_ratio:.2f} "
                f"the size (per task x{time_ratio / size_ratio:.2f}, linear 1)"
            )
        print(line, flush=True)
        previous = (size, seconds)


def wide_instance(database_url: str | None, branches: int) -> None:
    model = wide_split(branches)
    settings = EngineSettings(max_fan_out=branches, max_process_nodes=len(model.nodes))
    # As bench.scratch does, with the limits raised to fit the model.
    with (
        tempfile.TemporaryDirectory(prefix="interlock-bench-") as home,
        Engine(database_url, home=Path(home), settings=settings) as engine,
    ):
        deploy, _ = timed(lambda: engine.deploy(model))
        start, handle = timed(lambda: engine.start_latest("wide"))
        cancel, state = timed(handle.cancel)
    print(
        f"split of {branches} branches ({len(model.nodes)} nodes): deploy {deploy:.2f} s, "
        f"start {start:.2f} s, cancel {cancel:.2f} s (instance {state})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="tasks per chain")
    parser.add_argument("--branches", type=int, default=BRANCHES)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    parse_sizes([int(size) for size in args.sizes.split(",")])
    wide_instance(args.database_url, args.branches)


if __name__ == "__main__":
    main()
