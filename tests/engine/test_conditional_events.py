"""Conditional events as Camunda 7 runs them: a condition over the variables, checked when its
wait starts and after each variable change it sees, triggering once per change after which it
holds; each wait a `conditional` event_subscription row while it lasts."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.errors import Conflict, NotFound
from engine.model import ProcessModel
from engine.states import InstanceState


def waits(engine: Engine, instance_id: UUID) -> list[str]:
    """The nodes of the instance's conditional subscriptions, sorted."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id FROM event_subscription WHERE instance_id = %s "
            "AND kind = 'conditional' ORDER BY node_id",
            (instance_id,),
        ).fetchall()
    return [row[0] for row in rows]


def open_tasks(instance: InstanceHandle) -> list[str]:
    return sorted(task.node_id for task in instance.user_tasks())


def complete(engine: Engine, instance: InstanceHandle, node_id: str, **values: Any) -> None:
    task = next(t for t in instance.user_tasks() if t.node_id == node_id)
    engine.complete_task(task.id, values)


def catch_model() -> ProcessModel:
    """start -> Wait (${x > 5}) -> After -> end."""
    return (
        ProcessBuilder("cond_catch")
        .start_event("Start")
        .intermediate_catch_event("Wait")
        .conditional("Wait", "${x > 5}")
        .user_task("After")
        .end_event("End")
        .chain("Start", "Wait", "After", "End")
        .build()
    )


def boundary_model(interrupting: bool, **narrowing: Any) -> ProcessModel:
    """start -> Work (boundary Changed: ${x > 0}) -> end; Changed -> Side -> end."""
    return (
        ProcessBuilder("cond_boundary")
        .start_event("Start")
        .user_task("Work")
        .end_event("End")
        .boundary_event("Changed", "Work", cancel_activity=interrupting)
        .conditional("Changed", "${x > 0}", **narrowing)
        .user_task("Side")
        .end_event("SideEnd")
        .chain("Start", "Work", "End")
        .chain("Changed", "Side", "SideEnd")
        .build()
    )


def event_subprocess_model(interrupting: bool, in_subprocess: bool) -> ProcessModel:
    """start -> Work -> end, with an event subprocess On (start ${alarm == true} -> Handle ->
    end) at the process level, or inside a subprocess Outer around Work."""
    parent = "Outer" if in_subprocess else None
    builder = ProcessBuilder("cond_esp").start_event("Start")
    if in_subprocess:
        builder = (
            builder.sub_process("Outer")
            .end_event("End")
            .chain("Start", "Outer", "End")
            .start_event("OuterStart", parent="Outer")
            .user_task("Work", parent="Outer")
            .end_event("OuterEnd", parent="Outer")
            .chain("OuterStart", "Work", "OuterEnd")
        )
    else:
        builder = builder.user_task("Work").end_event("End").chain("Start", "Work", "End")
    return (
        builder.sub_process("On", parent=parent, triggered_by_event=True)
        .start_event("Alarm", parent="On", interrupting=interrupting)
        .conditional("Alarm", "${alarm == true}")
        .user_task("Handle", parent="On")
        .end_event("Handled", parent="On")
        .chain("Alarm", "Handle", "Handled")
        .build()
    )


# -- intermediate catch ------------------------------------------------------------------------


def test_a_true_condition_passes_the_catch_event_at_once(engine: Engine) -> None:
    engine.deploy(catch_model())
    instance = engine.start_latest("cond_catch", {"x": 10})
    assert open_tasks(instance) == ["After"]
    assert waits(engine, instance.id) == []


def test_a_false_condition_waits_until_a_change_makes_it_true(engine: Engine) -> None:
    engine.deploy(catch_model())
    instance = engine.start_latest("cond_catch")  # no x yet: the condition does not hold
    assert open_tasks(instance) == []
    assert waits(engine, instance.id) == ["Wait"]
    instance.set_variables({"x": 3})
    assert waits(engine, instance.id) == ["Wait"]
    assert open_tasks(instance) == []
    instance.set_variables({"x": 6})
    assert open_tasks(instance) == ["After"]
    assert waits(engine, instance.id) == []
    assert [s.node_id for p in instance.history() for s in p.steps][:3] == [
        "Start",
        "Wait",
        "After",
    ]


# -- boundary events ---------------------------------------------------------------------------


def test_an_interrupting_boundary_event_ends_its_task(engine: Engine) -> None:
    engine.deploy(boundary_model(interrupting=True))
    instance = engine.start_latest("cond_boundary", {"x": 0})
    assert open_tasks(instance) == ["Work"]
    assert waits(engine, instance.id) == ["Changed"]
    instance.set_variables({"x": 1})
    assert open_tasks(instance) == ["Side"]
    assert waits(engine, instance.id) == []


def test_a_boundary_event_whose_condition_holds_at_the_start_triggers_then(engine: Engine) -> None:
    engine.deploy(boundary_model(interrupting=True))
    instance = engine.start_latest("cond_boundary", {"x": 4})
    assert open_tasks(instance) == ["Side"]
    assert waits(engine, instance.id) == []


def test_a_non_interrupting_boundary_event_triggers_once_per_change_that_leaves_it_true(
    engine: Engine,
) -> None:
    """Camunda's rule: every variable change (create, update or delete, of any variable the
    event sees) after which the condition holds triggers it once, even when it held before."""
    engine.deploy(boundary_model(interrupting=False))
    instance = engine.start_latest("cond_boundary", {"x": 0})
    assert waits(engine, instance.id) == ["Changed"]
    instance.set_variables({"x": 1})  # one change, now true: once
    assert open_tasks(instance) == ["Side", "Work"]
    instance.set_variables({"x": 1})  # the same value again: a change, still true
    assert open_tasks(instance) == ["Side", "Side", "Work"]
    instance.set_variables({"other": "a", "more": "b"})  # two changes, both leave it true
    assert open_tasks(instance) == ["Side"] * 4 + ["Work"]
    instance.set_variables({"x": -1})  # false: nothing
    instance.set_variables({"other": "c"})
    assert open_tasks(instance) == ["Side"] * 4 + ["Work"]
    assert waits(engine, instance.id) == ["Changed"]
    complete(engine, instance, "Work")
    assert waits(engine, instance.id) == []  # the wait ends with its activity


def test_variable_name_and_events_narrow_the_changes_that_count(engine: Engine) -> None:
    engine.deploy(boundary_model(False, variable_name="x", variable_events=["update"]))
    instance = engine.start_latest("cond_boundary", {"other": 0})
    instance.set_variables({"x": 1})  # x is created: not an update
    assert open_tasks(instance) == ["Work"]
    instance.set_variables({"other": 1})  # another variable: not counted
    assert open_tasks(instance) == ["Work"]
    instance.set_variables({"x": 2})  # an update of x, and true
    assert open_tasks(instance) == ["Side", "Work"]


def subprocess_boundary_model() -> ProcessModel:
    """start -> Outer[ Work ] (boundary Stop: ${stop == true}) -> end; Stop -> Stopped."""
    return (
        ProcessBuilder("cond_sub_boundary")
        .start_event("Start")
        .sub_process("Outer")
        .end_event("End")
        .chain("Start", "Outer", "End")
        .start_event("OuterStart", parent="Outer")
        .user_task("Work", parent="Outer")
        .end_event("OuterEnd", parent="Outer")
        .chain("OuterStart", "Work", "OuterEnd")
        .boundary_event("Stop", "Outer")
        .conditional("Stop", "${stop == true}")
        .user_task("Stopped")
        .end_event("StoppedEnd")
        .chain("Stop", "Stopped", "StoppedEnd")
        .build()
    )


def test_an_interrupting_boundary_event_on_a_subprocess_ends_everything_inside(
    engine: Engine,
) -> None:
    engine.deploy(subprocess_boundary_model())
    instance = engine.start_latest("cond_sub_boundary", {"stop": False})
    assert open_tasks(instance) == ["Work"]
    assert waits(engine, instance.id) == ["Stop"]
    # Set from the task inside: the root variable is visible to the subprocess's boundary.
    [task] = instance.user_tasks()
    engine.modify_task_variables(task.id, {"stop": True}, local=False)
    assert open_tasks(instance) == ["Stopped"]
    assert waits(engine, instance.id) == []


def test_a_local_variable_inside_a_subprocess_does_not_reach_outer_waits(engine: Engine) -> None:
    """Scoped evaluation: a variable local to the task inside is not visible to the boundary
    event of the subprocess around it."""
    engine.deploy(subprocess_boundary_model())
    instance = engine.start_latest("cond_sub_boundary", {"stop": False})
    [task] = instance.user_tasks()
    engine.modify_task_variables(task.id, {"stop": True}, local=True)
    assert open_tasks(instance) == ["Work"]
    assert waits(engine, instance.id) == ["Stop"]


# -- event subprocesses ------------------------------------------------------------------------


@pytest.mark.parametrize("in_subprocess", [False, True])
def test_an_interrupting_event_subprocess_ends_its_scope_once(
    engine: Engine, in_subprocess: bool
) -> None:
    engine.deploy(event_subprocess_model(interrupting=True, in_subprocess=in_subprocess))
    instance = engine.start_latest("cond_esp", {"alarm": False})
    assert open_tasks(instance) == ["Work"]
    assert waits(engine, instance.id) == ["Alarm"]
    instance.set_variables({"alarm": True})
    assert open_tasks(instance) == ["Handle"]
    assert waits(engine, instance.id) == []  # it triggers once per activation of its scope
    instance.set_variables({"alarm": True})
    assert open_tasks(instance) == ["Handle"]
    complete(engine, instance, "Handle")
    assert instance.state is InstanceState.COMPLETED


@pytest.mark.parametrize("in_subprocess", [False, True])
def test_a_non_interrupting_event_subprocess_runs_beside_its_scope_per_change(
    engine: Engine, in_subprocess: bool
) -> None:
    engine.deploy(event_subprocess_model(interrupting=False, in_subprocess=in_subprocess))
    instance = engine.start_latest("cond_esp", {"alarm": False})
    instance.set_variables({"alarm": True})
    assert open_tasks(instance) == ["Handle", "Work"]
    instance.set_variables({"alarm": True})
    assert open_tasks(instance) == ["Handle", "Handle", "Work"]
    assert waits(engine, instance.id) == ["Alarm"]
    for _ in range(2):
        complete(engine, instance, "Handle")
    assert waits(engine, instance.id) == ["Alarm"]  # its scope still runs Work
    complete(engine, instance, "Work")
    assert waits(engine, instance.id) == []
    assert instance.state is InstanceState.COMPLETED


def test_an_event_subprocess_whose_condition_holds_when_its_scope_starts_preempts_it(
    engine: Engine,
) -> None:
    engine.deploy(event_subprocess_model(interrupting=True, in_subprocess=False))
    instance = engine.start_latest("cond_esp", {"alarm": True})
    assert open_tasks(instance) == ["Handle"]
    assert "Work" not in [s.node_id for p in instance.history() for s in p.steps]
    assert waits(engine, instance.id) == []


def test_cancelling_the_instance_retires_its_waits(engine: Engine) -> None:
    engine.deploy(event_subprocess_model(interrupting=False, in_subprocess=False))
    instance = engine.start_latest("cond_esp", {"alarm": False})
    assert waits(engine, instance.id) == ["Alarm"]
    instance.cancel()
    assert waits(engine, instance.id) == []


# -- the paths that change variables -----------------------------------------------------------


def parallel_model() -> ProcessModel:
    """start -> fork -> (Wait ${ready == true} -> Ready) | (Prepare) ; message catch Ping ->
    Pinged, in a third branch."""
    return (
        ProcessBuilder("cond_paths")
        .start_event("Start")
        .parallel_gateway("Fork")
        .intermediate_catch_event("Wait")
        .conditional("Wait", "${ready == true}")
        .user_task("Ready")
        .end_event("ReadyEnd")
        .user_task("Prepare")
        .end_event("PrepareEnd")
        .intermediate_catch_event("Ping", message="ping")
        .end_event("PingEnd")
        .chain("Start", "Fork", "Wait", "Ready", "ReadyEnd")
        .chain("Fork", "Prepare", "PrepareEnd")
        .chain("Fork", "Ping", "PingEnd")
        .build()
    )


def test_completing_a_task_with_variables_triggers_a_waiting_event(engine: Engine) -> None:
    engine.deploy(parallel_model())
    instance = engine.start_latest("cond_paths")
    assert waits(engine, instance.id) == ["Wait"]
    complete(engine, instance, "Prepare", ready=True)
    assert open_tasks(instance) == ["Ready"]
    assert waits(engine, instance.id) == []


def test_a_correlated_message_with_variables_triggers_a_waiting_event(engine: Engine) -> None:
    engine.deploy(parallel_model())
    instance = engine.start_latest("cond_paths")
    engine.correlate_message("ping", instance_id=instance.id, variables={"ready": True})
    assert open_tasks(instance) == ["Prepare", "Ready"]
    assert waits(engine, instance.id) == []


def test_a_deletion_can_make_a_condition_true(engine: Engine) -> None:
    model = (
        ProcessBuilder("cond_delete")
        .start_event("Start")
        .intermediate_catch_event("Unlocked")
        .conditional(
            "Unlocked", "${execution.getVariable('lock') == null}", variable_events=["delete"]
        )
        .user_task("Go")
        .end_event("End")
        .chain("Start", "Unlocked", "Go", "End")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_delete", {"lock": "held"})
    assert waits(engine, instance.id) == ["Unlocked"]
    instance.set_variables({"lock": None})  # an update to null: not a deletion
    assert waits(engine, instance.id) == ["Unlocked"]
    instance.delete_variables("lock")
    assert open_tasks(instance) == ["Go"]
    assert waits(engine, instance.id) == []


# -- conditional start events ------------------------------------------------------------------


def start_model(key: str, condition: str, **narrowing: Any) -> ProcessModel:
    return (
        ProcessBuilder(key)
        .start_event("Start")
        .conditional("Start", condition, **narrowing)
        .user_task("Task")
        .end_event("End")
        .chain("Start", "Task", "End")
        .build()
    )


def test_conditional_start_events_start_every_definition_whose_condition_holds(
    engine: Engine,
) -> None:
    engine.deploy(
        start_model("hot", "${temperature > 30}"),
        start_model("cold", "${temperature < 0}"),
        start_model("city", "${city == 'Parma'}", variable_name="city"),
    )
    result = engine.evaluate_conditions({"temperature": 35}, business_key="B-1")
    [started] = result.started
    hot = engine.instance(started.instance_id)
    assert hot.info().definition_key == "hot"
    assert hot.info().business_key == "B-1"
    assert hot.variables() == {"temperature": 35}
    assert open_tasks(hot) == ["Task"]
    assert engine.evaluate_conditions({"temperature": 10}).started == []
    both = engine.evaluate_conditions({"temperature": -5, "city": "Parma"}).started
    assert sorted(engine.instance(s.instance_id).info().definition_key for s in both) == [
        "city",
        "cold",
    ]
    [cold] = [d for d in engine.definitions("cold")]
    only = engine.evaluate_conditions({"temperature": -5, "city": "Parma"}, definition_id=cold.id)
    assert [s.definition_id for s in only.started] == [cold.id]
    engine.deploy(start_model("cold", "${temperature < -10}"), duplicate_filtering=False)
    with engine.connection() as conn:
        starts = conn.execute(
            "SELECT d.key, d.version, s.name FROM event_subscription s JOIN process_definition d "
            "ON d.id = s.definition_id WHERE s.kind = 'conditional' AND s.instance_id IS NULL "
            "ORDER BY d.key"
        ).fetchall()
    # A new version takes over its key's start condition.
    assert starts == [
        ("city", 1, "${city == 'Parma'}"),
        ("cold", 2, "${temperature < -10}"),
        ("hot", 1, "${temperature > 30}"),
    ]
    assert engine.evaluate_conditions({"temperature": -5}).started == []
    with pytest.raises(NotFound, match="no conditional start event"):
        engine.evaluate_conditions({"temperature": -20}, definition_id=cold.id)


def test_outer_waits_are_evaluated_first_and_an_interruption_ends_the_inner_ones(
    engine: Engine,
) -> None:
    """Top-down: one change makes both the subprocess's boundary event and the boundary event
    of the task inside it true; the outer one interrupts, so the inner one never triggers."""
    model = (
        ProcessBuilder("cond_top_down")
        .start_event("Start")
        .sub_process("Outer")
        .end_event("End")
        .chain("Start", "Outer", "End")
        .start_event("OuterStart", parent="Outer")
        .user_task("Work", parent="Outer")
        .end_event("OuterEnd", parent="Outer")
        .chain("OuterStart", "Work", "OuterEnd")
        .boundary_event("InnerStop", "Work", cancel_activity=False)
        .conditional("InnerStop", "${level > 0}")
        .user_task("InnerHandled", parent="Outer")
        .end_event("InnerHandledEnd", parent="Outer")
        .chain("InnerStop", "InnerHandled", "InnerHandledEnd")
        .boundary_event("OuterStop", "Outer")
        .conditional("OuterStop", "${level > 1}")
        .user_task("OuterHandled")
        .end_event("OuterHandledEnd")
        .chain("OuterStop", "OuterHandled", "OuterHandledEnd")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_top_down", {"level": 0})
    assert waits(engine, instance.id) == ["InnerStop", "OuterStop"]
    instance.set_variables({"level": 1})  # only the inner one holds
    assert open_tasks(instance) == ["InnerHandled", "Work"]
    instance.set_variables({"level": 2})  # both hold: the outer one goes first and ends all
    assert open_tasks(instance) == ["OuterHandled"]
    assert waits(engine, instance.id) == []
    assert [s.node_id for p in instance.history() for s in p.steps].count("InnerStop") == 1


def test_a_conditional_event_after_an_event_based_gateway_can_win(engine: Engine) -> None:
    model = (
        ProcessBuilder("cond_gateway")
        .start_event("Start")
        .user_task("Before")
        .event_based_gateway("Gateway")
        .intermediate_catch_event("Paid", message="paid")
        .intermediate_catch_event("Overdue")
        .conditional("Overdue", "${days > 30}")
        .end_event("PaidEnd")
        .user_task("Remind")
        .end_event("RemindEnd")
        .chain("Start", "Before", "Gateway")
        .chain("Gateway", "Paid", "PaidEnd")
        .chain("Gateway", "Overdue", "Remind", "RemindEnd")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_gateway", {"days": 0})
    complete(engine, instance, "Before")
    assert waits(engine, instance.id) == ["Overdue"]
    instance.set_variables({"days": 31})
    assert open_tasks(instance) == ["Remind"]
    assert waits(engine, instance.id) == []
    with engine.connection() as conn:
        left = conn.execute(
            "SELECT count(*) FROM event_subscription WHERE instance_id = %s", (instance.id,)
        ).fetchone()
    assert left == (0,)  # the message wait went with the gateway's token


def test_a_handler_setting_a_variable_triggers_a_wait_elsewhere(engine: Engine) -> None:
    engine.register_handler("markReady", lambda context: {"ready": True})
    model = (
        ProcessBuilder("cond_handler")
        .start_event("Start")
        .parallel_gateway("Fork")
        .intermediate_catch_event("Wait")
        .conditional("Wait", "${ready == true}")
        .user_task("Ready")
        .end_event("ReadyEnd")
        .user_task("Prepare")
        .service_task("Mark", handler="markReady")
        .end_event("MarkEnd")
        .chain("Start", "Fork", "Wait", "Ready", "ReadyEnd")
        .chain("Fork", "Prepare", "Mark", "MarkEnd")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_handler")
    complete(engine, instance, "Prepare")
    assert open_tasks(instance) == ["Ready"]
    assert waits(engine, instance.id) == []


def test_a_suspended_instance_refuses_a_change_that_would_trigger(engine: Engine) -> None:
    engine.deploy(boundary_model(interrupting=True))
    instance = engine.start_latest("cond_boundary", {"x": 0})
    instance.suspend()
    instance.set_variables({"y": 1})  # the condition stays false: accepted
    with pytest.raises(Conflict, match="would trigger conditional event 'Changed'"):
        instance.set_variables({"x": 1})
    assert instance.variables() == {"x": 0, "y": 1}
    instance.resume()
    instance.set_variables({"x": 1})
    assert open_tasks(instance) == ["Side"]


def test_an_external_task_completed_with_variables_triggers_a_waiting_event(
    engine: Engine,
) -> None:
    model = (
        ProcessBuilder("cond_external")
        .start_event("Start")
        .parallel_gateway("Fork")
        .intermediate_catch_event("Wait")
        .conditional("Wait", "${ready == true}")
        .user_task("Ready")
        .end_event("ReadyEnd")
        .service_task("Check", topic="check")
        .end_event("CheckEnd")
        .chain("Start", "Fork", "Wait", "Ready", "ReadyEnd")
        .chain("Fork", "Check", "CheckEnd")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_external")
    [task] = engine.fetch_and_lock("worker", {"check": 60_000})
    engine.complete_external_task(task["id"], "worker", {"ready": True})
    assert open_tasks(instance) == ["Ready"]
    assert waits(engine, instance.id) == []


def test_a_variable_local_to_a_subprocess_reaches_only_the_waits_inside_it(
    engine: Engine,
) -> None:
    """Scoped evaluation: Outer's own `alarm` (an input parameter) hides the root's from the
    event subprocess inside Outer; a change of it reaches that one only, while a change of the
    root's reaches both (the inner one still reads Outer's)."""
    model = (
        ProcessBuilder("cond_scoped")
        .start_event("Start")
        .sub_process("Outer")
        .end_event("End")
        .chain("Start", "Outer", "End")
        .start_event("OuterStart", parent="Outer")
        .user_task("Work", parent="Outer")
        .end_event("OuterEnd", parent="Outer")
        .chain("OuterStart", "Work", "OuterEnd")
        .input_output("Outer", inputs={"alarm": "${false}"})
        .sub_process("InnerOn", parent="Outer", triggered_by_event=True)
        .start_event("InnerAlarm", parent="InnerOn", interrupting=False)
        .conditional("InnerAlarm", "${alarm == true}")
        .user_task("InnerHandle", parent="InnerOn")
        .end_event("InnerHandled", parent="InnerOn")
        .chain("InnerAlarm", "InnerHandle", "InnerHandled")
        .sub_process("On", triggered_by_event=True)
        .start_event("Alarm", parent="On", interrupting=False)
        .conditional("Alarm", "${alarm == true}")
        .user_task("Handle", parent="On")
        .end_event("Handled", parent="On")
        .chain("Alarm", "Handle", "Handled")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("cond_scoped", {"alarm": False})
    assert waits(engine, instance.id) == ["Alarm", "InnerAlarm"]
    [task] = instance.user_tasks()
    engine.modify_task_variables(task.id, {"alarm": True}, local=False)  # Outer's has the name
    assert open_tasks(instance) == ["InnerHandle", "Work"]
    assert instance.variables() == {"alarm": False}  # the root's is unchanged
    instance.set_variables({"alarm": True})
    assert open_tasks(instance) == ["Handle", "InnerHandle", "InnerHandle", "Work"]


def handler_boundary_model(interrupting: bool, condition: str = "${x == 1}") -> ProcessModel:
    """start -> Before -> Compute (handler setX; boundary Hit) -> After -> end; Hit -> Caught."""
    return (
        ProcessBuilder("cond_own")
        .start_event("Start")
        .user_task("Before")
        .service_task("Compute", handler="setX")
        .user_task("After")
        .end_event("End")
        .chain("Start", "Before", "Compute", "After", "End")
        .boundary_event("Hit", "Compute", cancel_activity=interrupting)
        .conditional("Hit", condition)
        .user_task("Caught")
        .end_event("CaughtEnd")
        .chain("Hit", "Caught", "CaughtEnd")
        .build()
    )


@pytest.mark.parametrize(
    ("interrupting", "expected"), [(True, ["Caught"]), (False, ["After", "Caught"])]
)
def test_a_tasks_own_handler_triggers_its_boundary_event_before_it_leaves(
    engine: Engine, interrupting: bool, expected: list[str]
) -> None:
    """As Camunda dispatches delegation code's changes at the end of the activity's execution:
    the task's own boundary event hears them before the task is left."""
    engine.register_handler("setX", lambda context: {"x": 1})
    engine.deploy(handler_boundary_model(interrupting))
    instance = engine.start_latest("cond_own")
    complete(engine, instance, "Before")
    assert open_tasks(instance) == expected
    assert waits(engine, instance.id) == []


def test_a_boundary_event_that_holds_when_an_automatic_task_starts_comes_first(
    engine: Engine,
) -> None:
    calls: list[str] = []

    def record(context: Any) -> dict[str, Any]:
        calls.append("ran")
        return {}

    engine.register_handler("setX", record)
    engine.deploy(handler_boundary_model(True, "${go == true}"))
    instance = engine.start_latest("cond_own", {"go": True})
    complete(engine, instance, "Before")
    assert open_tasks(instance) == ["Caught"]
    assert calls == []  # interrupted before it executed
