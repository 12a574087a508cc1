"""Start, split, two handlers, join, end: the smallest parallel process, run to completion.

python -m examples.parallel_gateway
"""

from __future__ import annotations

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.model import ProcessModel


def parallel_demo() -> ProcessModel:
    return (
        ProcessBuilder("parallel-demo", name="Parallel demo")
        .start_event("start", "Start")
        .parallel_gateway("split", "Split")
        .service_task("worker_a", "Worker A", handler="workerA")
        .service_task("worker_b", "Worker B", handler="workerB")
        .parallel_gateway("join", "Join")
        .end_event("end", "End")
        .chain("start", "split")
        .chain("split", "worker_a", "join")
        .chain("split", "worker_b", "join")
        .chain("join", "end")
        .build()
    )


def main(engine: Engine | None = None) -> int:
    own_engine = engine is None
    engine = engine or Engine()
    try:

        @engine.handler("workerA")
        def worker_a(ctx: TaskContext) -> dict[str, object]:
            print("  > worker-a executed")
            return {"a_done": True}

        @engine.handler("workerB")
        def worker_b(ctx: TaskContext) -> dict[str, object]:
            print("  > worker-b executed")
            return {"b_done": True}

        deployment = engine.deploy(parallel_demo())
        definition = deployment.definitions[0]
        print(f"deployed {definition['key']} version {definition['version']}")
        instance = engine.start_latest("parallel-demo")
        print(f"instance {instance.id}: Created -> Active -> {instance.state.value}")
        for path in instance.history():
            lineage = f"parent {path.parent_id}" if path.parent_id else "root"
            if path.merged_into:
                lineage += f", merged into {path.merged_into}"
            steps = " -> ".join(step.node_id for step in path.steps)
            print(f"  track {path.track_id} ({lineage}): {steps} [{path.terminal.value}]")
        state = instance.wait_completion(timeout=10)
        print(f"parallel-demo {state.value}: split forked both branches, join synchronized")
        return 0 if state.value == "Completed" else 1
    finally:
        if own_engine:
            engine.close()


if __name__ == "__main__":
    raise SystemExit(main())
