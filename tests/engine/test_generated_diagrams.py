"""A definition deployed without diagram layout keeps one generated at deployment; its source
stays as deployed, and a definition with a layout of its own gets none."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from engine.api import Engine
from engine.bpmn import layers, write_bpmn
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.queries import definitions
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def skipping() -> ProcessModel:
    """An exclusive split whose default flow skips a column (a long edge)."""
    return (
        ProcessBuilder("skipping")
        .start_event("Start")
        .exclusive_gateway("Check", default="Flow_Check_Join")
        .user_task("Review", "Review")
        .exclusive_gateway("Join")
        .end_event("End")
        .chain("Start", "Check")
        .flow("Check", "Review", condition="${review}")
        .chain("Review", "Join")
        .flow("Check", "Join")
        .chain("Join", "End")
        .build()
    )


def test_a_model_without_layout_keeps_a_generated_diagram_and_its_source(engine: Engine) -> None:
    source = write_bpmn([skipping()])
    [deployed] = engine.deploy(source).definitions
    found = definitions.diagram_xml(engine, deployed["id"])
    assert found is not None
    diagram, generated = found
    assert generated is True
    for element in ("Start", "Check", "Review", "Join", "End", "Flow_Check_Join"):
        assert f'bpmnElement="{element}"' in diagram
    assert engine.definition_xml(deployed["id"]) == ("resource-1.bpmn", source)
    assert "BPMNShape" not in source


def test_a_file_with_its_own_layout_is_drawn_from_its_source(engine: Engine) -> None:
    source = (DATA / "invoice_approval.bpmn").read_text()
    [deployed] = engine.deploy(source).definitions
    assert definitions.diagram_xml(engine, deployed["id"]) == (source, False)
    assert engine.definition_xml(deployed["id"])[1] == source


def test_a_model_that_cannot_be_laid_out_is_deployed_without_a_diagram(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(layers, "MAX_DUMMIES", 0)
    source = write_bpmn([skipping()])
    with caplog.at_level(logging.WARNING, logger="engine.bpmn.diagram"):
        [deployed] = engine.deploy(source).definitions
    assert deployed["created"] is True
    assert definitions.diagram_xml(engine, deployed["id"]) == (source, False)
    assert "no diagram layout could be generated for skipping" in caplog.text
    assert (
        engine.start_latest("skipping", {"review": False}).info().state == InstanceState.COMPLETED
    )
