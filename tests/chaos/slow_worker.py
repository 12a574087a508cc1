"""A slow external-task worker for `interlock worker tests.chaos.slow_worker` (the engine comes
from DATABASE_URL): like tests.chaos.slow_handlers, it marks its start and takes its time."""

from __future__ import annotations

from engine.api import Engine
from engine.loops.worker import Task, Worker
from tests.chaos.slow_handlers import started

worker = Worker(Engine(migrate=False, pool_size=2), long_poll_seconds=20.0, max_tasks=1)


@worker.topic("slow")
def slow(task: Task) -> dict[str, str]:
    started()
    return {"finished_by": "interlock worker"}
