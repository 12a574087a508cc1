"""The event-based gateway: the token waits at the gateway for every catch event after it; the
first event to occur wins, and every other subscription and timer of that wait is retired in the
same transaction, so a late trigger finds nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.errors import NotFound
from engine.loops.jobs import JobExecutor
from engine.model import EventBasedGateway, ProcessModel, TimerDefinition
from engine.states import InstanceState, JobOutcome, TokenView
from tests.engine.clock import ManualClock

DATA = Path(__file__).parent.parent / "data" / "bpmn"
PAYMENT_WAIT = DATA / "payment_wait.bpmn"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=12) as engine:
        yield engine


def waits(engine: Engine, instance_id: UUID) -> dict[str, list[tuple[str, ...]]]:
    """What the instance waits for, read from the tables: its timer jobs (node) and its event
    subscriptions (kind, name, node)."""
    with engine.connection() as conn:
        jobs = conn.execute(
            "SELECT node_id FROM job WHERE instance_id = %s ORDER BY node_id", (instance_id,)
        ).fetchall()
        subscriptions = conn.execute(
            "SELECT kind, name, node_id FROM event_subscription WHERE instance_id = %s "
            "ORDER BY kind, node_id",
            (instance_id,),
        ).fetchall()
    return {
        "jobs": [tuple(row) for row in jobs],
        "subscriptions": [tuple(row) for row in subscriptions],
    }


def subscription_ids(engine: Engine, instance_id: UUID) -> set[UUID]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM event_subscription WHERE instance_id = %s", (instance_id,)
        ).fetchall()
    return {row[0] for row in rows}


WAITING_AT_GATEWAY: dict[str, list[tuple[str, ...]]] = {
    "jobs": [("Event_Timeout",)],
    "subscriptions": [
        ("message", "payment", "Event_Payment"),
        ("signal", "cancel", "Event_Cancel"),
    ],
}
NOTHING: dict[str, list[tuple[str, ...]]] = {"jobs": [], "subscriptions": []}


def fire_due_jobs(engine: Engine) -> int:
    acquired = engine.run(AcquireJobs("test", 100, 60)).job_ids
    for job_id in acquired:
        engine.run(ExecuteJob(UUID(job_id), "test"))
    return len(acquired)


def positions(instance: InstanceHandle) -> list[tuple[str, TokenView]]:
    return sorted((t.node_id, t.state) for t in instance.tokens())


def steps(instance: InstanceHandle) -> list[tuple[str, str, str]]:
    """Every visit: (node, node type, state), track by track, each in the order recorded."""
    return [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]


def start_waiting(engine: Engine, key: str = "A-1") -> InstanceHandle:
    engine.deploy(PAYMENT_WAIT)
    instance = engine.start_latest("payment-wait", {"timeout": "PT1H"}, business_key=key)
    assert positions(instance) == [("Gateway_Wait", TokenView.WAIT_FOR_EVENT)]
    assert waits(engine, instance.id) == WAITING_AT_GATEWAY
    return instance


def test_the_modeler_file_parses_to_an_event_based_gateway(engine: Engine) -> None:
    [definition] = engine.deploy(PAYMENT_WAIT).definitions
    model = engine.model(definition["id"], definition["key"])
    gateway = model.node("Gateway_Wait")
    assert isinstance(gateway, EventBasedGateway) and gateway.kind.value == "eventBasedGateway"
    assert gateway.outgoing == ("Flow_ToPayment", "Flow_ToTimeout", "Flow_ToCancel")
    assert [model.follows_event_gateway(n) for n in ("Event_Payment", "Event_Shipped")] == [
        True,
        False,
    ]


def test_message_wins_and_the_timer_and_signal_are_retired(engine: Engine) -> None:
    instance = start_waiting(engine)
    [job] = engine.jobs(instance.id)
    result = engine.correlate_message("payment", business_key="A-1", variables={"paid": 42})
    assert [d["instance_id"] for d in result.deliveries] == [str(instance.id)]
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"timeout": "PT1H", "paid": 42}
    assert waits(engine, instance.id) == NOTHING
    assert steps(instance) == [
        ("StartEvent_Order", "startEvent", "Completed"),
        ("Gateway_Wait", "eventBasedGateway", "Completed"),
        ("Event_Payment", "intermediateCatchEvent", "Completed"),
        ("Event_Shipped", "endEvent", "Completed"),
    ]
    # Late triggers find nothing: the message matches no waiting instance, the signal reaches
    # no one, the retired timer job is gone.
    with pytest.raises(NotFound, match="matches no waiting instance"):
        engine.correlate_message("payment", business_key="A-1")
    assert engine.signal("cancel").deliveries == []
    assert engine.run(ExecuteJob(job.id)).outcome == JobOutcome.GONE
    assert [s[0] for s in steps(instance)].count("Event_Payment") == 1


def test_timer_wins_and_the_message_and_signal_are_retired(
    timed: Engine, clock: ManualClock
) -> None:
    instance = start_waiting(timed)
    clock.advance(minutes=59)
    assert fire_due_jobs(timed) == 0
    assert waits(timed, instance.id) == WAITING_AT_GATEWAY
    clock.advance(minutes=1)
    assert fire_due_jobs(timed) == 1
    assert instance.state is InstanceState.COMPLETED
    assert waits(timed, instance.id) == NOTHING
    assert [s[0] for s in steps(instance)] == [
        "StartEvent_Order",
        "Gateway_Wait",
        "Event_Timeout",
        "Event_Reminded",
    ]
    with pytest.raises(NotFound, match="matches no waiting instance"):
        timed.correlate_message("payment", business_key="A-1")
    assert timed.signal("cancel").deliveries == []


def test_signal_wins_and_the_message_and_timer_are_retired(engine: Engine) -> None:
    instance = start_waiting(engine)
    other = engine.start_latest("payment-wait", {"timeout": "PT2H"}, business_key="A-2")
    result = engine.signal("cancel", {"reason": "customer"})
    assert sorted(d["instance_id"] for d in result.deliveries) == sorted(
        [str(instance.id), str(other.id)]
    )
    for handle in (instance, other):
        assert handle.state is InstanceState.COMPLETED
        assert waits(engine, handle.id) == NOTHING
        assert [s[0] for s in steps(handle)][-2:] == ["Event_Cancel", "Event_Closed"]
        assert handle.variables()["reason"] == "customer"
    with pytest.raises(NotFound, match="matches no waiting instance"):
        engine.correlate_message("payment")


def test_cancelling_the_instance_retires_every_wait_of_the_gateway(engine: Engine) -> None:
    instance = start_waiting(engine)
    assert instance.cancel() is InstanceState.TERMINATED
    assert waits(engine, instance.id) == NOTHING
    with pytest.raises(NotFound):
        engine.correlate_message("payment", business_key="A-1")
    [gateway] = [s for s in steps(instance) if s[0] == "Gateway_Wait"]
    assert gateway == ("Gateway_Wait", "eventBasedGateway", "Terminated")


def test_a_terminate_end_event_on_another_branch_retires_every_wait(engine: Engine) -> None:
    model = (
        ProcessBuilder("terminate-wait")
        .start_event("start")
        .parallel_gateway("fork")
        .event_based_gateway("wait")
        .intermediate_catch_event("answer", message="answer")
        .intermediate_catch_event("later", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("answered")
        .user_task("decide")
        .end_event("stop", terminate=True)
        .chain("start", "fork", "wait", "answer", "answered")
        .chain("wait", "later", "answered")
        .chain("fork", "decide", "stop")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("terminate-wait")
    assert waits(engine, instance.id) == {
        "jobs": [("later",)],
        "subscriptions": [("message", "answer", "answer")],
    }
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    assert waits(engine, instance.id) == NOTHING
    with pytest.raises(NotFound):
        engine.correlate_message("answer")
    assert ("wait", "eventBasedGateway", "Terminated") in steps(instance)


def build_guarded() -> ProcessModel:
    """An event-based gateway inside a subprocess with an interrupting message boundary event."""
    return (
        ProcessBuilder("guarded-wait")
        .start_event("start")
        .sub_process("scope")
        .start_event("inner_start", parent="scope")
        .event_based_gateway("wait", parent="scope")
        .intermediate_catch_event("answer", parent="scope", message="answer")
        .intermediate_catch_event(
            "later", parent="scope", timer=TimerDefinition(kind="duration", text="PT1H")
        )
        .end_event("inner_end", parent="scope")
        .end_event("inner_late", parent="scope")
        .chain("inner_start", "wait", "answer", "inner_end")
        .chain("wait", "later", "inner_late")
        .boundary_event("abort", "scope", message="abort")
        .end_event("aborted")
        .end_event("end")
        .chain("start", "scope", "end")
        .chain("abort", "aborted")
        .build()
    )


def test_an_interrupting_boundary_event_on_the_enclosing_scope_retires_every_wait(
    engine: Engine,
) -> None:
    engine.deploy(build_guarded())
    instance = engine.start_latest("guarded-wait")
    assert waits(engine, instance.id) == {
        "jobs": [("later",)],
        "subscriptions": [("message", "abort", "abort"), ("message", "answer", "answer")],
    }
    engine.correlate_message("abort")
    assert instance.state is InstanceState.COMPLETED
    assert waits(engine, instance.id) == NOTHING
    with pytest.raises(NotFound):
        engine.correlate_message("answer")
    assert [s[0] for s in steps(instance)][-2:] == ["abort", "aborted"]


def build_reminder_loop() -> ProcessModel:
    """Wait for an answer; every hour without one, remind and wait again."""
    return (
        ProcessBuilder("reminder-loop")
        .start_event("start")
        .exclusive_gateway("again")
        .event_based_gateway("wait", "Answer or remind?")
        .intermediate_catch_event("answer", message="answer")
        .intermediate_catch_event("hour", timer=TimerDefinition(kind="duration", text="PT1H"))
        .intermediate_catch_event("stop", signal="stop")
        .task("remind")
        .end_event("answered")
        .end_event("stopped")
        .chain("start", "again", "wait", "answer", "answered")
        .chain("wait", "hour", "remind", "again")
        .chain("wait", "stop", "stopped")
        .build()
    )


def test_a_gateway_in_a_loop_waits_afresh_each_time_it_is_entered(
    timed: Engine, clock: ManualClock
) -> None:
    timed.deploy(build_reminder_loop())
    instance = timed.start_latest("reminder-loop")
    seen: list[set[UUID]] = []
    expected = {
        "jobs": [("hour",)],
        "subscriptions": [("message", "answer", "answer"), ("signal", "stop", "stop")],
    }
    for _ in range(3):
        assert waits(timed, instance.id) == expected
        seen.append(subscription_ids(timed, instance.id))
        clock.advance(hours=1)
        assert fire_due_jobs(timed) == 1
    assert waits(timed, instance.id) == expected
    seen.append(subscription_ids(timed, instance.id))
    # Fresh subscriptions on every entry, none left over from an earlier round.
    assert all(len(ids) == 2 for ids in seen) and len(set().union(*seen)) == 8
    assert positions(instance) == [("wait", TokenView.WAIT_FOR_EVENT)]
    timed.correlate_message("answer")
    assert instance.state is InstanceState.COMPLETED
    assert waits(timed, instance.id) == NOTHING
    visited = [s[0] for s in steps(instance)]
    assert visited.count("wait") == 4 and visited.count("remind") == 3
    assert visited.count("hour") == 3 and visited[-2:] == ["answer", "answered"]


def build_inclusive_after_gateway() -> ProcessModel:
    """split -> pack -> join, and split -> wait: a confirmation goes on to the join, an expiry
    ends its branch; join -> ship."""
    return (
        ProcessBuilder("pack-and-confirm")
        .start_event("start")
        .inclusive_gateway("split")
        .user_task("pack")
        .event_based_gateway("wait")
        .intermediate_catch_event("confirmed", message="confirm")
        .intermediate_catch_event("expired", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("given_up")
        .inclusive_gateway("join")
        .user_task("ship")
        .end_event("end")
        .chain("start", "split", "pack", "join")
        .chain("split", "wait", "confirmed", "join")
        .chain("wait", "expired", "given_up")
        .chain("join", "ship", "end")
        .build()
    )


@pytest.mark.parametrize(
    "order",
    [
        ("pack", "message"),
        ("message", "pack"),
        ("pack", "timer"),
        ("timer", "pack"),
    ],
)
def test_an_inclusive_join_after_the_gateway_neither_fires_early_nor_waits_forever(
    timed: Engine, clock: ManualClock, order: tuple[str, str]
) -> None:
    timed.deploy(build_inclusive_after_gateway())
    instance = timed.start_latest("pack-and-confirm")
    assert positions(instance) == [
        ("pack", TokenView.WAIT_FOR_EVENT),
        ("wait", TokenView.WAIT_FOR_EVENT),
    ]
    for i, step in enumerate(order):
        if step == "pack":
            [task] = [t for t in instance.user_tasks() if t.node_id == "pack"]
            timed.complete_task(task.id)
        elif step == "message":
            timed.correlate_message("confirm")
        else:
            clock.advance(hours=1)
            assert fire_due_jobs(timed) == 1
        shipped = [t.node_id for t in instance.user_tasks() if t.node_id == "ship"]
        # The join fires once both branches are settled, not before.
        assert shipped == (["ship"] if i == 1 else []), (order, i)
    assert waits(timed, instance.id) == NOTHING
    arrivals = [s for s in steps(instance) if s[0] == "join"]
    assert len(arrivals) == (2 if "message" in order else 1)
    [ship] = instance.user_tasks()
    timed.complete_task(ship.id)
    assert instance.state is InstanceState.COMPLETED
    assert [s[0] for s in steps(instance)].count("ship") == 1


def test_a_real_short_timer_wins_through_the_job_executor(database_url: str) -> None:
    with Engine(database_url, migrate=False) as engine:
        engine.deploy(PAYMENT_WAIT)
        executor = JobExecutor(engine, poll_interval=30.0)
        executor.start()
        try:
            started = time.monotonic()
            instance = engine.start_latest("payment-wait", {"timeout": "PT0.5S"})
            assert instance.wait_completion(timeout=4) is InstanceState.COMPLETED
            elapsed = time.monotonic() - started
        finally:
            executor.stop()
        assert elapsed >= 0.45
        assert [s[0] for s in steps(instance)][-2:] == ["Event_Timeout", "Event_Reminded"]
        assert waits(engine, instance.id) == NOTHING


def test_a_gateway_after_an_asynchronous_continuation_waits_once_it_runs(engine: Engine) -> None:
    model = (
        ProcessBuilder("async-wait")
        .start_event("start")
        .event_based_gateway("wait", async_before=True)
        .intermediate_catch_event("yes", message="yes")
        .intermediate_catch_event("no", message="no")
        .end_event("accepted")
        .end_event("declined")
        .chain("start", "wait", "yes", "accepted")
        .chain("wait", "no", "declined")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("async-wait")
    [job] = engine.jobs(instance.id)
    assert waits(engine, instance.id) == {"jobs": [("wait",)], "subscriptions": []}
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert waits(engine, instance.id) == {
        "jobs": [],
        "subscriptions": [("message", "no", "no"), ("message", "yes", "yes")],
    }
    engine.correlate_message("no")
    assert instance.state is InstanceState.COMPLETED
    assert [s[0] for s in steps(instance)][-2:] == ["no", "declined"]


def test_an_asynchronous_winning_catch_event_parks_after_the_win(engine: Engine) -> None:
    model = (
        ProcessBuilder("async-winner")
        .start_event("start")
        .event_based_gateway("wait")
        .intermediate_catch_event("yes", message="yes", async_before=True)
        .intermediate_catch_event("no", signal="no")
        .end_event("accepted")
        .end_event("declined")
        .chain("start", "wait", "yes", "accepted")
        .chain("wait", "no", "declined")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("async-winner")
    engine.correlate_message("yes")
    # The win retired the signal; the token waits before the catch event, as asyncBefore says.
    assert positions(instance) == [("yes", TokenView.ALIVE)]
    [job] = engine.jobs(instance.id)
    assert waits(engine, instance.id) == {"jobs": [("yes",)], "subscriptions": []}
    assert engine.signal("no").deliveries == []
    assert engine.execute_job(job.id) == JobOutcome.EXECUTED
    assert instance.state is InstanceState.COMPLETED
    assert [s[0] for s in steps(instance)] == ["start", "wait", "yes", "accepted"]


def test_a_gateway_with_one_event_waits_for_it(engine: Engine) -> None:
    model = (
        ProcessBuilder("single-event")
        .start_event("start")
        .event_based_gateway("wait")
        .intermediate_catch_event("go", signal="go")
        .end_event("end")
        .chain("start", "wait", "go", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("single-event")
    assert waits(engine, instance.id) == {"jobs": [], "subscriptions": [("signal", "go", "go")]}
    assert len(engine.signal("go").deliveries) == 1
    assert instance.state is InstanceState.COMPLETED
    assert [s[0] for s in steps(instance)] == ["start", "wait", "go", "end"]
