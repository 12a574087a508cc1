"""A job executor process for the history cleanup crash test.

python -m tests.jobs.cleanup_process DATABASE_URL

Runs jobs (the history cleanup among them) with short locks, so that after a SIGKILL another
executor takes the cleanup over within a second. The retention settings come from the
INTERLOCK_* variables the test sets. Prints "ready" once it runs.
"""

from __future__ import annotations

import sys

from engine.api import Engine
from engine.loops.jobs import JobExecutor


def main(argv: list[str]) -> int:
    with Engine(argv[0], migrate=False, pool_size=4) as engine:
        executor = JobExecutor(engine, owner="doomed", lock_seconds=1.0, poll_interval=0.2)
        print("ready", flush=True)
        executor.run_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
