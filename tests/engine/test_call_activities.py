"""Call activities: a called instance is a row of the caller's family, started, resumed and ended
in the caller's transactions; run on real PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import BpmnError, Conflict, ModelError, NotFound
from engine.model import CallMapping, ProcessModel
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def family_rows(engine: Engine, root: UUID) -> list[tuple[str, str, int]]:
    """(definition key, state, depth) of every instance of the family, depth 0 the root."""
    with engine.connection() as conn:
        rows = conn.execute(
            "WITH RECURSIVE tree AS ("
            " SELECT id, definition_key, state, 0 AS depth FROM process_instance WHERE id = %s"
            " UNION ALL SELECT p.id, p.definition_key, p.state, t.depth + 1"
            " FROM process_instance p JOIN tree t ON p.super_instance_id = t.id)"
            " SELECT definition_key, state, depth FROM tree ORDER BY depth, definition_key",
            (root,),
        ).fetchall()
    return [(key, state, depth) for key, state, depth in rows]


def only_child(instance: InstanceHandle) -> InstanceHandle:
    [child] = instance.children()
    return child


def straight(key: str, *handlers: str) -> ProcessModel:
    builder = ProcessBuilder(key).start_event("Start")
    ids = ["Start"]
    for handler in handlers:
        builder.service_task(handler, handler=handler)
        ids.append(handler)
    return builder.end_event("End").chain(*ids, "End").build()


def caller(key: str, called: str, **call: Any) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("Start")
        .call_activity("Call", called_element=called, **call)
        .end_event("End")
        .chain("Start", "Call", "End")
        .build()
    )


@pytest.fixture
def shipping(engine: Engine) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    def send(context: TaskContext) -> None:
        sent.append(dict(context.variables))
        if context.variables.get("lose"):
            raise BpmnError("PARCEL_LOST", "the van was stolen")
        context.set("trackingNumber", f"T-{context.variables['weight']}")

    engine.register_handler("sendParcel", send)
    engine.deploy(DATA / "call_parent.bpmn", DATA / "call_shipping.bpmn")
    return sent


def test_the_called_instance_runs_in_the_family_and_resumes_its_caller(
    engine: Engine, shipping: list[dict[str, Any]]
) -> None:
    parent = engine.start_latest(
        "order_parent", {"amount": 7, "shipping": "shipping"}, business_key="order-1"
    )
    child = only_child(parent)
    info = child.info()
    assert (info.definition_key, info.business_key) == ("shipping", "order-1")
    assert (info.super_instance_id, info.root_instance_id) == (parent.id, parent.id)
    assert child.parent() is not None and child.parent().id == parent.id  # type: ignore[union-attr]
    assert child.root().id == parent.id and parent.root().id == parent.id
    assert parent.parent() is None
    # The caller's token waits at the call activity; the history row names the called instance.
    assert [t.node_id for t in parent.tokens()] == ["Activity_Ship"]
    assert info.super_token_id == parent.tokens()[0].token_id
    with engine.connection() as conn:
        called = conn.execute(
            "SELECT called_instance_id FROM history WHERE instance_id = %s "
            "AND node_id = 'Activity_Ship'",
            (parent.id,),
        ).fetchall()
    assert called == [(child.id,)]
    # The in mappings: one variable, one expression, the business key; nothing else.
    assert child.variables() == {"weight": 7, "doubled": 14}
    [task] = child.user_tasks()
    engine.complete_task(task.id)
    # The child ran its handler and completed, and the parent went on, in that one command.
    assert child.state is InstanceState.COMPLETED
    assert parent.state is InstanceState.COMPLETED
    assert parent.variables() == {
        "amount": 7,
        "shipping": "shipping",
        "tracking": "T-7",
        "summary": 8,
    }
    assert shipping == [{"weight": 7, "doubled": 14}]


def test_an_error_the_child_does_not_catch_is_caught_on_the_call_activity(
    engine: Engine, shipping: list[dict[str, Any]]
) -> None:
    parent = engine.start_latest("order_parent", {"amount": 3, "shipping": "shipping"})
    child = only_child(parent)
    child.set_variables({"lose": True})
    [task] = child.user_tasks()
    engine.complete_task(task.id)
    # The boundary error event interrupted the call activity: the child ended with it.
    assert child.state is InstanceState.TERMINATED
    assert child.tokens() == []
    assert [t.node_id for t in parent.tokens()] == ["Activity_Refund"]
    assert parent.variables()["lostCode"] == "PARCEL_LOST"
    assert "tracking" not in parent.variables()


def test_cancelling_the_root_ends_the_whole_family_in_one_command(engine: Engine) -> None:
    engine.deploy(
        caller("level0", "level1"),
        caller("level1", "level2"),
        ProcessBuilder("level2")
        .start_event("Start")
        .user_task("Work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build(),
    )
    root = engine.start_latest("level0")
    assert family_rows(engine, root.id) == [
        ("level0", "Active", 0),
        ("level1", "Active", 1),
        ("level2", "Active", 2),
    ]
    grandchild = only_child(only_child(root))
    assert grandchild.root().id == root.id
    assert grandchild.parent().id == only_child(root).id  # type: ignore[union-attr]
    # A called instance is cancelled through its root, not on its own.
    with pytest.raises(Conflict, match="was called by"):
        grandchild.cancel()
    assert root.cancel() is InstanceState.TERMINATED
    assert family_rows(engine, root.id) == [
        ("level0", "Terminated", 0),
        ("level1", "Terminated", 1),
        ("level2", "Terminated", 2),
    ]
    assert grandchild.user_tasks() == [] or all(t.state != "Open" for t in grandchild.user_tasks())
    with engine.connection() as conn:
        open_tasks = conn.execute(
            "SELECT count(*) FROM user_task WHERE instance_id = %s AND state = 'Open'",
            (grandchild.id,),
        ).fetchone()
    assert open_tasks == (0,)


def test_a_three_level_family_completes_bottom_up_in_one_transaction(engine: Engine) -> None:
    done: list[str] = []

    def recorder(name: str) -> Callable[[TaskContext], None]:
        return lambda context: done.append(name)

    for name in ("a", "b", "c"):
        engine.register_handler(name, recorder(name))
    engine.deploy(
        caller("top", "middle"),
        caller("middle", "bottom"),
        straight("bottom", "a", "b", "c"),
    )
    root = engine.start_latest("top")
    assert root.state is InstanceState.COMPLETED
    assert done == ["a", "b", "c"]
    assert family_rows(engine, root.id) == [
        ("top", "Completed", 0),
        ("middle", "Completed", 1),
        ("bottom", "Completed", 2),
    ]
    with engine.connection() as conn:
        # One transaction wrote the whole family: every row has the same writer.
        [(writers,)] = conn.execute(
            "SELECT count(DISTINCT xmin::text) FROM process_instance WHERE root_instance_id = %s",
            (root.id,),
        ).fetchall()
    assert writers == 1


def test_each_binding_picks_its_version(engine: Engine) -> None:
    seen: list[str] = []

    def recorder(tag: str) -> Callable[[TaskContext], None]:
        return lambda context: seen.append(tag)

    for tag in ("one", "two", "three"):
        engine.register_handler(tag, recorder(tag))

    def child(tag: str) -> ProcessModel:
        model = straight("child", tag)
        return ProcessModel(
            key=model.key, nodes=model.nodes, flows=model.flows, version_tag=f"v-{tag}"
        )

    # v1 is deployed with the deployment-bound caller; v2 and v3 come later.
    engine.deploy(child("one"), caller("by_deployment", "child", binding="deployment"))
    engine.deploy(child("two"))
    engine.deploy(child("three"))
    engine.deploy(
        caller("by_latest", "child"),
        caller("by_version", "child", binding="version", version=2),
        caller("by_expression", "child", binding="version", version="${wanted}"),
        caller("by_tag", "child", binding="versionTag", version_tag="v-one"),
        caller("by_key", "${which}"),
    )
    for key, variables, expected in (
        ("by_latest", {}, "three"),
        ("by_deployment", {}, "one"),
        ("by_version", {}, "two"),
        ("by_expression", {"wanted": 1}, "one"),
        ("by_tag", {}, "one"),
        ("by_key", {"which": "child"}, "three"),
    ):
        seen.clear()
        assert engine.start_latest(key, variables).state is InstanceState.COMPLETED
        assert seen == [expected], key


def test_all_variables_and_local_outputs(engine: Engine) -> None:
    engine.register_handler("compute", lambda context: {"result": context.variables["x"] * 10})
    engine.deploy(
        straight("computer", "compute"),
        ProcessBuilder("asker")
        .start_event("Start")
        .call_activity(
            "Call",
            called_element="computer",
            inputs=[CallMapping(all=True)],
            outputs=[CallMapping(all=True, local=True)],
        )
        .input_output("Call", outputs={"kept": "${result + 1}"})
        .end_event("End")
        .chain("Start", "Call", "End")
        .build(),
    )
    instance = engine.start_latest("asker", {"x": 4, "other": "o"})
    assert instance.state is InstanceState.COMPLETED
    # The called instance got every variable; its variables came back as locals of the call
    # activity, which vanished with it, but an output parameter copied one out.
    assert only_child(instance).variables() == {"x": 4, "other": "o", "result": 40}
    assert instance.variables() == {"x": 4, "other": "o", "kept": 41}


def test_a_multi_instance_call_activity_calls_once_per_iteration(engine: Engine) -> None:
    engine.register_handler("work", lambda context: {"got": context.variables["item"]})
    engine.deploy(
        straight("worker", "work"),
        ProcessBuilder("fan")
        .start_event("Start")
        .call_activity(
            "Call",
            called_element="worker",
            inputs=[CallMapping(source="item", target="item")],
        )
        .multi_instance("Call", collection="items", element_variable="item")
        .end_event("End")
        .chain("Start", "Call", "End")
        .build(),
    )
    instance = engine.start_latest("fan", {"items": ["a", "b", "c"]})
    assert instance.state is InstanceState.COMPLETED
    assert sorted(c.variables()["got"] for c in instance.children()) == ["a", "b", "c"]


def test_a_missing_called_process_fails_the_command_and_writes_nothing(engine: Engine) -> None:
    engine.deploy(caller("lonely", "nobody_deployed_this"))
    with pytest.raises(NotFound, match="call activity 'Call': process 'nobody_deployed_this'"):
        engine.start_latest("lonely")
    with engine.connection() as conn:
        found = conn.execute(
            "SELECT count(*) FROM process_instance WHERE definition_key = 'lonely'"
        ).fetchone()
    assert found == (0,)


def test_a_process_that_calls_itself_forever_fails_instead_of_growing(engine: Engine) -> None:
    engine.deploy(caller("ouroboros", "ouroboros"))
    with pytest.raises(Exception, match="more than 1000 instances"):
        engine.start_latest("ouroboros")


def test_a_call_activity_model_survives_writing_and_parsing() -> None:
    from engine.bpmn.parser import parse_bpmn
    from engine.bpmn.writer import write_bpmn

    [model] = parse_bpmn((DATA / "call_parent.bpmn").read_bytes(), "call_parent.bpmn")
    assert parse_bpmn(write_bpmn([model]).encode(), "again.bpmn") == [model]


@pytest.mark.parametrize(
    ("attributes", "extensions", "problem"),
    [
        ("", "", "needs a calledElement"),
        ('calledElement="x" camunda:calledElementBinding="newest"', "", "is not one of"),
        ('calledElement="x" camunda:calledElementBinding="version"', "", "needs camunda:"),
        ('calledElement="x" camunda:calledElementVersion="2"', "", "needs calledElementBinding"),
        ('calledElement="x" camunda:caseRef="c"', "", "camunda:caseRef"),
        ('calledElement="x"', '<camunda:in source="a" />', "needs a target"),
        ('calledElement="x"', '<camunda:in variables="some" />', 'the only value is "all"'),
        ('calledElement="x"', '<camunda:out businessKey="k" />', "out businessKey"),
        ('calledElement="${x +}"', "", "calledElement"),
    ],
)
def test_deployment_refuses_what_cannot_run(
    engine: Engine, attributes: str, extensions: str, problem: str
) -> None:
    xml = (
        '<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">'
        '<process id="p" isExecutable="true"><startEvent id="s"/>'
        f'<callActivity id="Call" {attributes}>'
        f"<extensionElements>{extensions}</extensionElements></callActivity>"
        '<sequenceFlow id="f" sourceRef="s" targetRef="Call"/></process></definitions>'
    )
    with pytest.raises(ModelError, match=problem) as caught:
        engine.deploy(xml)
    assert caught.value.detail.get("element_id") == "Call"
