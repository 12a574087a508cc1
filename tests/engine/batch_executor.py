"""Runs a job executor until killed: the subject of the batch crash test.

python -m tests.engine.batch_executor DATABASE_URL
"""

from __future__ import annotations

import sys

from engine.api import Engine
from engine.loops.jobs import JobExecutor


def main(url: str) -> None:
    with Engine(url, migrate=False, pool_size=2) as engine:
        executor = JobExecutor(engine, lock_seconds=1, poll_interval=0.5)
        print("ready", flush=True)
        executor.run_forever()


if __name__ == "__main__":
    main(sys.argv[1])
