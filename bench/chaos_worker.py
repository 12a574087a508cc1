"""The external-task worker of the chaos soak: `interlock worker bench.chaos_worker` (the engine
comes from DATABASE_URL or INTERLOCK_HOME). It completes every `chaos-work` task at once."""

from __future__ import annotations

from engine.api import Engine
from engine.loops.worker import Task, Worker

worker = Worker(Engine(migrate=False, pool_size=2), long_poll_seconds=5.0, max_tasks=5)


@worker.topic("chaos-work")
def work(task: Task) -> dict[str, bool]:
    return {"worked": True}
