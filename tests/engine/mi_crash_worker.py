"""Runs multi-instance instances forever until killed: the subject of the multi-instance crash
test. Sequential and parallel bodies of asynchronous handler iterations run as jobs; a parallel
body of external tasks is completed by a worker; all in this one process.

python -m tests.engine.mi_crash_worker DATABASE_URL
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.loops.jobs import JobExecutor
from engine.loops.worker import Task, Worker
from engine.model import ProcessModel

# (process key, iterations) of every model this worker runs.
ITERATIONS = {"mi-seq": 5, "mi-par": 4, "mi-ext": 3}
LOCK_MS = 1_500


def models() -> list[ProcessModel]:
    def looping(key: str, *, sequential: bool = False, async_before: bool = False) -> ProcessModel:
        builder = ProcessBuilder(key).start_event("start")
        if key == "mi-ext":
            builder.service_task("step", topic="mi-crash")
        else:
            builder.service_task("step", handler="step")
        return (
            builder.multi_instance(
                "step",
                cardinality=ITERATIONS[key],
                sequential=sequential,
                async_before=async_before,
            )
            .end_event("end")
            .chain("start", "step", "end")
            .build()
        )

    return [
        looping("mi-seq", sequential=True, async_before=True),
        looping("mi-par", async_before=True),
        looping("mi-ext"),
    ]


def register(engine: Engine) -> Worker:
    engine.register_handler("step", lambda ctx: None)
    worker = Worker(engine, "crash-worker", max_tasks=5, lock_ms=LOCK_MS, long_poll_seconds=0)

    @worker.topic("mi-crash")
    def complete(task: Task) -> dict[str, object]:
        return {}

    return worker


def run_until_killed(
    url: str,
    models: Callable[[], list[ProcessModel]],
    register: Callable[[Engine], Worker],
    keys: Iterable[str],
    owner: str,
) -> None:
    """Deploy `models`, then start one instance of each of `keys` and run due jobs and fetched
    external tasks, over and over, until the process is killed. The crash workers' loop."""
    with Engine(url, migrate=False, pool_size=2) as engine:
        worker = register(engine)
        executor = JobExecutor(engine, owner=owner, lock_seconds=LOCK_MS / 1000)
        engine.deploy(*models())
        print("ready", flush=True)
        n = 0
        while True:
            for key in keys:
                engine.start_latest(key, {"n": n})
            n += 1
            executor.run_once()
            worker.run_once()


def main(url: str) -> None:
    run_until_killed(url, models, register, ITERATIONS, "crash-executor")


if __name__ == "__main__":
    main(sys.argv[1])
