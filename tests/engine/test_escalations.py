"""Escalation events as Camunda 7 runs them: an escalation thrown by an intermediate or end event
is searched for outwards scope by scope; an escalation boundary event of an enclosing subprocess
or an escalation event subprocess catches it (interrupting: its scope ends; not: a new path runs
beside and the thrower goes on); nobody catching it, it is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.model import ProcessModel
from engine.states import InstanceState

DATA = Path(__file__).parent.parent / "data" / "bpmn"


def visits(instance: InstanceHandle) -> list[tuple[str, str]]:
    """(node, state) of every visit, sorted."""
    return sorted((s.node_id, s.state) for p in instance.history() for s in p.steps)


def waiting(instance: InstanceHandle) -> list[str]:
    return sorted(task.node_id for task in instance.user_tasks())


def complete(engine: Engine, instance: InstanceHandle, node_id: str, **variables: object) -> None:
    [task] = [t for t in instance.user_tasks() if t.node_id == node_id]
    engine.complete_task(task.id, variables)


@pytest.fixture
def purchase(engine: Engine) -> Engine:
    engine.deploy(DATA / "purchase_escalation.bpmn")
    return engine


def test_a_non_interrupting_boundary_event_runs_beside_the_subprocess(purchase: Engine) -> None:
    instance = purchase.start_latest("purchase_escalation", {"amount": 5000})
    # The throw event went on to the approval; the boundary event started the review beside it.
    assert waiting(instance) == ["Task_Approve", "Task_FinanceReview"]
    assert instance.variables() == {"amount": 5000, "escalated": "FINANCE_REVIEW"}
    complete(purchase, instance, "Task_FinanceReview")
    complete(purchase, instance, "Task_Approve", approved=True)
    assert instance.state == InstanceState.COMPLETED
    assert visits(instance) == [
        ("Boundary_FinanceReview", "Completed"),
        ("EndEvent_Approved", "Completed"),
        ("EndEvent_Ordered", "Completed"),
        ("EndEvent_Reviewed", "Completed"),
        ("Event_AskFinance", "Completed"),
        ("Gateway_Amount", "Completed"),
        ("Gateway_Decision", "Completed"),
        ("Gateway_Merge", "Completed"),
        ("StartEvent_Approval", "Completed"),
        ("StartEvent_Request", "Completed"),
        ("SubProcess_Approval", "Completed"),
        ("Task_Approve", "Completed"),
        ("Task_FinanceReview", "Completed"),
    ]


def test_an_interrupting_boundary_event_ends_the_subprocess_and_its_other_work(
    purchase: Engine,
) -> None:
    instance = purchase.start_latest("purchase_escalation", {"amount": 5000})
    complete(purchase, instance, "Task_Approve", approved=False)
    # The review started by the first escalation is outside the subprocess: it carries on.
    assert waiting(instance) == ["Task_FinanceReview", "Task_Inform"]
    complete(purchase, instance, "Task_Inform")
    complete(purchase, instance, "Task_FinanceReview")
    assert instance.state == InstanceState.COMPLETED
    found = visits(instance)
    assert ("SubProcess_Approval", "Terminated") in found
    assert ("EndEvent_Rejected", "Terminated") in found
    assert all(node != "EndEvent_Ordered" for node, _ in found)
    assert ("Boundary_Rejected", "Completed") in found
    assert ("EndEvent_Informed", "Completed") in found


def test_a_small_purchase_throws_nothing(purchase: Engine) -> None:
    instance = purchase.start_latest("purchase_escalation", {"amount": 10})
    assert waiting(instance) == ["Task_Approve"]
    complete(purchase, instance, "Task_Approve", approved=True)
    assert instance.state == InstanceState.COMPLETED
    assert instance.variables() == {"amount": 10, "approved": True}


def _uncaught() -> ProcessModel:
    return (
        ProcessBuilder("uncaught")
        .start_event("s")
        .parallel_gateway("fork")
        .intermediate_throw_event("up", escalation_code="NOBODY")
        .user_task("after")
        .end_event("e1")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .end_event("sub_up", parent="sub", escalation_code="NOBODY")
        .chain("sub_s", "sub_up")
        .user_task("after_sub")
        .end_event("e2")
        .chain("s", "fork", "up", "after", "e1")
        .chain("fork", "sub", "after_sub", "e2")
        .build()
    )


def test_an_uncaught_escalation_is_ignored(engine: Engine) -> None:
    engine.deploy(_uncaught())
    instance = engine.start_latest("uncaught")
    # The intermediate throw went on; the end event ended its token and so its subprocess.
    assert waiting(instance) == ["after", "after_sub"]
    assert ("sub_up", "Completed") in visits(instance)
    assert ("sub", "Completed") in visits(instance)


def _event_subprocesses(interrupting: bool) -> ProcessModel:
    """A subprocess whose content escalates LATE from a parallel branch while a task waits; an
    escalation event subprocess inside it catches every escalation."""
    return (
        ProcessBuilder("esp")
        .start_event("s")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .parallel_gateway("fork", parent="sub")
        .user_task("work", parent="sub")
        .end_event("work_done", parent="sub")
        .end_event("late", parent="sub", escalation_code="LATE")
        .chain("sub_s", "fork", "work", "work_done")
        .chain("fork", "late")
        .sub_process("on_late", parent="sub", triggered_by_event=True)
        .start_event(
            "on_late_s",
            parent="on_late",
            escalation=True,
            interrupting=interrupting,
            escalation_code_variable="why",
        )
        .user_task("handle", parent="on_late")
        .end_event("handled", parent="on_late")
        .chain("on_late_s", "handle", "handled")
        .user_task("after")
        .end_event("e")
        .chain("s", "sub", "after", "e")
        .build()
    )


def test_a_non_interrupting_escalation_event_subprocess_runs_beside_its_scope(
    engine: Engine,
) -> None:
    engine.deploy(_event_subprocesses(interrupting=False))
    instance = engine.start_latest("esp")
    assert waiting(instance) == ["handle", "work"]
    assert instance.variables() == {"why": "LATE"}
    complete(engine, instance, "work")
    # The subprocess waits for its event subprocess to finish before it completes.
    assert waiting(instance) == ["handle"]
    complete(engine, instance, "handle")
    assert waiting(instance) == ["after"]
    assert ("late", "Completed") in visits(instance)


def test_an_interrupting_escalation_event_subprocess_ends_the_rest_of_its_scope(
    engine: Engine,
) -> None:
    engine.deploy(_event_subprocesses(interrupting=True))
    instance = engine.start_latest("esp")
    assert waiting(instance) == ["handle"]
    found = visits(instance)
    assert ("work", "Terminated") in found
    assert ("late", "Terminated") in found
    complete(engine, instance, "handle")
    assert waiting(instance) == ["after"]


def test_the_nearest_scope_that_catches_the_code_wins(engine: Engine) -> None:
    """The inner subprocess's boundary event catches only OTHER; LATE goes past it to the outer
    subprocess's; an escalation event subprocess at the process level would catch it too, but
    it is further out."""
    model = (
        ProcessBuilder("nested")
        .start_event("s")
        .sub_process("outer")
        .start_event("outer_s", parent="outer")
        .sub_process("inner", parent="outer")
        .start_event("inner_s", parent="inner")
        .intermediate_throw_event("up", parent="inner", escalation_code="LATE")
        .user_task("inner_work", parent="inner")
        .end_event("inner_e", parent="inner")
        .chain("inner_s", "up", "inner_work", "inner_e")
        .end_event("outer_e", parent="outer")
        .chain("outer_s", "inner", "outer_e")
        .boundary_event("inner_other", "inner", escalation_code="OTHER")
        .end_event("inner_other_e", parent="outer")
        .chain("inner_other", "inner_other_e")
        .boundary_event("outer_late", "outer", escalation_code="LATE", cancel_activity=False)
        .user_task("outer_handler")
        .end_event("outer_handled")
        .chain("outer_late", "outer_handler", "outer_handled")
        .sub_process("everywhere", triggered_by_event=True)
        .start_event("everywhere_s", parent="everywhere", escalation=True)
        .end_event("everywhere_e", parent="everywhere")
        .chain("everywhere_s", "everywhere_e")
        .end_event("e")
        .chain("s", "outer", "e")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("nested")
    assert waiting(instance) == ["inner_work", "outer_handler"]
    assert all(node not in ("inner_other", "everywhere_s") for node, _ in visits(instance))


def test_an_event_subprocess_does_not_catch_what_its_own_content_throws_again(
    engine: Engine,
) -> None:
    """Camunda 7 leaves a rethrow inside an escalation event subprocess to the scopes around
    the one it belongs to."""
    model = (
        ProcessBuilder("rethrow")
        .start_event("s")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .intermediate_throw_event("first", parent="sub", escalation_code="LATE")
        .user_task("work", parent="sub")
        .end_event("sub_e", parent="sub")
        .chain("sub_s", "first", "work", "sub_e")
        .sub_process("on_late", parent="sub", triggered_by_event=True)
        .start_event("on_late_s", parent="on_late", escalation_code="LATE", interrupting=False)
        .intermediate_throw_event("again", parent="on_late", escalation_code="LATE")
        .user_task("handle", parent="on_late")
        .end_event("handled", parent="on_late")
        .chain("on_late_s", "again", "handle", "handled")
        .boundary_event("outside", "sub", escalation_code="LATE", cancel_activity=False)
        .user_task("outside_handler")
        .end_event("outside_e")
        .chain("outside", "outside_handler", "outside_e")
        .end_event("e")
        .chain("s", "sub", "e")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("rethrow")
    assert waiting(instance) == ["handle", "outside_handler", "work"]


def test_an_escalation_from_an_iteration_reaches_the_multi_instance_body(engine: Engine) -> None:
    model = (
        ProcessBuilder("mi")
        .start_event("s")
        .sub_process("each")
        .start_event("each_s", parent="each")
        .user_task("review", parent="each")
        .end_event("late", parent="each", escalation_code="LATE")
        .chain("each_s", "review", "late")
        .multi_instance("each", cardinality="3")
        .boundary_event("on_late", "each", escalation_code="LATE")
        .user_task("handle")
        .end_event("handled")
        .chain("on_late", "handle", "handled")
        .end_event("e")
        .chain("s", "each", "e")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("mi")
    assert waiting(instance) == ["review", "review", "review"]
    complete_one = instance.user_tasks()[0]
    engine.complete_task(complete_one.id)
    # The interrupting boundary event on the body ended every iteration.
    assert waiting(instance) == ["handle"]
    assert [state for node, state in visits(instance) if node == "review"].count("Terminated") == 2


# --- from a called instance ---------------------------------------------------------------------


def _child(key: str, *, end_code: str | None = None, throw_code: str | None = None) -> ProcessModel:
    """A called process: one branch waits at a task; the other throws `throw_code` on the way
    to a task (an intermediate throw event) or ends with `end_code` (an escalation end event)."""
    builder = (
        ProcessBuilder(key)
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("child_work")
        .end_event("child_done")
        .chain("s", "fork", "child_work", "child_done")
    )
    if throw_code is not None:
        builder.intermediate_throw_event("child_up", escalation_code=throw_code)
        builder.user_task("child_after").end_event("child_after_e")
        builder.chain("fork", "child_up", "child_after", "child_after_e")
    else:
        builder.end_event("child_up", escalation_code=end_code)
        builder.chain("fork", "child_up")
    return builder.build()


def _caller(key: str, called: str, *, interrupting: bool, code: str | None) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("s")
        .call_activity("call", called_element=called)
        .user_task("after_call")
        .end_event("e")
        .chain("s", "call", "after_call", "e")
        .boundary_event(
            "on_escalation",
            "call",
            escalation=True,
            escalation_code=code,
            cancel_activity=interrupting,
            escalation_code_variable="escalated",
        )
        .user_task("handle")
        .end_event("handled")
        .chain("on_escalation", "handle", "handled")
        .build()
    )


def test_a_called_instances_escalation_reaches_a_non_interrupting_call_activity_boundary(
    engine: Engine,
) -> None:
    engine.deploy(
        _child("child", throw_code="HELP"),
        _caller("parent", "child", interrupting=False, code="HELP"),
    )
    parent = engine.start_latest("parent")
    [child] = parent.children()
    # Both go on: the child past its throw event, the parent along its boundary event, while
    # its call activity still waits for the child.
    assert waiting(child) == ["child_after", "child_work"]
    assert waiting(parent) == ["handle"]
    assert [t.node_id for t in parent.tokens()].count("call") == 1
    assert parent.variables() == {"escalated": "HELP"}
    complete(engine, child, "child_after")
    complete(engine, child, "child_work")
    assert child.state == InstanceState.COMPLETED
    assert waiting(parent) == ["after_call", "handle"]


def test_a_called_instances_escalation_end_event_reaches_an_interrupting_boundary(
    engine: Engine,
) -> None:
    engine.deploy(
        _child("child", end_code="GIVE_UP"),
        _caller("parent", "child", interrupting=True, code=None),
    )
    parent = engine.start_latest("parent")
    [child] = parent.children()
    # The boundary event interrupted the call activity: the called instance ended with it.
    assert waiting(parent) == ["handle"]
    assert child.state == InstanceState.TERMINATED
    assert ("call", "Terminated") in visits(parent)
    assert parent.variables() == {"escalated": "GIVE_UP"}


def test_an_escalation_nobody_in_the_family_catches_is_ignored(engine: Engine) -> None:
    engine.deploy(
        _child("child", throw_code="HELP"),
        _caller("parent", "child", interrupting=True, code="SOMETHING_ELSE"),
    )
    parent = engine.start_latest("parent")
    [child] = parent.children()
    assert waiting(child) == ["child_after", "child_work"]
    assert waiting(parent) == []
    assert [t.node_id for t in parent.tokens()] == ["call"]


def test_an_escalation_travels_up_through_two_call_activities(engine: Engine) -> None:
    middle = (
        ProcessBuilder("middle")
        .start_event("s")
        .call_activity("call_child", called_element="child")
        .end_event("e")
        .chain("s", "call_child", "e")
        .build()
    )
    engine.deploy(
        _child("child", throw_code="HELP"),
        middle,
        _caller("parent", "middle", interrupting=True, code="HELP"),
    )
    parent = engine.start_latest("parent")
    [middle_instance] = parent.children()
    [child] = middle_instance.children()
    # Caught at the top, interrupting: the middle instance ends, and the child with it.
    assert waiting(parent) == ["handle"]
    assert middle_instance.state == InstanceState.TERMINATED
    assert child.state == InstanceState.TERMINATED
