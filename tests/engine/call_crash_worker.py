"""Runs families of called instances forever until killed: the subject of the call-activity
crash test. Two-level trees (a root calling a child) and three-level trees (a root calling, after
an asynchronous continuation, a middle process that calls the child); each child runs an
asynchronous handler step (a job) and an external task completed by a worker, then compensates
the step, whose handler runs as a job in Compensation mode; all in this one process.

python -m tests.engine.call_crash_worker DATABASE_URL
"""

from __future__ import annotations

import sys

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.loops.worker import Task, Worker
from engine.model import ProcessModel
from tests.engine.mi_crash_worker import run_until_killed

# The processes each started tree runs, from its root: key -> the key its call activity calls.
CALLS = {"cc-two": "cc-leaf", "cc-three": "cc-middle", "cc-middle": "cc-leaf"}
ROOTS = ("cc-two", "cc-three")
LEAF = "cc-leaf"
LOCK_MS = 1_500


def models() -> list[ProcessModel]:
    leaf = (
        ProcessBuilder(LEAF)
        .start_event("start")
        .service_task("step", handler="step", async_before=True)
        .service_task("undo", handler="undo", async_before=True)
        .compensation_boundary("undoable", "step", "undo")
        .service_task("remote", topic="cc-crash")
        .compensation_throw("compensate")
        .end_event("end")
        .chain("start", "step", "remote", "compensate", "end")
        .build()
    )

    def calling(key: str, *, async_before: bool = False) -> ProcessModel:
        return (
            ProcessBuilder(key)
            .start_event("start")
            .call_activity("call", called_element=CALLS[key], async_before=async_before)
            .end_event("end")
            .chain("start", "call", "end")
            .build()
        )

    return [
        leaf,
        calling("cc-two"),
        calling("cc-three", async_before=True),
        calling("cc-middle"),
    ]


def register(engine: Engine) -> Worker:
    engine.register_handler("step", lambda ctx: {"stepped": True})
    engine.register_handler("undo", lambda ctx: {"undone": True})
    worker = Worker(engine, "call-crash-worker", max_tasks=5, lock_ms=LOCK_MS, long_poll_seconds=0)

    @worker.topic("cc-crash")
    def complete(task: Task) -> dict[str, object]:
        return {"remote": True}

    return worker


def main(url: str) -> None:
    run_until_killed(url, models, register, ROOTS, "call-crash-executor")


if __name__ == "__main__":
    main(sys.argv[1])
