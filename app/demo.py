"""The demo that `make run` deploys: the parallel order process with two handlers."""

from __future__ import annotations

from engine.api import Engine
from examples.parallel_gateway import parallel_demo


def install_demo(engine: Engine) -> None:
    engine.register_handler("workerA", lambda ctx: {"a_done": True})
    engine.register_handler("workerB", lambda ctx: {"b_done": True})
    engine.deploy(parallel_demo(), name="demo")
    engine.start_latest("parallel-demo", {"source": "demo"})
