"""The write document carries every value a command may write, however it has to be encoded."""

from __future__ import annotations

from engine.api import Engine
from tests.engine.test_optimistic import external_work


def test_values_beyond_the_fast_encoder_are_written_as_given(engine: Engine) -> None:
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    big = 2**70
    engine.complete_external_task(task["id"], "w1", {"big": big, "numbered": {1: "one"}})
    assert instance.variables() == {"big": big, "numbered": {"1": "one"}}
