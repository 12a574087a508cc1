"""A job executor process for the exactly-once tests.

python -m tests.jobs.executor_process DATABASE_URL --owner NAME [--lock-seconds S]
    [--batch-size N] [--handler-sleep SECONDS]

Registers the handler `record`, which inserts (instance id, owner) into the application table
`fired` on the command's own connection, so the row commits if and only if the step does. Prints
"ready", waits for a line on stdin, then runs jobs until SIGTERM (exit 0) or SIGKILL.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from engine.api import Engine
from engine.core.handlers import TaskContext
from engine.db.database import install_sigterm_exit
from engine.loops.jobs import JobExecutor
from engine.schema import JOB_CHANNEL


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--owner", required=True)
    parser.add_argument("--lock-seconds", type=float, default=300.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--handler-sleep", type=float, default=0.0)
    args = parser.parse_args(argv)
    install_sigterm_exit()
    with Engine(args.url, migrate=False, pool_size=4) as engine:

        def record(ctx: TaskContext) -> None:
            ctx.connection.execute(
                "INSERT INTO fired (instance_id, owner) VALUES (%s, %s)",
                (ctx.instance_id, args.owner),
            )
            if args.handler_sleep:
                time.sleep(args.handler_sleep)

        engine.register_handler("record", record)
        executor = JobExecutor(
            engine,
            owner=args.owner,
            lock_seconds=args.lock_seconds,
            batch_size=args.batch_size,
        )
        engine.notifier.generation(JOB_CHANNEL)  # listen before saying ready
        print("ready", flush=True)
        sys.stdin.readline()
        with contextlib.suppress(SystemExit):
            executor.run_forever()
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
