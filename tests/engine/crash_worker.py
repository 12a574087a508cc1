"""Runs instances forever until killed: the subject of the crash-safety test.

python -m tests.engine.crash_worker DATABASE_URL
"""

from __future__ import annotations

import sys

from engine.api import Engine
from tests.engine.processes import approval


def register(engine: Engine) -> None:
    engine.register_handler("prepare", lambda ctx: {"prepared": ctx.get("n")})
    engine.register_handler("book", lambda ctx: {"booked": ctx.get("n")})


def main(url: str) -> None:
    with Engine(url, migrate=False, pool_size=2) as engine:
        register(engine)
        engine.deploy(approval())
        print("ready", flush=True)
        n = 0
        while True:
            engine.start_latest("approval", {"n": n, "amount": 10})
            n += 1
            tasks = engine.user_tasks()
            if len(tasks) > 3:
                engine.complete_task(tasks[0].id, {"approved": n % 2 == 0})


if __name__ == "__main__":
    main(sys.argv[1])
