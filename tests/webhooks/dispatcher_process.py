"""A webhook dispatcher in a process of its own, for tests: `python -m
tests.webhooks.dispatcher_process DATABASE_URL OWNER` delivers until SIGTERM."""

from __future__ import annotations

import sys
import time

from engine.api import Engine
from engine.db.database import install_sigterm_exit
from engine.webhooks.dispatcher import Dispatcher
from tests.webhooks.conftest import FAST


def main(argv: list[str]) -> int:
    url, owner = argv
    install_sigterm_exit()
    with Engine(url, migrate=False) as engine:
        dispatcher = Dispatcher(engine, FAST, owner=owner)
        dispatcher.start()
        print("ready", flush=True)
        try:
            while dispatcher.running:
                time.sleep(0.2)
        finally:
            dispatcher.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
