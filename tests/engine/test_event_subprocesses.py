"""Event subprocesses started by messages, timers and signals: interrupting and not, at process
level and inside embedded subprocesses. Their subscriptions and timer jobs are rows that exist
exactly while their scope is active; each step below counts them in the database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.jobs import ExecuteJob
from engine.errors import Conflict, NotFound
from engine.model import TimerDefinition
from engine.states import InstanceState, JobOutcome
from tests.engine.clock import ManualClock
from tests.engine.test_waits import fire_due_jobs

TRIGGERS = ("message", "signal", "timer")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as engine:
        yield engine


def waits(database_url: str, instance_id: UUID) -> list[tuple[str, str, str]]:
    """The instance's subscriptions and jobs as (table, node, owner), owner "scope" for a row
    of a token and "instance" for one that names no token; sorted."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT 'subscription', node_id, token_id IS NULL FROM event_subscription "
            "WHERE instance_id = %(i)s UNION ALL "
            "SELECT 'job', node_id, token_id IS NULL FROM job WHERE instance_id = %(i)s",
            {"i": instance_id},
        ).fetchall()
    return sorted(
        (table, node, "instance" if no_token else "scope") for table, node, no_token in rows
    )


def start_event(
    builder: ProcessBuilder, trigger: str, interrupting: bool, parent: str, timer: str = "PT1H"
) -> ProcessBuilder:
    if trigger == "message":
        return builder.start_event(
            "esp_start", parent=parent, message="Ping", interrupting=interrupting
        )
    if trigger == "signal":
        return builder.start_event(
            "esp_start", parent=parent, signal="Alarm", interrupting=interrupting
        )
    definition = (
        TimerDefinition(kind="cycle", text=timer)
        if timer.startswith("R")
        else TimerDefinition(kind="date", text=timer)
        if timer[0].isdigit()
        else TimerDefinition(kind="duration", text=timer)
    )
    return builder.start_event(
        "esp_start",
        parent=parent,
        timer=definition,
        interrupting=interrupting,
    )


def process_level(trigger: str, interrupting: bool, timer: str = "PT1H") -> ProcessBuilder:
    """start -> work (user task) -> end, and an event subprocess "esp" whose run waits at
    "handle" (a user task)."""
    builder = (
        ProcessBuilder("esp-process")
        .start_event("start")
        .user_task("work")
        .end_event("end")
        .chain("start", "work", "end")
        .sub_process("esp", triggered_by_event=True)
    )
    return (
        start_event(builder, trigger, interrupting, "esp", timer)
        .user_task("handle", parent="esp")
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "handle", "esp_end")
    )


def in_subprocess(trigger: str, interrupting: bool, timer: str = "PT1H") -> ProcessBuilder:
    """start -> outer (s_start -> work -> s_end) -> after (user task) -> end; the event
    subprocess "esp" belongs to "outer"."""
    builder = (
        ProcessBuilder("esp-scope")
        .start_event("start")
        .sub_process("outer")
        .start_event("s_start", parent="outer")
        .user_task("work", parent="outer")
        .end_event("s_end", parent="outer")
        .chain("s_start", "work", "s_end")
        .user_task("after")
        .end_event("end")
        .chain("start", "outer", "after", "end")
        .sub_process("esp", parent="outer", triggered_by_event=True)
    )
    return (
        start_event(builder, trigger, interrupting, "esp", timer)
        .user_task("handle", parent="esp")
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "handle", "esp_end")
    )


def fire(engine: Engine, clock: ManualClock, trigger: str, **message: Any) -> int:
    """Make the trigger happen once: how many deliveries or jobs ran."""
    if trigger == "message":
        return len(engine.correlate_message("Ping", **message).deliveries)
    if trigger == "signal":
        return len(engine.signal("Alarm").deliveries)
    clock.advance(hours=1, seconds=1)
    return fire_due_jobs(engine)


def open_tasks(instance: InstanceHandle) -> list[str]:
    return sorted(t.node_id for t in instance.user_tasks())


def complete(engine: Engine, instance: InstanceHandle, node_id: str) -> None:
    [task] = [t for t in instance.user_tasks() if t.node_id == node_id][:1]
    engine.complete_task(task.id)


def table(trigger: str, owner: str) -> list[tuple[str, str, str]]:
    return [("job" if trigger == "timer" else "subscription", "esp_start", owner)]


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_interrupting_at_process_level(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    timed.deploy(process_level(trigger, interrupting=True).build())
    instance = timed.start_latest("esp-process")
    assert waits(database_url, instance.id) == table(trigger, "instance")
    [task] = instance.user_tasks()
    assert fire(timed, clock, trigger) == 1
    # The work is retired and nothing listens any more, in the same transaction.
    assert open_tasks(instance) == ["handle"]
    assert waits(database_url, instance.id) == []
    assert timed.user_task(task.id).state == "Retired"
    if trigger == "signal":
        assert fire(timed, clock, trigger) == 0
    if trigger == "message":
        with pytest.raises(NotFound):
            timed.correlate_message("Ping")
    complete(timed, instance, "handle")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_non_interrupting_at_process_level(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    timed.deploy(process_level(trigger, interrupting=False).build())
    instance = timed.start_latest("esp-process")
    assert fire(timed, clock, trigger) == 1
    assert open_tasks(instance) == ["handle", "work"]
    # A message or signal subscription stays for the next one; a duration timer fired once.
    expected = [] if trigger == "timer" else table(trigger, "instance")
    assert waits(database_url, instance.id) == expected
    if trigger != "timer":
        assert fire(timed, clock, trigger) == 1
        assert open_tasks(instance) == ["handle", "handle", "work"]
    # The scope (the process) waits for its runs: completing its own work is not enough.
    complete(timed, instance, "work")
    assert instance.state is InstanceState.ACTIVE
    assert waits(database_url, instance.id) == expected
    while instance.user_tasks():
        complete(timed, instance, "handle")
    assert instance.info().state == InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_interrupting_in_a_subprocess(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    timed.deploy(in_subprocess(trigger, interrupting=True).build())
    instance = timed.start_latest("esp-scope")
    assert waits(database_url, instance.id) == table(trigger, "scope")
    assert fire(timed, clock, trigger) == 1
    assert open_tasks(instance) == ["handle"]
    assert waits(database_url, instance.id) == []
    complete(timed, instance, "handle")
    # The run ended, so did its scope: the process goes on after the subprocess.
    assert open_tasks(instance) == ["after"]
    assert waits(database_url, instance.id) == []
    complete(timed, instance, "after")
    assert instance.state is InstanceState.COMPLETED


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_non_interrupting_in_a_subprocess(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    timed.deploy(in_subprocess(trigger, interrupting=False).build())
    instance = timed.start_latest("esp-scope")
    assert fire(timed, clock, trigger) == 1
    assert open_tasks(instance) == ["handle", "work"]
    expected = [] if trigger == "timer" else table(trigger, "scope")
    assert waits(database_url, instance.id) == expected
    complete(timed, instance, "work")
    # The subprocess completes only once its run has ended too.
    assert open_tasks(instance) == ["handle"]
    assert waits(database_url, instance.id) == expected
    complete(timed, instance, "handle")
    assert open_tasks(instance) == ["after"]
    # The scope is over: it listens no more.
    assert waits(database_url, instance.id) == []
    if trigger == "message":
        with pytest.raises(NotFound):
            timed.correlate_message("Ping")
    complete(timed, instance, "after")
    assert instance.state is InstanceState.COMPLETED


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_the_scope_ending_retires_its_listeners(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    timed.deploy(in_subprocess(trigger, interrupting=True).build())
    instance = timed.start_latest("esp-scope")
    assert waits(database_url, instance.id) == table(trigger, "scope")
    complete(timed, instance, "work")
    assert waits(database_url, instance.id) == []
    if trigger == "message":
        with pytest.raises(NotFound):
            timed.correlate_message("Ping")
    else:
        assert fire(timed, clock, trigger) == 0
    assert open_tasks(instance) == ["after"]


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_cancelling_the_instance_retires_every_listener(
    timed: Engine, clock: ManualClock, database_url: str, trigger: str
) -> None:
    for build in (process_level, in_subprocess):
        timed.deploy(build(trigger, interrupting=False).build())
    top = timed.start_latest("esp-process")
    inner = timed.start_latest("esp-scope")
    assert waits(database_url, top.id) == table(trigger, "instance")
    assert waits(database_url, inner.id) == table(trigger, "scope")
    assert top.cancel() is InstanceState.TERMINATED
    assert inner.cancel() is InstanceState.TERMINATED
    assert waits(database_url, top.id) == [] and waits(database_url, inner.id) == []


def test_a_late_timer_does_nothing(timed: Engine, clock: ManualClock, database_url: str) -> None:
    """The job of a timer event subprocess goes with its scope; run after that, it is gone."""
    timed.deploy(in_subprocess("timer", interrupting=True).build())
    instance = timed.start_latest("esp-scope")
    [job] = timed.jobs(instance.id)
    complete(timed, instance, "work")
    clock.advance(hours=2)
    assert fire_due_jobs(timed) == 0
    assert timed.run(ExecuteJob(job.id)).outcome == JobOutcome.GONE
    assert open_tasks(instance) == ["after"]
    timed.deploy(process_level("timer", interrupting=True).build())
    ended = timed.start_latest("esp-process")
    [job] = timed.jobs(ended.id)
    complete(timed, ended, "work")
    assert ended.state is InstanceState.COMPLETED
    assert timed.run(ExecuteJob(job.id)).outcome == JobOutcome.GONE
    assert waits(database_url, ended.id) == []


def test_a_non_interrupting_cycle_runs_each_repetition(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    timed.deploy(process_level("timer", interrupting=False, timer="R3/PT1H").build())
    instance = timed.start_latest("esp-process")
    for runs in (1, 2, 3):
        clock.advance(hours=1, seconds=1)
        assert fire_due_jobs(timed) == 1
        assert open_tasks(instance) == ["handle"] * runs + ["work"]
        left = [] if runs == 3 else table("timer", "instance")
        assert waits(database_url, instance.id) == left
    clock.advance(hours=5)
    assert fire_due_jobs(timed) == 0


def test_a_date_timer(timed: Engine, clock: ManualClock, database_url: str) -> None:
    due = (clock.now + timedelta(days=1)).isoformat()
    timed.deploy(process_level("timer", interrupting=False, timer=due).build())
    instance = timed.start_latest("esp-process")
    [job] = timed.jobs(instance.id)
    assert job.due_at == clock.now + timedelta(days=1)
    clock.advance(hours=23)
    assert fire_due_jobs(timed) == 0
    clock.advance(hours=1)
    assert fire_due_jobs(timed) == 1
    assert open_tasks(instance) == ["handle", "work"]
    assert waits(database_url, instance.id) == []


def test_message_runs_concurrently_by_business_key_with_variables(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(process_level("message", interrupting=False).build())
    first = engine.start_latest("esp-process", business_key="A-1")
    second = engine.start_latest("esp-process", business_key="A-2")
    for n in (1, 2):
        result = engine.correlate_message(
            "Ping", business_key="A-2", variables={"n": n}, local_variables={"mine": n}
        )
        assert result.deliveries == [{"kind": "instance", "instance_id": str(second.id)}]
    assert open_tasks(second) == ["handle", "handle", "work"]
    assert open_tasks(first) == ["work"]
    assert second.variables()["n"] == 2 and "n" not in first.variables()
    # Each run's locals: the message's processVariablesLocal went to the run that received it.
    with psycopg.connect(database_url) as conn:
        locals_ = conn.execute(
            "SELECT v.value FROM variable v JOIN token t ON t.id::text = v.scope_key "
            "WHERE v.instance_id = %s AND v.name = 'mine' AND t.node_id = 'esp' "
            "ORDER BY v.value::text",
            (second.id,),
        ).fetchall()
    assert [row[0] for row in locals_] == [1, 2]
    assert waits(database_url, second.id) == table("message", "instance")


def test_signal_reaches_every_listening_scope(engine: Engine, database_url: str) -> None:
    engine.deploy(process_level("signal", interrupting=False).build())
    engine.deploy(in_subprocess("signal", interrupting=True).build())
    instances = [engine.start_latest("esp-process"), engine.start_latest("esp-scope")]
    assert len(engine.signal("Alarm", {"loud": True}).deliveries) == 2
    assert open_tasks(instances[0]) == ["handle", "work"]
    assert open_tasks(instances[1]) == ["handle"]
    assert all(i.variables()["loud"] is True for i in instances)


def nested(interrupting: bool) -> ProcessBuilder:
    """A process-level message event subprocess, and inside subprocess "outer" a signal event
    subprocess "inner_esp" whose own run holds a timer event subprocess "deep"."""
    return (
        ProcessBuilder("esp-nested")
        .start_event("start")
        .sub_process("outer")
        .start_event("s_start", parent="outer")
        .user_task("work", parent="outer")
        .end_event("s_end", parent="outer")
        .chain("s_start", "work", "s_end")
        .end_event("end")
        .chain("start", "outer", "end")
        .sub_process("inner_esp", parent="outer", triggered_by_event=True)
        .start_event("inner_start", parent="inner_esp", signal="Alarm", interrupting=interrupting)
        .user_task("inner_task", parent="inner_esp")
        .end_event("inner_end", parent="inner_esp")
        .chain("inner_start", "inner_task", "inner_end")
        .sub_process("deep", parent="inner_esp", triggered_by_event=True)
        .start_event(
            "deep_start",
            parent="deep",
            timer=TimerDefinition(kind="duration", text="PT1H"),
            interrupting=False,
        )
        .user_task("deep_task", parent="deep")
        .end_event("deep_end", parent="deep")
        .chain("deep_start", "deep_task", "deep_end")
        .sub_process("top_esp", triggered_by_event=True)
        .start_event("top_start", parent="top_esp", message="Stop")
        .end_event("top_end", parent="top_esp")
        .chain("top_start", "top_end")
    )


def test_nested_event_subprocesses_listen_while_their_scopes_live(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    timed.deploy(nested(interrupting=False).build())
    instance = timed.start_latest("esp-nested")
    assert waits(database_url, instance.id) == [
        ("subscription", "inner_start", "scope"),
        ("subscription", "top_start", "instance"),
    ]
    timed.signal("Alarm")
    # The run of "inner_esp" is a scope of its own: its timer event subprocess listens.
    assert waits(database_url, instance.id) == [
        ("job", "deep_start", "scope"),
        ("subscription", "inner_start", "scope"),
        ("subscription", "top_start", "instance"),
    ]
    clock.advance(hours=1, seconds=1)
    assert fire_due_jobs(timed) == 1
    assert open_tasks(instance) == ["deep_task", "inner_task", "work"]
    complete(timed, instance, "work")
    assert open_tasks(instance) == ["deep_task", "inner_task"]
    # The interrupting process-level event subprocess ends everything, nested runs included.
    timed.correlate_message("Stop")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []


def test_an_interrupting_run_silences_its_scope(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    """Once an interrupting event subprocess started, the other event subprocesses of its
    scope stop listening (a non-interrupting one's running runs end with the rest)."""
    timed.deploy(nested(interrupting=True).build())
    instance = timed.start_latest("esp-nested")
    timed.signal("Alarm")
    assert open_tasks(instance) == ["inner_task"]
    assert waits(database_url, instance.id) == [
        ("job", "deep_start", "scope"),
        ("subscription", "top_start", "instance"),
    ]
    assert timed.signal("Alarm").deliveries == []
    complete(timed, instance, "inner_task")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []


def multi_instance_scope() -> ProcessBuilder:
    return (
        ProcessBuilder("esp-mi")
        .start_event("start")
        .sub_process("outer")
        .start_event("s_start", parent="outer")
        .user_task("work", parent="outer")
        .end_event("s_end", parent="outer")
        .chain("s_start", "work", "s_end")
        .end_event("end")
        .chain("start", "outer", "end")
        .sub_process("esp", parent="outer", triggered_by_event=True)
        .start_event("esp_start", parent="esp", signal="Alarm", interrupting=False)
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "esp_end")
        .multi_instance("outer", cardinality=3)
    )


def test_each_iteration_of_a_multi_instance_subprocess_listens(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(multi_instance_scope().build())
    instance = engine.start_latest("esp-mi")
    assert waits(database_url, instance.id) == [("subscription", "esp_start", "scope")] * 3
    assert len(engine.signal("Alarm").deliveries) == 3
    complete(engine, instance, "work")
    assert waits(database_url, instance.id) == [("subscription", "esp_start", "scope")] * 2
    while instance.user_tasks():
        complete(engine, instance, "work")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []


def failing_reminder() -> ProcessBuilder:
    """A non-interrupting timer event subprocess whose run calls the handler "remind"."""
    return (
        ProcessBuilder("esp-failing")
        .start_event("start")
        .user_task("work")
        .end_event("end")
        .chain("start", "work", "end")
        .sub_process("esp", triggered_by_event=True)
        .start_event(
            "esp_start",
            parent="esp",
            timer=TimerDefinition(kind="duration", text="PT1H"),
            interrupting=False,
        )
        .service_task("remind", parent="esp", handler="remind")
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "remind", "esp_end")
    )


def test_a_failing_timer_run_opens_an_incident_on_its_job(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    reminded: list[str] = []

    def remind(context: Any) -> None:
        if not reminded:
            raise RuntimeError("mail server down")
        reminded.append("sent")

    timed.register_handler("remind", remind)
    timed.deploy(failing_reminder().build())
    instance = timed.start_latest("esp-failing")
    [job] = timed.jobs(instance.id)
    for _ in range(3):
        assert timed.execute_job(job.id) == JobOutcome.FAILED
    [incident] = timed.incidents(instance_id=instance.id)
    assert (incident.type, incident.node_id, incident.token_id) == ("failedJob", "esp_start", None)
    assert "mail server down" in incident.message
    # The process carries on meanwhile: its own work is untouched.
    assert open_tasks(instance) == ["work"]
    assert waits(database_url, instance.id) == table("timer", "instance")
    reminded.append("fixed")
    timed.retry_incident(incident.id)
    assert timed.incidents(instance_id=instance.id) == []
    assert timed.execute_job(job.id) == JobOutcome.EXECUTED
    assert reminded == ["fixed", "sent"]
    assert waits(database_url, instance.id) == []
    complete(timed, instance, "work")
    assert instance.state is InstanceState.COMPLETED


def test_the_scope_keeps_its_boundary_events_while_an_interrupting_run_lasts(
    engine: Engine, database_url: str
) -> None:
    model = (
        in_subprocess("message", interrupting=True)
        .boundary_event("give_up", "outer", signal="GiveUp")
        .end_event("given_up")
        .chain("give_up", "given_up")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("esp-scope")
    assert waits(database_url, instance.id) == [
        ("subscription", "esp_start", "scope"),
        ("subscription", "give_up", "scope"),
    ]
    engine.correlate_message("Ping")
    assert waits(database_url, instance.id) == [("subscription", "give_up", "scope")]
    engine.signal("GiveUp")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []
    assert timed_out_tasks(engine, instance) == ["handle", "work"]


def timed_out_tasks(engine: Engine, instance: InstanceHandle) -> list[str]:
    """The nodes of the instance's retired user tasks."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id FROM user_task WHERE instance_id = %s AND state = 'Retired' "
            "ORDER BY node_id",
            (instance.id,),
        ).fetchall()
    return [row[0] for row in rows]


def test_an_error_event_subprocess_silences_the_other_listeners(
    engine: Engine, database_url: str
) -> None:
    """An error thrown inside a message event subprocess's run is caught at process level by an
    error event subprocess: interrupting, it ends the run and the message stops listening."""
    model = (
        ProcessBuilder("esp-errors")
        .start_event("start")
        .user_task("work")
        .end_event("end")
        .chain("start", "work", "end")
        .sub_process("esp", triggered_by_event=True)
        .start_event("esp_start", parent="esp", message="Ping", interrupting=False)
        .service_task("remote", parent="esp", topic="remote")
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "remote", "esp_end")
        .sub_process("on_error", triggered_by_event=True)
        .start_event("caught", parent="on_error", error=True)
        .user_task("clean_up", parent="on_error")
        .end_event("cleaned", parent="on_error")
        .chain("caught", "clean_up", "cleaned")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("esp-errors")
    engine.correlate_message("Ping")
    assert waits(database_url, instance.id) == table("message", "instance")
    [task] = engine.fetch_and_lock("w", {"remote": 10_000})
    engine.external_task_bpmn_error(task["id"], "w", "BROKEN")
    assert open_tasks(instance) == ["clean_up"]
    assert waits(database_url, instance.id) == []
    with pytest.raises(NotFound):
        engine.correlate_message("Ping")
    complete(engine, instance, "clean_up")
    assert instance.state is InstanceState.COMPLETED


def test_a_message_to_one_of_several_active_scopes_needs_them_told_apart(
    engine: Engine, database_url: str
) -> None:
    model = (
        in_subprocess("message", interrupting=True).multi_instance("outer", cardinality=3).build()
    )
    engine.deploy(model)
    instance = engine.start_latest("esp-scope")
    assert waits(database_url, instance.id) == table("message", "scope") * 3
    with pytest.raises(Conflict, match="matches 3"):
        engine.correlate_message("Ping")
    # To all of them: each iteration is interrupted by its own run.
    assert len(engine.correlate_message("Ping", all=True).deliveries) == 3
    assert open_tasks(instance) == ["handle"] * 3
    assert waits(database_url, instance.id) == []
    while instance.user_tasks():
        complete(engine, instance, instance.user_tasks()[0].node_id)
    assert instance.state is InstanceState.COMPLETED


def test_a_suspended_instance_fires_no_timer_until_resumed(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    timed.deploy(process_level("timer", interrupting=False).build())
    instance = timed.start_latest("esp-process")
    instance.suspend()
    clock.advance(hours=2)
    assert fire_due_jobs(timed) == 0
    instance.resume()
    assert fire_due_jobs(timed) == 1
    assert open_tasks(instance) == ["handle", "work"]


def test_a_timer_expression_reads_the_scope_variables(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    timed.deploy(process_level("timer", interrupting=True, timer="${patience}").build())
    instance = timed.start_latest("esp-process", {"patience": "PT3H"})
    [job] = timed.jobs(instance.id)
    assert job.due_at == clock.now + timedelta(hours=3)
    assert waits(database_url, instance.id) == table("timer", "instance")


def test_an_instance_that_ends_at_once_leaves_no_listener(
    engine: Engine, database_url: str
) -> None:
    model = (
        ProcessBuilder("esp-quick")
        .start_event("start")
        .end_event("end")
        .chain("start", "end")
        .sub_process("esp", triggered_by_event=True)
        .start_event("esp_start", parent="esp", message="Ping", interrupting=False)
        .end_event("esp_end", parent="esp")
        .chain("esp_start", "esp_end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("esp-quick")
    assert instance.state is InstanceState.COMPLETED
    assert waits(database_url, instance.id) == []
    with pytest.raises(NotFound):
        engine.correlate_message("Ping")
