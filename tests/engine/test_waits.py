"""Waiting for people, workers, time, messages and signals; boundary events; errors; incidents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.core.settings import EngineSettings
from engine.errors import Conflict, InvariantViolation, InvariantViolationKind, NotFound
from engine.model import TimerDefinition
from engine.states import InstanceState, TokenView
from tests.engine.clock import ManualClock
from tests.engine.test_transactions import snapshot


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as engine:
        yield engine


def fire_due_jobs(engine: Engine) -> int:
    """What one executor pass does: acquire the due jobs and run each."""
    acquired = engine.run(AcquireJobs("test", 100, 60)).job_ids
    for job_id in acquired:
        engine.run(ExecuteJob(UUID(job_id), "test"))
    return len(acquired)


def positions(instance: InstanceHandle) -> list[tuple[str, TokenView]]:
    return sorted((t.node_id, t.state) for t in instance.tokens())


def review_with_boundaries(*, interrupting: bool, timer: TimerDefinition) -> ProcessBuilder:
    return (
        ProcessBuilder("review")
        .start_event("start")
        .user_task("review", "Review", assignee="${owner}", candidate_groups="sales, ops")
        .end_event("done")
        .boundary_event("late", "review", cancel_activity=interrupting, timer=timer)
        .end_event("escalated")
        .chain("start", "review", "done")
        .chain("late", "escalated")
    )


def test_user_task_assignment_claim_and_queries(engine: Engine) -> None:
    engine.deploy(
        review_with_boundaries(
            interrupting=True, timer=TimerDefinition(kind="duration", text="P1D")
        ).build()
    )
    instance = engine.start_latest("review", {"owner": "ada"})
    [task] = instance.user_tasks()
    assert (task.assignee, task.candidate_groups) == ("ada", ["sales", "ops"])
    assert [t.id for t in engine.user_tasks(assignee="ada")] == [task.id]
    assert [t.id for t in engine.user_tasks(candidate_group="ops", definition_key="review")] == [
        task.id
    ]
    assert engine.user_tasks(candidate_group="finance") == []
    with pytest.raises(Conflict, match="claimed by 'ada'"):
        engine.claim_task(task.id, "bob")
    engine.unclaim_task(task.id)
    engine.claim_task(task.id, "bob")
    assert engine.user_tasks(instance.id)[0].assignee == "bob"


def test_interrupting_timer_retires_the_task(
    timed: Engine, clock: ManualClock, database_url: str
) -> None:
    timed.deploy(
        review_with_boundaries(
            interrupting=True, timer=TimerDefinition(kind="duration", text="PT1H")
        ).build()
    )
    instance = timed.start_latest("review", {"owner": "ada"})
    [task] = instance.user_tasks()
    clock.advance(minutes=59)
    assert fire_due_jobs(timed) == 0
    clock.advance(minutes=2)
    assert fire_due_jobs(timed) == 1
    assert instance.state is InstanceState.COMPLETED
    assert [s.node_id for p in instance.history() for s in p.steps][-2:] == ["late", "escalated"]
    before = snapshot(database_url)
    with pytest.raises(Conflict, match="retired"):
        timed.complete_task(task.id)
    assert snapshot(database_url) == before


def test_non_interrupting_cycle_fires_its_repetitions(timed: Engine, clock: ManualClock) -> None:
    timed.deploy(
        review_with_boundaries(
            interrupting=False, timer=TimerDefinition(kind="cycle", text="R3/PT1M")
        ).build()
    )
    instance = timed.start_latest("review", {"owner": "ada"})
    fired = 0
    for _ in range(6):
        clock.advance(minutes=1, seconds=1)
        fired += fire_due_jobs(timed)
    assert fired == 3
    visits = [s for p in instance.history() for s in p.steps if s.node_id == "escalated"]
    assert len(visits) == 3
    assert positions(instance) == [("review", TokenView.WAIT_FOR_EVENT)]
    assert timed.jobs(instance.id) == []
    timed.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED


def test_timer_catch_event_waits_for_its_due_time(timed: Engine, clock: ManualClock) -> None:
    model = (
        ProcessBuilder("wait")
        .start_event("start")
        .intermediate_catch_event("pause", timer=TimerDefinition(kind="duration", text="${delay}"))
        .end_event("end")
        .chain("start", "pause", "end")
        .build()
    )
    timed.deploy(model)
    instance = timed.start_latest("wait", {"delay": "PT10M"})
    [job] = timed.jobs(instance.id)
    assert job.due_at == clock.now.replace(minute=10)
    clock.advance(minutes=9)
    assert fire_due_jobs(timed) == 0 and instance.state is InstanceState.ACTIVE
    clock.advance(minutes=1)
    assert fire_due_jobs(timed) == 1 and instance.info().state == InstanceState.COMPLETED


def claims_subprocess(settings: EngineSettings | None = None) -> ProcessBuilder:
    """A subprocess with an external task and an error end; a boundary error on the subprocess."""
    return (
        ProcessBuilder("claims")
        .start_event("start")
        .sub_process("handle", "Handle claim")
        .start_event("sub_start", parent="handle")
        .service_task("assess", topic="assess", parent="handle")
        .exclusive_gateway("valid", parent="handle", default="ok")
        .end_event("sub_end", parent="handle")
        .end_event("invalid", parent="handle", error=True, error_code="INVALID")
        .chain("sub_start", "assess", "valid")
        .flow("valid", "sub_end", id="ok")
        .flow("valid", "invalid", condition="${score < 0}")
        .boundary_event("rejected", "handle", error=True, error_code="INVALID")
        .end_event("paid")
        .end_event("refused")
        .chain("start", "handle", "paid")
        .chain("rejected", "refused")
    )


def test_error_end_event_is_caught_by_the_subprocess_boundary(engine: Engine) -> None:
    engine.deploy(claims_subprocess().build())
    instance = engine.start_latest("claims")
    [task] = engine.fetch_and_lock("w1", {"assess": 10_000})
    engine.complete_external_task(task["id"], "w1", {"score": -1})
    assert instance.state is InstanceState.COMPLETED
    nodes = [s.node_id for p in instance.history() for s in p.steps]
    assert "refused" in nodes and "paid" not in nodes


def test_bpmn_error_from_a_worker_is_caught_by_the_subprocess_boundary(engine: Engine) -> None:
    engine.deploy(claims_subprocess().build())
    instance = engine.start_latest("claims")
    [task] = engine.fetch_and_lock("w1", {"assess": 10_000})
    engine.external_task_bpmn_error(task["id"], "w1", "INVALID", "no policy")
    assert instance.state is InstanceState.COMPLETED
    assert "refused" in [s.node_id for p in instance.history() for s in p.steps]
    with pytest.raises(Conflict, match="already completed"):
        engine.complete_external_task(task["id"], "w1")


@pytest.mark.parametrize("mode", ["end", "incident"])
def test_uncaught_bpmn_error(database_url: str, mode: Literal["end", "incident"]) -> None:
    settings = EngineSettings(unhandled_bpmn_error=mode)
    with Engine(database_url, migrate=False, settings=settings) as engine:
        engine.deploy(claims_subprocess().build())
        instance = engine.start_latest("claims")
        [task] = engine.fetch_and_lock("w1", {"assess": 10_000})
        engine.external_task_bpmn_error(task["id"], "w1", "UNKNOWN", "nobody catches this")
        if mode == "end":
            assert instance.state is InstanceState.COMPLETED
            assert engine.incidents() == []
        else:
            assert instance.state is InstanceState.ACTIVE
            [incident] = engine.incidents(instance_id=instance.id)
            assert incident.type == "unhandledBpmnError" and "UNKNOWN" in incident.message
            engine.retry_incident(incident.id)
            [again] = engine.fetch_and_lock("w2", {"assess": 10_000})
            engine.complete_external_task(again["id"], "w2", {"score": 5})
            assert instance.info().state == InstanceState.COMPLETED


def test_error_event_subprocess_catches_errors_in_its_scope(engine: Engine) -> None:
    model = (
        ProcessBuilder("with-handler")
        .start_event("start")
        .service_task("work", topic="work")
        .end_event("end")
        .chain("start", "work", "end")
        .sub_process("on_error", triggered_by_event=True)
        .start_event("caught", parent="on_error", error=True, error_code="BROKEN")
        .user_task("clean_up", parent="on_error")
        .end_event("handled", parent="on_error")
        .chain("caught", "clean_up", "handled")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("with-handler")
    [task] = engine.fetch_and_lock("w", {"work": 1000})
    engine.external_task_bpmn_error(task["id"], "w", "BROKEN")
    assert positions(instance) == [
        ("clean_up", TokenView.WAIT_FOR_EVENT),
        ("on_error", TokenView.WAIT_FOR_EVENT),
    ]
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED


def order_with_message() -> ProcessBuilder:
    return (
        ProcessBuilder("order")
        .start_event("start")
        .receive_task("await_payment", message="PaymentReceived")
        .end_event("end")
        .chain("start", "await_payment", "end")
    )


def test_message_correlation_by_business_key_and_keys(engine: Engine) -> None:
    engine.deploy(order_with_message().build())
    first = engine.start_latest("order", {"orderId": 1}, business_key="A-1")
    second = engine.start_latest("order", {"orderId": 2}, business_key="A-2")
    with pytest.raises(Conflict, match="matches 2"):
        engine.correlate_message("PaymentReceived")
    engine.correlate_message("PaymentReceived", business_key="A-2", variables={"paid": True})
    assert second.state is InstanceState.COMPLETED and second.variables()["paid"] is True
    assert first.state is InstanceState.ACTIVE
    with pytest.raises(NotFound, match="orderId=9"):
        engine.correlate_message("PaymentReceived", correlation_keys={"orderId": 9})
    engine.correlate_message("PaymentReceived", correlation_keys={"orderId": 1})
    assert first.info().state == InstanceState.COMPLETED
    with pytest.raises(NotFound, match="matches no waiting instance"):
        engine.correlate_message("PaymentReceived")


def test_message_start_event_and_interrupting_message_boundary(engine: Engine) -> None:
    model = (
        ProcessBuilder("returns")
        .start_event("start", message="ReturnRequested")
        .user_task("inspect")
        .boundary_event("cancelled", "inspect", message="ReturnCancelled")
        .end_event("end")
        .end_event("stopped")
        .chain("start", "inspect", "end")
        .chain("cancelled", "stopped")
        .build()
    )
    engine.deploy(model)
    started = engine.correlate_message(
        "ReturnRequested", business_key="R-7", variables={"item": "lamp"}
    )
    [delivery] = started.deliveries
    assert delivery["kind"] == "start"
    instance = engine.instance(delivery["instance_id"])
    assert instance.info().business_key == "R-7" and instance.variables() == {"item": "lamp"}
    [task] = instance.user_tasks()
    engine.correlate_message("ReturnCancelled", business_key="R-7")
    assert instance.state is InstanceState.COMPLETED
    assert engine.user_tasks(instance.id, state="Retired")[0].id == task.id


def test_signal_reaches_every_waiting_instance_and_signal_starts(engine: Engine) -> None:
    waiting = (
        ProcessBuilder("waiting")
        .start_event("start")
        .intermediate_catch_event("go", signal="Go")
        .end_event("end")
        .chain("start", "go", "end")
        .build()
    )
    started_by_signal = (
        ProcessBuilder("on-go")
        .start_event("start", signal="Go")
        .end_event("end")
        .chain("start", "end")
        .build()
    )
    engine.deploy(waiting, started_by_signal)
    instances = [engine.start_latest("waiting") for _ in range(5)]
    result = engine.signal("Go", {"went": True})
    assert sorted(d["kind"] for d in result.deliveries) == ["instance"] * 5 + ["start"]
    assert all(i.state is InstanceState.COMPLETED and i.variables()["went"] for i in instances)
    assert engine.instance_counts() == {"Completed": 6}


def test_incident_on_one_branch_leaves_the_other_running(engine: Engine) -> None:
    model = (
        ProcessBuilder("split")
        .start_event("start")
        .parallel_gateway("fork")
        .service_task("charge", topic="charge")
        .user_task("pack")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "fork")
        .chain("fork", "charge", "join")
        .chain("fork", "pack", "join")
        .chain("join", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("split")
    [task] = engine.fetch_and_lock("w", {"charge": 1000})
    engine.fail_external_task(task["id"], "w", "card declined", retries=0)
    [incident] = engine.incidents(instance_id=instance.id)
    assert (incident.type, incident.node_id, incident.message) == (
        "failedExternalTask",
        "charge",
        "card declined",
    )
    assert ("charge", TokenView.FAILED) in positions(instance)
    assert engine.fetch_and_lock("w", {"charge": 1000}) == []
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.ACTIVE
    engine.retry_incident(incident.id)
    assert engine.incidents(instance_id=instance.id) == []
    [again] = engine.fetch_and_lock("w", {"charge": 1000})
    engine.complete_external_task(again["id"], "w")
    assert instance.info().state == InstanceState.COMPLETED


def test_lease_conflict_and_retired_reports_change_nothing(
    engine: Engine, database_url: str
) -> None:
    engine.deploy(claims_subprocess().build())
    instance = engine.start_latest("claims")
    [task] = engine.fetch_and_lock("owner", {"assess": 10_000})
    before = snapshot(database_url)
    with pytest.raises(InvariantViolation) as caught:
        engine.complete_external_task(task["id"], "intruder")
    assert caught.value.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
    assert snapshot(database_url) == before
    instance.cancel()
    before = snapshot(database_url)
    with pytest.raises(Conflict, match="retired"):
        engine.complete_external_task(task["id"], "owner")
    assert snapshot(database_url) == before


def test_resuming_wakes_the_job_executor(engine: Engine) -> None:
    from engine.loops.jobs import JobExecutor

    model = (
        ProcessBuilder("pause")
        .start_event("start")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT0.2S"))
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("pause")
    instance.suspend()
    executor = JobExecutor(engine, poll_interval=60)
    executor.start()
    try:
        # Due while suspended: the executor skips it and, idle, sleeps for its whole poll.
        assert instance.wait_completion(timeout=0.8) is InstanceState.SUSPENDED
        instance.resume()
        assert instance.wait_completion(timeout=5) is InstanceState.COMPLETED
    finally:
        executor.stop()
