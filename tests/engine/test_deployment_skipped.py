"""The processes a deployment leaves out (engine/commands/deployments.py): the result names
each with its reason, and a deployment by key of nothing but skipped processes is refused
saying why."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.errors import BadRequest
from tests.compat.test_modeller_files_rest import PREFIXED


def test_the_result_names_the_processes_left_out(engine: Engine) -> None:
    result = engine.deploy(PREFIXED.encode())
    assert [d["key"] for d in result.definitions] == ["prefixed-flow"]
    assert [(s["process"], s["reason"]) for s in result.skipped] == [
        ("prefixed-notes", "isExecutable is false")
    ]


def test_nothing_but_skipped_processes_is_refused_saying_why(engine: Engine) -> None:
    notes = PREFIXED.replace(
        'id="prefixed-flow" isExecutable="true"', 'id="prefixed-flow" isExecutable="false"'
    )
    with pytest.raises(BadRequest) as refused:
        engine.deploy(notes.encode())
    assert "process 'prefixed-flow'" in refused.value.message
    assert "process 'prefixed-notes'" in refused.value.message
    assert "isExecutable is false" in refused.value.message
