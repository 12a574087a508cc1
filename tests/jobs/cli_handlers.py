"""Handlers for `interlock jobs --handlers tests.jobs.cli_handlers`."""

from __future__ import annotations

from engine.api import Engine


def register(engine: Engine) -> None:
    engine.register_handler("work", lambda ctx: {"worked_by": "interlock jobs"})
