"""The shortest timer cycle and the longest timer duration are the engine's settings: they decide
what deploys and what a timer may start with, an expression's result included; a definition
deployed under raised limits still starts on an engine with the defaults."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.core.settings import EngineSettings
from engine.errors import ExpressionError, ModelError
from engine.model import TimerDefinition

FAST = EngineSettings(min_timer_cycle_ms=100, max_timer_years=1)


def cycle(text: str, key: str = "cycling") -> str:
    return (
        '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
        f'targetNamespace="t"><process id="{key}" isExecutable="true">'
        '<startEvent id="s"/><intermediateCatchEvent id="wait"><timerEventDefinition>'
        f"<timeCycle>{text}</timeCycle></timerEventDefinition></intermediateCatchEvent>"
        '<endEvent id="e"/><sequenceFlow id="f1" sourceRef="s" targetRef="wait"/>'
        '<sequenceFlow id="f2" sourceRef="wait" targetRef="e"/></process></definitions>'
    )


def test_the_shortest_cycle_is_a_setting(database_url: str) -> None:
    with Engine(database_url, migrate=False) as default:
        with pytest.raises(ModelError, match="at least PT1S"):
            default.deploy(cycle("R3/PT0.5S"))
        assert default.definitions() == []
    with Engine(database_url, migrate=False, settings=FAST) as fast:
        fast.deploy(cycle("R3/PT0.5S"))
        with pytest.raises(ModelError, match="at least PT0.1S"):
            fast.deploy(cycle("R3/PT0.05S", key="faster"))
        with pytest.raises(ModelError, match="limited to 1 years"):
            fast.deploy(cycle("R3/P2Y", key="slower"))
    # Deployed under raised limits, it starts on an engine with the defaults.
    with Engine(database_url, migrate=False) as default:
        handle = default.start_latest("cycling")
        (job,) = default.jobs(handle.id)
        assert job.due_at is not None


def test_a_timer_expression_is_held_to_the_settings_when_it_starts(database_url: str) -> None:
    model = (
        ProcessBuilder("later")
        .start_event("s")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="${d}"))
        .end_event("e")
        .chain("s", "wait", "e")
        .build()
    )
    with Engine(database_url, migrate=False, settings=FAST) as engine:
        engine.deploy(model)
        with pytest.raises(ExpressionError, match="limited to 1 years"):
            engine.start_latest("later", {"d": "P2Y"})
        assert engine.list_instances().items == []
        assert engine.start_latest("later", {"d": "P11M"}).info().state == "Active"
