from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bpmn import parse_bpmn, write_bpmn
from engine.builder import ProcessBuilder
from engine.errors import ModelError
from engine.model import ProcessModel, ServiceTask, StartEvent, TimerDefinition, UserTask

DATA = Path(__file__).parent.parent / "data" / "bpmn"
FIXTURES = sorted(DATA.glob("*.bpmn"))


def invoice_approval() -> ProcessModel:
    """The builder twin of tests/data/bpmn/invoice_approval.bpmn."""
    return (
        ProcessBuilder("invoice_approval", "Invoice approval", version_tag="1.2")
        .start_event("StartEvent_Invoice", "Invoice received")
        .user_task(
            "Task_Approve",
            "Approve invoice",
            assignee="${approver}",
            candidate_groups="accounting,management",
            due_date="${dueDate}",
            priority="60",
            form_key="embedded:app:forms/approve.html",
        )
        .exclusive_gateway("Gateway_Approved", "Approved?", default="Flow_Rejected")
        .service_task(
            "Task_Pay",
            "Pay invoice",
            handler="payInvoice",
            result_variable="payment",
            async_before=True,
        )
        .service_task("Task_Archive", "Archive invoice", topic="archive-invoice", priority=5)
        .end_event("EndEvent_Paid", "Invoice paid")
        .end_event("EndEvent_Rejected", "Invoice rejected")
        .flow("StartEvent_Invoice", "Task_Approve", id="Flow_ToApprove")
        .flow("Task_Approve", "Gateway_Approved", id="Flow_ToDecision")
        .flow(
            "Gateway_Approved", "Task_Pay", id="Flow_Approved", name="yes", condition="${approved}"
        )
        .flow("Gateway_Approved", "EndEvent_Rejected", id="Flow_Rejected", name="no")
        .flow("Task_Pay", "Task_Archive", id="Flow_ToArchive")
        .flow("Task_Archive", "EndEvent_Paid", id="Flow_ToPaid")
        .build()
    )


def everything() -> ProcessModel:
    """Every node kind and option the builder offers."""
    return (
        ProcessBuilder("everything", version_tag="7")
        .start_event("start")
        .start_event("by_message", "By message", message="Kick off")
        .start_event("by_timer", timer=TimerDefinition(kind="cycle", text="R/PT1H"))
        .exclusive_gateway("merge")
        .service_task("handler", handler="doWork", async_after=True)
        .service_task("java", handler="com.acme.DoWork", priority=0)
        .service_task("external", topic="work", result_variable="out", priority=-2)
        .user_task("review", candidate_users="a,b", async_before=True)
        .task("think", manual=True)
        .task("plain", async_before=True)
        .intermediate_throw_event("milestone", "Quotes \" & <angles> 'and'\nnewlines")
        .parallel_gateway("split")
        .parallel_gateway("join")
        .end_event("end", terminate=True)
        .chain("start", "merge")
        .chain("by_message", "merge")
        .chain("by_timer", "merge")
        .chain("merge", "handler", "java", "external", "split")
        .chain("split", "review", "join")
        .chain("split", "think", "join")
        .chain("split", "plain", "join")
        .chain("join", "milestone", "end")
        .build()
    )


def test_builder_model_equals_the_parsed_fixture() -> None:
    parsed = parse_bpmn((DATA / "invoice_approval.bpmn").read_bytes(), "invoice_approval.bpmn")
    assert parsed == [invoice_approval()]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_write_then_parse_roundtrips_every_fixture(path: Path) -> None:
    for model in parse_bpmn(path.read_bytes(), path.name):
        written = write_bpmn([model])
        assert parse_bpmn(written) == [model]
        assert write_bpmn(parse_bpmn(written)) == written


@pytest.mark.parametrize("build", [invoice_approval, everything])
def test_write_then_parse_roundtrips_builder_models(build: Callable[[], ProcessModel]) -> None:
    model = build()
    assert parse_bpmn(write_bpmn([model])) == [model]


def test_several_models_share_one_document_and_message_elements() -> None:
    first = everything()
    second = (
        ProcessBuilder("second")
        .start_event("Message_1", message="Kick off")
        .end_event("e")
        .chain("Message_1", "e")
        .build()
    )
    written = write_bpmn([first, second])
    assert written.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<bpmn:definitions')
    assert written.count("<bpmn:message ") == 1
    assert 'id="Message_1"' in written  # the node keeps its id; the message element gets another
    assert parse_bpmn(written) == [first, second]


def test_writer_uses_camunda_attributes() -> None:
    written = write_bpmn([everything()])
    assert 'camunda:delegateExpression="${doWork}"' in written
    assert 'camunda:class="com.acme.DoWork"' in written
    assert 'camunda:type="external" camunda:topic="work"' in written
    assert 'camunda:taskPriority="-2"' in written
    assert 'camunda:asyncAfter="true"' in written
    assert 'isExecutable="true" camunda:versionTag="7"' in written
    assert '<bpmn:timeCycle xsi:type="bpmn:tFormalExpression">R/PT1H</bpmn:timeCycle>' in written
    assert "<bpmn:terminateEventDefinition/>" in written
    assert "&lt;angles&gt;" in written and "&#10;" in written


def test_builder_fills_incoming_and_outgoing_in_flow_order() -> None:
    model = (
        ProcessBuilder("order")
        .start_event("s")
        .exclusive_gateway("g", default="to_b")
        .task("a")
        .task("b")
        .end_event("e")
        .flow("s", "g")
        .flow("g", "b", id="to_b")
        .flow("g", "a", condition="${go}")
        .chain("b", "e")
        .chain("a", "e")
        .build()
    )
    assert model.node("g").outgoing == ("to_b", "Flow_g_a")
    assert model.node("e").incoming == ("Flow_b_e", "Flow_a_e")
    assert model.node("s").outgoing == ("Flow_s_g",)
    condition = model.flow("Flow_g_a").condition
    assert condition is not None and condition.evaluate({"go": True}) is True
    assert parse_bpmn(write_bpmn([model])) == [model]


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(6)), st.permutations(range(3)))
def test_any_flow_order_survives_a_roundtrip(flow_order: list[int], task_order: list[int]) -> None:
    builder = ProcessBuilder("shuffled").start_event("s").parallel_gateway("split")
    builder.parallel_gateway("join").end_event("e").chain("s", "split").chain("join", "e")
    for index in task_order:
        builder.task(f"t{index}")
    pairs = [("split", f"t{i}") for i in range(3)] + [(f"t{i}", "join") for i in range(3)]
    for index in flow_order:
        builder.flow(*pairs[index])
    model = builder.build()
    assert parse_bpmn(write_bpmn([model])) == [model]


@pytest.mark.parametrize(
    ("build", "fragment", "element_id"),
    [
        (lambda b: b.task("x").task("x"), "duplicate element id", "x"),
        (lambda b: b.task("x").flow("s", "e", id="x"), "duplicate element id", "x"),
        (lambda b: b.flow("s", "e", id="c", condition="${a ="), "invalid condition on", "c"),
        (lambda b: b.flow("s", "e", id="c", condition="${f(1)}"), "calls are not allowed", "c"),
        (lambda b: b.flow("s", "e", id="c", condition="a > 1"), "must be written as ${...}", "c"),
        (lambda b: b.service_task("x", handler="no spaces"), "is not a name", "x"),
        (lambda b: b.service_task("x"), "needs exactly one implementation", "x"),
        (lambda b: b.service_task("x", handler="a", topic="t"), "exactly one implementation", "x"),
        (lambda b: b.service_task("x", topic=""), "non-empty topic", "x"),
        (lambda b: b.user_task("x", assignee="${a.__class__}"), "assignee: names starting", "x"),
        (
            lambda b: b.start_event("x", message="m", timer=TimerDefinition(kind="date", text="t")),
            "either a message or a timer",
            "x",
        ),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="date", text=" PT1M")),
            "whitespace",
            "x",
        ),
        (
            lambda b: b.start_event("x", timer=TimerDefinition(kind="date", text="${;}")),
            "timer: ';' is not allowed",
            "x",
        ),
        (lambda b: b.flow("s", "nowhere", id="c"), "targetRef 'nowhere' names no flow node", "c"),
        (
            lambda b: b.exclusive_gateway("x", default="missing").chain("s", "x"),
            "default flow 'missing' is not an outgoing flow",
            "x",
        ),
        (lambda b: b.task("t").flow("t", "s", id="c"), "a start event cannot have incoming", "s"),
    ],
)
def test_builder_errors_name_the_element(
    build: Callable[[ProcessBuilder], object], fragment: str, element_id: str
) -> None:
    builder = ProcessBuilder("broken").start_event("s").end_event("e")
    with pytest.raises(ModelError) as caught:
        build(builder)
        builder.build()
    assert fragment in str(caught.value)
    assert caught.value.element_id == element_id
    assert caught.value.file == "<builder broken>"


def test_builder_returns_plain_model_nodes() -> None:
    model = everything()
    assert isinstance(model.node("by_message"), StartEvent)
    review = model.node("review")
    assert isinstance(review, UserTask) and review.async_before
    external = model.node("external")
    assert isinstance(external, ServiceTask) and external.is_external
    assert model.key == "everything" and model.version_tag == "7" and model.name is None


def test_empty_key_is_rejected() -> None:
    with pytest.raises(ModelError, match="needs a key"):
        ProcessBuilder("")
