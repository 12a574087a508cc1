"""The write document carries every value a command may write, however it has to be encoded."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.errors import BadRequest
from tests.engine.test_optimistic import external_work


def test_values_beyond_the_fast_encoder_are_written_as_given(engine: Engine) -> None:
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    # Beyond 64 bits (the fast encoder's range) but within the 20 digits a JSON value may hold.
    big = 2**65
    with pytest.raises(BadRequest):
        engine.complete_external_task(task["id"], "w1", {"big": big})
    engine.complete_external_task(task["id"], "w1", {"doc": {"n": big, "list": [-big]}})
    assert instance.variables() == {"doc": {"n": big, "list": [-big]}}
