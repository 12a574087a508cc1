"""A worker module for `interlock worker tests.jobs.cli_worker` (the engine comes from
DATABASE_URL)."""

from __future__ import annotations

from engine.api import Engine
from engine.loops.worker import Task, Worker

worker = Worker(Engine(migrate=False, pool_size=2), long_poll_seconds=2.0)


@worker.topic("charge")
def charge(task: Task) -> dict[str, str]:
    return {"charged_by": "interlock worker", "lock_ms": str(worker.lock_ms)}
