"""Runs transactions that cancel forever until killed: the subject of the transaction crash
test. Each instance books and pays inside a transaction, then reaches its cancel end event in the
command that starts it; the two compensation handlers are asynchronous (each a job), and the
cancel boundary's flow is taken once both have run; all in this one process. Each round starts
one instance (two jobs) and runs one job, so compensations pile up under way.

python -m tests.engine.tx_crash_worker DATABASE_URL
"""

from __future__ import annotations

import sys
import time

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.loops.jobs import JobExecutor
from engine.model import ProcessModel

KEY = "tx-crash"
LOCK_MS = 1_500
HANDLERS = ("refund", "unbook")


def models() -> list[ProcessModel]:
    b = ProcessBuilder(KEY)
    b.start_event("start")
    b.transaction("tx")
    b.start_event("tx_start", parent="tx")
    b.service_task("book", handler="work", parent="tx")
    b.service_task("unbook", handler="undo", parent="tx", async_before=True)
    b.compensation_boundary("booked", "book", "unbook")
    b.service_task("pay", handler="work", parent="tx")
    b.service_task("refund", handler="undo", parent="tx", async_before=True)
    b.compensation_boundary("paid", "pay", "refund")
    b.end_event("cancel", cancel=True, parent="tx")
    b.chain("tx_start", "book", "pay", "cancel")
    b.cancel_boundary("cancelled", "tx")
    b.end_event("end")
    b.end_event("end_cancelled")
    b.chain("start", "tx", "end")
    b.chain("cancelled", "end_cancelled")
    return [b.build()]


def register(engine: Engine) -> None:
    engine.register_handler("work", lambda ctx: None)

    def undo(context: TaskContext) -> None:
        time.sleep(0.02)  # a job that takes a while: kills land inside and between them

    engine.register_handler("undo", undo)


def main(url: str) -> None:
    with Engine(url, migrate=False, pool_size=2) as engine:
        register(engine)
        executor = JobExecutor(
            engine, owner="tx-crash-executor", batch_size=1, lock_seconds=LOCK_MS / 1000
        )
        engine.deploy(*models())
        print("ready", flush=True)
        while True:
            engine.start_latest(KEY)
            executor.run_once()


if __name__ == "__main__":
    main(sys.argv[1])
