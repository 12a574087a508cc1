"""The external-task worker of the outage tests: `interlock worker tests.outage.outage_worker`
(the engine comes from DATABASE_URL or INTERLOCK_HOME)."""

from __future__ import annotations

from engine.api import Engine
from engine.loops.worker import Task, Worker

worker = Worker(Engine(migrate=False, pool_size=2), long_poll_seconds=2.0, lock_ms=20_000)


@worker.topic("charge")
def charge(task: Task) -> dict[str, str]:
    return {"charged": "yes"}
