"""Cron time cycles (Quartz syntax, as Camunda 7 reads `timeCycle`) on timer start events,
boundary events, intermediate catch events and event-based gateways, fired by the job executor on
a clock the test moves; the engine's time zone (INTERLOCK_TIMEZONE); an invalid expression
refused at deployment through /engine-rest; and one cycle firing every second on the real clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from engine.api import Engine, InstanceHandle
from engine.core.settings import EngineSettings
from engine.errors import ExpressionError, InterlockError
from engine.loops.jobs import JobExecutor
from engine.states import InstanceState
from tests.jobs.conftest import ManualClock
from tests.server import PASSWORD, live_server
from tests.waiting import wait_until

# Tuesday 1 January 2030, 09:00 UTC.
START = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


def definitions(process: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" '
        'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="defs" '
        'targetNamespace="http://example.com/cron">'
        f"{process}</bpmn:definitions>"
    )


def timer(cycle: str) -> str:
    return (
        f"<bpmn:timerEventDefinition><bpmn:timeCycle>{cycle}</bpmn:timeCycle>"
        "</bpmn:timerEventDefinition>"
    )


def flow(flow_id: str, source: str, target: str) -> str:
    return f'<bpmn:sequenceFlow id="{flow_id}" sourceRef="{source}" targetRef="{target}"/>'


def started_by_cron(cycle: str) -> str:
    """A timer start event on `cycle` -> work (user task) -> end."""
    return definitions(
        '<bpmn:process id="ticking" isExecutable="true">'
        f'<bpmn:startEvent id="tick">{timer(cycle)}</bpmn:startEvent>'
        '<bpmn:userTask id="work"/><bpmn:endEvent id="end"/>'
        + flow("f1", "tick", "work")
        + flow("f2", "work", "end")
        + "</bpmn:process>"
    )


def reminded(cycle: str, *, interrupting: bool = False) -> str:
    """start -> review (user task) -> done; a boundary timer on review -> remind (user task)."""
    return definitions(
        '<bpmn:process id="reminded" isExecutable="true">'
        '<bpmn:startEvent id="start"/><bpmn:userTask id="review"/><bpmn:endEvent id="done"/>'
        f'<bpmn:boundaryEvent id="nudge" attachedToRef="review" '
        f'cancelActivity="{str(interrupting).lower()}">{timer(cycle)}</bpmn:boundaryEvent>'
        '<bpmn:userTask id="remind"/><bpmn:endEvent id="reminded_end"/>'
        + flow("f1", "start", "review")
        + flow("f2", "review", "done")
        + flow("f3", "nudge", "remind")
        + flow("f4", "remind", "reminded_end")
        + "</bpmn:process>"
    )


def waiting(cycle: str) -> str:
    """start -> wait (intermediate timer catch on `cycle`) -> end."""
    return definitions(
        '<bpmn:process id="waiting" isExecutable="true">'
        '<bpmn:startEvent id="start"/>'
        f'<bpmn:intermediateCatchEvent id="wait">{timer(cycle)}</bpmn:intermediateCatchEvent>'
        '<bpmn:endEvent id="end"/>'
        + flow("f1", "start", "wait")
        + flow("f2", "wait", "end")
        + "</bpmn:process>"
    )


def gated(cycle: str) -> str:
    """start -> event-based gateway -> (timer on `cycle` -> late) | (message `paid` -> settled)."""
    return definitions(
        '<bpmn:message id="m_paid" name="paid"/>'
        '<bpmn:process id="gated" isExecutable="true">'
        '<bpmn:startEvent id="start"/><bpmn:eventBasedGateway id="gate"/>'
        f'<bpmn:intermediateCatchEvent id="deadline">{timer(cycle)}</bpmn:intermediateCatchEvent>'
        '<bpmn:intermediateCatchEvent id="payment">'
        '<bpmn:messageEventDefinition messageRef="m_paid"/></bpmn:intermediateCatchEvent>'
        '<bpmn:endEvent id="late"/><bpmn:endEvent id="settled"/>'
        + flow("f1", "start", "gate")
        + flow("f2", "gate", "deadline")
        + flow("f3", "gate", "payment")
        + flow("f4", "deadline", "late")
        + flow("f5", "payment", "settled")
        + "</bpmn:process>"
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def engine(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=6) as engine:
        yield engine


def due_times(engine: Engine, instance_id: Any = None) -> list[tuple[str, datetime]]:
    return [(job.node_id, job.due_at) for job in engine.jobs(instance_id)]


def open_tasks(engine: Engine, instance_id: Any = None) -> list[str]:
    return sorted(task.node_id for task in engine.user_tasks(instance_id))


def ended_at(instance: InstanceHandle) -> list[str]:
    return [s.node_id for p in instance.history() for s in p.steps if s.node_type == "endEvent"]


def test_a_cron_start_event_starts_an_instance_at_each_fire_time(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(started_by_cron("0 0/15 * * * ?"))
    assert due_times(engine) == [("tick", utc(2030, 1, 1, 9, 15))]
    executor = JobExecutor(engine)

    clock.set(utc(2030, 1, 1, 9, 14, 59))
    assert executor.run_once() == 0
    assert open_tasks(engine) == []
    clock.set(utc(2030, 1, 1, 9, 15))
    assert executor.run_once() == 1
    assert open_tasks(engine) == ["work"]
    assert due_times(engine) == [("tick", utc(2030, 1, 1, 9, 30))]
    clock.set(utc(2030, 1, 1, 9, 30))
    assert executor.run_once() == 1
    assert executor.run_once() == 0
    assert open_tasks(engine) == ["work", "work"]
    assert due_times(engine) == [("tick", utc(2030, 1, 1, 9, 45))]

    # No executor ran for 82 minutes: one start, then the next fire time after now (Camunda
    # computes a cron cycle's next due date from the current time).
    clock.set(utc(2030, 1, 1, 11, 7))
    assert executor.run_once() == 1
    assert executor.run_once() == 0
    assert open_tasks(engine) == ["work"] * 3
    assert due_times(engine) == [("tick", utc(2030, 1, 1, 11, 15))]


def test_a_cron_start_event_whose_years_are_over_is_refused(engine: Engine) -> None:
    with pytest.raises(InterlockError) as caught:
        engine.deploy(started_by_cron("0 15 10 * * ? 2005"))
    assert "timer of 'tick'" in str(caught.value)
    assert "'0 15 10 * * ? 2005' has no fire time after 2030-01-01T09:00:00+00:00" in str(
        caught.value
    )
    assert engine.definitions("ticking") == []


def test_a_non_interrupting_cron_boundary_fires_while_its_activity_waits(
    engine: Engine, clock: ManualClock
) -> None:
    engine.deploy(reminded("0 0/10 * * * ?"))
    instance = engine.start_latest("reminded")
    assert due_times(engine, instance.id) == [("nudge", utc(2030, 1, 1, 9, 10))]
    executor = JobExecutor(engine)
    for firing in range(1, 4):
        clock.set(utc(2030, 1, 1, 9, 10 * firing))
        assert executor.run_once() == 1
        assert executor.run_once() == 0
        assert open_tasks(engine, instance.id) == ["remind"] * firing + ["review"]
        assert due_times(engine, instance.id) == [("nudge", utc(2030, 1, 1, 9, 10 * firing + 10))]
    [review] = [t for t in instance.user_tasks() if t.node_id == "review"]
    engine.complete_task(review.id, {})
    # The activity is done: its cycle is retired.
    assert due_times(engine, instance.id) == []
    clock.set(utc(2030, 1, 1, 10, 0))
    assert executor.run_once() == 0
    assert open_tasks(engine, instance.id) == ["remind"] * 3


def test_an_interrupting_cron_boundary_fires_once(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(reminded("0 0 17 ? * MON-FRI", interrupting=True))
    instance = engine.start_latest("reminded")
    assert due_times(engine, instance.id) == [("nudge", utc(2030, 1, 1, 17, 0))]
    executor = JobExecutor(engine)
    clock.set(utc(2030, 1, 1, 17, 0))
    assert executor.run_once() == 1
    assert open_tasks(engine, instance.id) == ["remind"]
    assert due_times(engine, instance.id) == []


def test_an_intermediate_cron_timer_waits_for_its_next_fire_time(
    engine: Engine, clock: ManualClock
) -> None:
    # The last Friday of January 2030 is the 25th.
    engine.deploy(waiting("0 30 8 ? * 6L"))
    instance = engine.start_latest("waiting")
    assert due_times(engine, instance.id) == [("wait", utc(2030, 1, 25, 8, 30))]
    executor = JobExecutor(engine)
    clock.set(utc(2030, 1, 25, 8, 29, 59))
    assert executor.run_once() == 0
    assert instance.info().state == InstanceState.ACTIVE
    clock.set(utc(2030, 1, 25, 8, 30))
    assert executor.run_once() == 1
    assert instance.info().state == InstanceState.COMPLETED
    assert due_times(engine, instance.id) == []


def test_a_cron_timer_after_an_event_based_gateway(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(gated("0 30 9 * * ?"))
    late = engine.start_latest("gated", business_key="late")
    paid = engine.start_latest("gated", business_key="paid")
    assert due_times(engine, late.id) == [("deadline", utc(2030, 1, 1, 9, 30))]
    executor = JobExecutor(engine)

    clock.set(utc(2030, 1, 1, 9, 20))
    engine.correlate_message("paid", business_key="paid")
    assert paid.info().state == InstanceState.COMPLETED
    assert ended_at(paid) == ["settled"]
    assert due_times(engine, paid.id) == []  # the timer lost, and went with the wait

    clock.set(utc(2030, 1, 1, 9, 30))
    assert executor.run_once() == 1
    assert late.info().state == InstanceState.COMPLETED
    assert ended_at(late) == ["late"]
    with pytest.raises(InterlockError):
        engine.correlate_message("paid", business_key="late")


def test_a_cycle_expression_may_give_a_cron_expression(engine: Engine, clock: ManualClock) -> None:
    engine.deploy(waiting("${schedule}"))
    instance = engine.start_latest("waiting", {"schedule": "0 0 10 L * ?"})
    assert due_times(engine, instance.id) == [("wait", utc(2030, 1, 31, 10, 0))]
    clock.set(utc(2030, 1, 31, 10, 0))
    assert JobExecutor(engine).run_once() == 1
    assert instance.info().state == InstanceState.COMPLETED
    # An expression that gives a bad cron expression: the start fails, naming the timer and the
    # reason.
    with pytest.raises(ExpressionError) as caught:
        engine.start_latest("waiting", {"schedule": "0 0 10 L * MON"})
    assert "timer of 'wait'" in str(caught.value)
    assert "day-of-month and day-of-week cannot both be specified" in str(caught.value)


def test_cron_fire_times_are_read_in_the_engines_time_zone(
    database_url: str, clock: ManualClock
) -> None:
    settings = EngineSettings(timezone="America/New_York")
    with Engine(database_url, migrate=False, clock=clock, settings=settings, pool_size=4) as ny:
        ny.deploy(waiting("0 0 9 * * ?"), started_by_cron("0 0 9 ? * MON-FRI"))
        instance = ny.start_latest("waiting")
        # 09:00 UTC is 04:00 in New York (EST, UTC-5): the next 09:00 there is 14:00 UTC.
        assert due_times(ny, instance.id) == [("wait", utc(2030, 1, 1, 14, 0))]
        [start_job] = [job for job in ny.jobs() if job.node_id == "tick"]
        assert start_job.due_at == utc(2030, 1, 1, 14, 0)
        executor = JobExecutor(ny)
        clock.set(utc(2030, 1, 1, 14, 0))
        assert executor.run_once() == 2
        assert instance.info().state == InstanceState.COMPLETED
        # The start event goes on to Wednesday 09:00 in New York.
        assert due_times(ny) == [("tick", utc(2030, 1, 2, 14, 0))]


def test_the_time_zone_setting_comes_from_interlock_timezone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("INTERLOCK_TIMEZONE", "Asia/Tokyo")
    settings = EngineSettings()
    assert settings.timezone == "Asia/Tokyo"
    assert settings.timer_limits.zone == "Asia/Tokyo"
    monkeypatch.setenv("INTERLOCK_TIMEZONE", "Mars/Olympus_Mons")
    with pytest.raises(ValueError, match="INTERLOCK_TIMEZONE: 'Mars/Olympus_Mons' is not an IANA"):
        EngineSettings()
    monkeypatch.delenv("INTERLOCK_TIMEZONE")
    assert EngineSettings().timezone == "UTC"
    with pytest.raises(ValueError, match="'Nowhere' is not an IANA time zone"):
        EngineSettings(timezone="Nowhere")


@pytest.mark.parametrize(
    ("cycle", "reason"),
    [
        ("0 0 9 * * MON", "day-of-month and day-of-week cannot both be specified"),
        ("0 0 25 * * ?", "hours: 25 is out of range 0-23"),
        ("0 0 9 ? * 6#7", "day-of-week: the week of '6#7' is out of range 1-5"),
    ],
)
def test_an_invalid_cron_cycle_is_refused_at_deployment_naming_element_and_field(
    database_url: str, cycle: str, reason: str
) -> None:
    with (
        live_server(database_url, run_jobs=False) as server,
        httpx.Client(
            base_url=f"{server.url}/engine-rest", auth=("admin", PASSWORD), timeout=30
        ) as client,
    ):
        files = [("data", ("reminded.bpmn", reminded(cycle).encode(), "application/xml"))]
        response = client.post("/deployment/create", data={"deployment-name": "cron"}, files=files)
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["type"] == "ParseException"
        assert "nudge" in body["message"]
        assert f"timeCycle: '{cycle}' is not a valid cron expression" in body["message"]
        assert reason in body["message"]
        assert client.get("/process-definition", params={"key": "reminded"}).json() == []


@pytest.fixture
def real_engine(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=6) as engine:
        yield engine


def test_an_every_second_cron_cycle_fires_on_the_real_clock(real_engine: Engine) -> None:
    """A non-interrupting boundary on `* * * * * ?` nudges a waiting review once a second, each
    time on a whole second, through a started job executor."""
    real_engine.deploy(reminded("* * * * * ?"))
    executor = JobExecutor(real_engine, poll_interval=30.0)
    executor.start()
    try:
        instance = real_engine.start_latest("reminded")
        [(_, first_due)] = due_times(real_engine, instance.id)
        wait_until(
            lambda: open_tasks(real_engine, instance.id).count("remind") >= 2,
            "two reminders from the every-second cycle",
            timeout=15,
        )
    finally:
        executor.stop()
    assert first_due.microsecond == 0  # a cron cycle is due on whole seconds
    steps = [step for track in instance.history() for step in track.steps]
    fired = sorted(step.started_at for step in steps if step.node_id == "nudge")
    assert len(fired) >= 2
    # Not before its due time, and the second a second later at least.
    assert fired[0] >= first_due
    assert (fired[1] - fired[0]).total_seconds() >= 0.9
    [review] = [t for t in instance.user_tasks() if t.node_id == "review"]
    real_engine.complete_task(review.id, {})
    assert due_times(real_engine, instance.id) == []
