"""A slow job handler for `interlock jobs --handlers tests.chaos.slow_handlers`: it touches the
file named by `INTERLOCK_TEST_MARKER` when it starts, then takes `SLOW_SECONDS` to finish."""

from __future__ import annotations

import os
import time
from pathlib import Path

from engine.api import Engine
from engine.core.handlers import TaskContext

SLOW_SECONDS = 1.5


def started() -> None:
    Path(os.environ["INTERLOCK_TEST_MARKER"]).touch()
    time.sleep(SLOW_SECONDS)


def register(engine: Engine) -> None:
    def slow(ctx: TaskContext) -> dict[str, str]:
        started()
        return {"finished_by": "interlock jobs"}

    engine.register_handler("slow", slow)
