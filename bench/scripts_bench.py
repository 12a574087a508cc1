"""What a script of a model costs: per call in the isolate, and per instance in the engine.

Isolate: every script is one evaluation in a script process of the pool (started by the first
script that needs it; again only after a script timed out, ran out of memory or left a global that
cannot be deleted). Measured without a database: a listener-sized script (reads a variable, sets
one, sets an assignee), a JavaScript condition, and starting a new script process.

Engine: instances per second of a process whose one activity is a script task (with a start
listener script and a JavaScript condition after it) against the same process with a none task
and a `${}` condition, started through the Python API on the benchmark's own embedded server.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.scripting import Isolate, Subject, TaskFacts, hosts

LISTENER = "task.setAssignee(execution.getVariable('approver')); execution.setVariable('n', n + 1);"
SUBJECT = Subject(
    execution_id="e",
    instance_id="i",
    activity_id="Task",
    event_name="create",
    task=TaskFacts(id="t", name="Task", assignee=None, priority=50, task_definition_key="Task"),
)


def per_call(label: str, calls: int, work: Callable[[], object]) -> None:
    work()
    started = time.perf_counter()
    for _ in range(calls):
        work()
    elapsed = time.perf_counter() - started
    print(f"{label}: {elapsed / calls * 1000:.3f} ms per call ({calls} calls)")


def isolate_costs(calls: int) -> None:
    isolate = Isolate()
    variables = {"approver": "mary", "n": 1, "amount": 1200}
    per_call("listener script", calls, lambda: isolate.run(LISTENER, variables, SUBJECT, where="x"))
    per_call(
        "JavaScript condition",
        calls,
        lambda: isolate.run("amount > 1000", variables, SUBJECT, where="x"),
    )

    def fresh() -> object:
        host = hosts.Host()  # what a retired process costs: its replacement starts
        host.retire()
        return host

    per_call("a new script process (start and stop)", max(1, calls // 100), fresh)


def model(scripted: bool) -> ProcessModel:
    builder = ProcessBuilder("scripted" if scripted else "plain").start_event("s")
    if scripted:
        builder.script_task("work", script="execution.setVariable('n', n + 1); n * 2")
        builder.listener("work", "start", script="execution.setVariable('seen', true)")
    else:
        builder.task("work")
    builder.exclusive_gateway("g", default="to_low").end_event("high").end_event("low")
    builder.chain("s", "work", "g").flow("g", "low", id="to_low")
    if scripted:
        builder.flow("g", "high", condition="n > 0", condition_language="javascript")
    else:
        builder.flow("g", "high", condition="${n > 0}")
    return builder.build()


def engine_costs(database_url: str | None, instances: int) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="interlock-bench-") as home,
        Engine(database_url, home=Path(home)) as engine,
    ):
        rates: dict[str, float] = {}
        for scripted in (False, True):
            key = model(scripted).key
            engine.deploy(model(scripted))
            engine.start_latest(key, {"n": 1})
            started = time.perf_counter()
            for _ in range(instances):
                engine.start_latest(key, {"n": 1})
            rates[key] = instances / (time.perf_counter() - started)
    plain, scripted_rate = rates["plain"], rates["scripted"]
    print(
        f"engine: {plain:.0f} instances/s with a none task, {scripted_rate:.0f} instances/s with "
        f"a script task, a listener script and a JavaScript condition "
        f"({(1 / scripted_rate - 1 / plain) * 1000:.2f} ms more per instance)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--instances", type=int, default=300)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    isolate_costs(args.calls)
    engine_costs(args.database_url, args.instances)


if __name__ == "__main__":
    main()
