"""Versions, duplicate filtering and choosing what to start."""

from __future__ import annotations

import pytest

from engine.api import Engine
from engine.bpmn.writer import write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError, NotFound


def simple(key: str, end_name: str) -> str:
    model = (
        ProcessBuilder(key)
        .start_event("start")
        .end_event("end", end_name)
        .chain("start", "end")
        .build()
    )
    return write_bpmn([model])


def test_changed_content_makes_a_new_version(engine: Engine) -> None:
    first = engine.deploy(simple("p", "v1")).definitions[0]
    same = engine.deploy(simple("p", "v1")).definitions[0]
    second = engine.deploy(simple("p", "v2")).definitions[0]
    assert (first["version"], first["created"]) == (1, True)
    assert (same["id"], same["created"]) == (first["id"], False)
    assert (second["version"], second["created"]) == (2, True)
    forced = engine.deploy(simple("p", "v2"), duplicate_filtering=False).definitions[0]
    assert forced["version"] == 3
    assert [d.version for d in engine.definitions("p")] == [1, 2, 3]


def test_start_latest_version_or_exact_definition(engine: Engine) -> None:
    v1 = engine.deploy(simple("p", "v1")).definitions[0]
    v2 = engine.deploy(simple("p", "v2")).definitions[0]
    assert engine.start_latest("p").info().definition_id == v2["id"]
    assert engine.start_version("p", 1).info().definition_id == v1["id"]
    assert engine.start_definition(v1["id"]).info().definition_id == v1["id"]
    with pytest.raises(NotFound):
        engine.start_version("p", 9)
    with pytest.raises(NotFound):
        engine.start_definition("p:9:nothing")


def test_running_instances_keep_their_version(engine: Engine) -> None:
    model_v1 = (
        ProcessBuilder("keep")
        .start_event("start")
        .user_task("t1")
        .end_event("end")
        .chain("start", "t1", "end")
    ).build()
    model_v2 = (
        ProcessBuilder("keep")
        .start_event("start")
        .user_task("t2")
        .end_event("end")
        .chain("start", "t2", "end")
    ).build()
    engine.deploy(model_v1)
    old = engine.start_latest("keep")
    engine.deploy(model_v2)
    engine.definition_cache.clear()  # a cold cache changes latency, not behaviour
    [task] = old.user_tasks()
    assert task.node_id == "t1"
    engine.complete_task(task.id)
    assert old.state.value == "Completed"
    assert engine.start_latest("keep").user_tasks()[0].node_id == "t2"


def test_a_bad_file_deploys_nothing(engine: Engine) -> None:
    bad = (
        simple("good", "x")
        .replace("<bpmn:endEvent", "<bpmn:complexGateway")
        .replace("</bpmn:endEvent>", "</bpmn:complexGateway>")
    )
    with pytest.raises(ModelError, match="complexGateway"):
        engine.deploy(simple("other", "y"), bad)
    assert engine.definitions() == []
