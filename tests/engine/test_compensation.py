"""Compensation on real PostgreSQL: compensation boundary events and their isForCompensation
handlers, intermediate and end compensation throw events with and without activityRef, waiting
or not, completed embedded subprocesses (their inner handlers, or their compensation event
subprocess), multi-instance activities, each compensation at most once, handlers as tokens and
history rows in Compensation mode, and the rows that record what can be compensated."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.model import ProcessModel
from engine.states import InstanceState, TokenMode, TokenView


@pytest.fixture
def ran(engine: Engine) -> Iterator[list[str]]:
    """The nodes the `log` handler ran, in order."""
    order: list[str] = []

    def log(context: TaskContext) -> None:
        order.append(context.node_id)

    engine.register_handler("log", log)
    yield order


def compensation_visits(engine: Engine, instance: InstanceHandle) -> list[tuple[str, str]]:
    """(node, state) of the instance's history rows in Compensation mode, in order."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id, state FROM history WHERE instance_id = %s AND mode = %s "
            "ORDER BY started_at, id",
            (instance.id, TokenMode.COMPENSATION.value),
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


def compensable(engine: Engine, instance_id: UUID) -> list[str]:
    """The activities whose completion is recorded as compensable, in order of completion."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id FROM event_subscription WHERE instance_id = %s AND kind = 'compensate' "
            "ORDER BY created_at, id",
            (instance_id,),
        ).fetchall()
    return [row[0] for row in rows]


def booked(
    key: str,
    *,
    activity: str | None = None,
    wait: bool = True,
    end: bool = False,
    second_throw: bool = False,
) -> ProcessModel:
    """start -> book (undo: unbook) -> pay (undo: refund) -> throw [-> throw again] -> [end]."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.service_task("book", handler="log")
    b.service_task("unbook", handler="log")
    b.compensation_boundary("book_done", "book", "unbook")
    b.service_task("pay", handler="log")
    b.service_task("refund", handler="log")
    b.compensation_boundary("pay_done", "pay", "refund")
    b.compensation_throw("undo", activity=activity, wait_for_completion=wait, end=end)
    path = ["start", "book", "pay", "undo"]
    if second_throw:
        b.compensation_throw("undo_again")
        path.append("undo_again")
    if not end:
        b.end_event("end")
        path.append("end")
    b.chain(*path)
    return b.build()


def test_a_throw_compensates_every_completed_activity_in_reverse_order(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(booked("comp-all"))
    instance = engine.start_latest("comp-all")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay", "refund", "unbook"]
    assert compensation_visits(engine, instance) == [
        ("refund", "Completed"),
        ("unbook", "Completed"),
    ]
    tracks = {(path.mode, tuple(s.node_id for s in path.steps)) for path in instance.history()}
    assert tracks == {
        (TokenMode.FORWARD, ("start", "book", "pay", "undo", "end")),
        (TokenMode.COMPENSATION, ("refund",)),
        (TokenMode.COMPENSATION, ("unbook",)),
    }
    # The instance ended: nothing of it is compensable any more.
    assert compensable(engine, instance.id) == []


def test_a_throw_with_activity_ref_compensates_only_that_activity(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(booked("comp-ref", activity="book"))
    instance = engine.start_latest("comp-ref")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay", "unbook"]
    assert compensation_visits(engine, instance) == [("unbook", "Completed")]


def test_a_compensation_end_event_ends_its_token_after_the_handlers(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(booked("comp-end", end=True))
    instance = engine.start_latest("comp-end")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay", "refund", "unbook"]
    steps = [(s.node_id, s.state) for p in instance.history() for s in p.steps]
    assert ("undo", "Completed") in steps


def test_each_activity_is_compensated_at_most_once(engine: Engine, ran: list[str]) -> None:
    engine.deploy(booked("comp-once", second_throw=True))
    instance = engine.start_latest("comp-once")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "pay", "refund", "unbook"]  # the second throw found nothing
    assert len(compensation_visits(engine, instance)) == 2


def waiting_handler(key: str, *, wait: bool) -> ProcessModel:
    """book (undo: the user task `unbook`) -> throw (waiting or not) -> user task `next`."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.service_task("book", handler="log")
    b.user_task("unbook")
    b.compensation_boundary("book_done", "book", "unbook")
    b.compensation_throw("undo", wait_for_completion=wait)
    b.user_task("next")
    b.end_event("end")
    b.chain("start", "book", "undo", "next", "end")
    return b.build()


def test_a_waiting_throw_goes_on_once_its_handlers_have_ended(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(waiting_handler("comp-wait", wait=True))
    instance = engine.start_latest("comp-wait")
    [task] = instance.user_tasks()
    assert task.node_id == "unbook"
    positions = {(t.node_id, t.state, t.mode) for t in instance.tokens()}
    assert positions == {
        ("undo", TokenView.WAIT_FOR_EVENT, TokenMode.FORWARD),
        ("unbook", TokenView.WAIT_FOR_EVENT, TokenMode.COMPENSATION),
    }
    engine.complete_task(task.id)
    assert [t.node_id for t in instance.user_tasks()] == ["next"]
    [position] = instance.tokens()
    assert (position.node_id, position.mode) == ("next", TokenMode.FORWARD)
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED
    assert compensation_visits(engine, instance) == [("unbook", "Completed")]


def test_a_throw_that_does_not_wait_goes_on_at_once(engine: Engine, ran: list[str]) -> None:
    engine.deploy(waiting_handler("comp-nowait", wait=False))
    instance = engine.start_latest("comp-nowait")
    assert sorted(t.node_id for t in instance.user_tasks()) == ["next", "unbook"]
    by_node = {t.node_id: t for t in instance.user_tasks()}
    engine.complete_task(by_node["next"].id)
    assert instance.info().state == InstanceState.ACTIVE  # the handler still runs
    engine.complete_task(by_node["unbook"].id)
    assert instance.state is InstanceState.COMPLETED


def nothing_to_compensate_yet(key: str) -> ProcessModel:
    b = ProcessBuilder(key)
    b.start_event("start")
    b.service_task("book", handler="log")
    b.service_task("unbook", handler="log")
    b.compensation_boundary("book_done", "book", "unbook")
    b.user_task("review")
    b.compensation_throw("undo")
    b.end_event("end")
    b.chain("start", "book", "review", "undo", "end")
    return b.build()


def test_completion_is_recorded_as_a_row_and_cancelling_compensates_nothing(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(nothing_to_compensate_yet("comp-cancel"))
    instance = engine.start_latest("comp-cancel")
    assert compensable(engine, instance.id) == ["book"]
    instance.cancel()
    assert instance.state is InstanceState.TERMINATED
    assert ran == ["book"]  # as in Camunda 7, cancelling runs no compensation
    assert compensation_visits(engine, instance) == []
    assert compensable(engine, instance.id) == []


def subprocess_model(key: str, *, event_subprocess: bool) -> ProcessModel:
    """A subprocess books a hotel then a flight (each compensable), then completes; a throw at
    process level compensates it: through its inner handlers, or its compensation event
    subprocess (which notifies, then compensates the inner activities itself)."""
    b = ProcessBuilder(key)
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    for step in ("hotel", "flight"):
        b.service_task(step, handler="log", parent="trip")
        b.service_task(f"cancel_{step}", handler="log", parent="trip")
        b.compensation_boundary(f"{step}_done", step, f"cancel_{step}")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "flight", "trip_end")
    if event_subprocess:
        b.sub_process("undo_trip", parent="trip", triggered_by_event=True)
        b.compensation_start("undo_start", parent="undo_trip")
        b.service_task("notify", handler="log", parent="undo_trip")
        b.compensation_throw("undo_inner", parent="undo_trip")
        b.end_event("undo_end", parent="undo_trip")
        b.chain("undo_start", "notify", "undo_inner", "undo_end")
    b.user_task("confirm")
    b.compensation_throw("undo", end=True)
    b.chain("start", "trip", "confirm", "undo")
    return b.build()


def test_a_completed_subprocess_is_compensated_through_its_inner_handlers(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(subprocess_model("comp-sub", event_subprocess=False))
    instance = engine.start_latest("comp-sub")
    assert compensable(engine, instance.id) == ["hotel", "flight", "trip"]
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["hotel", "flight", "cancel_flight", "cancel_hotel"]
    assert compensation_visits(engine, instance) == [
        ("cancel_flight", "Completed"),
        ("cancel_hotel", "Completed"),
    ]


def test_a_compensation_event_subprocess_replaces_the_inner_handlers(
    engine: Engine, ran: list[str]
) -> None:
    engine.deploy(subprocess_model("comp-esp", event_subprocess=True))
    instance = engine.start_latest("comp-esp")
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["hotel", "flight", "notify", "cancel_flight", "cancel_hotel"]
    visited = [node for node, _ in compensation_visits(engine, instance)]
    assert visited[:4] == ["trip", "undo_trip", "undo_start", "notify"]
    assert visited.count("cancel_flight") == visited.count("cancel_hotel") == 1
    assert visited.index("cancel_flight") < visited.index("cancel_hotel")
    assert all(state == "Completed" for _, state in compensation_visits(engine, instance))
    assert compensable(engine, instance.id) == []


def test_each_iteration_of_a_completed_multi_instance_is_compensated(
    engine: Engine, ran: list[str]
) -> None:
    b = ProcessBuilder("comp-mi")
    b.start_event("start")
    b.service_task("charge", handler="log")
    b.multi_instance("charge", cardinality=3)
    b.service_task("refund", handler="log")
    b.compensation_boundary("charge_done", "charge", "refund")
    b.user_task("check")
    b.compensation_throw("undo", activity="charge")
    b.end_event("end")
    b.chain("start", "charge", "check", "undo", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-mi")
    # One row per iteration in the body's scope, and the body's own in the process's.
    assert compensable(engine, instance.id) == ["charge"] * 4
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["charge"] * 3 + ["refund"] * 3
    assert compensation_visits(engine, instance) == [("refund", "Completed")] * 3


def test_a_multi_instance_still_running_is_not_compensated(engine: Engine, ran: list[str]) -> None:
    """As in Camunda 7: a multi-instance activity is compensated only once it has ended."""
    b = ProcessBuilder("comp-mi-open")
    b.start_event("start")
    b.parallel_gateway("fork")
    b.user_task("approve")
    b.multi_instance("approve", cardinality=2)
    b.user_task("withdraw")
    b.compensation_boundary("approve_done", "approve", "withdraw")
    b.compensation_throw("undo")
    b.end_event("end")
    b.end_event("end_approve")
    b.chain("start", "fork", "approve", "end_approve")
    b.user_task("go")
    b.chain("fork", "go", "undo", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-mi-open")
    approvals = [t for t in instance.user_tasks() if t.node_id == "approve"]
    engine.complete_task(approvals[0].id)  # one iteration done, the body still running
    [go] = [t for t in instance.user_tasks() if t.node_id == "go"]
    engine.complete_task(go.id)
    assert [t.node_id for t in instance.user_tasks()] == ["approve"]
    assert compensation_visits(engine, instance) == []
    engine.complete_task(instance.user_tasks()[0].id)
    assert instance.state is InstanceState.COMPLETED


def test_a_throw_in_an_error_event_subprocess_compensates_the_scope_around_it(
    engine: Engine, ran: list[str]
) -> None:
    b = ProcessBuilder("comp-error-esp")
    b.start_event("start")
    b.service_task("book", handler="log")
    b.service_task("unbook", handler="log")
    b.compensation_boundary("book_done", "book", "unbook")
    b.service_task("charge", handler="fail")
    b.end_event("end")
    b.chain("start", "book", "charge", "end")
    b.sub_process("on_error", triggered_by_event=True)
    b.start_event("caught", parent="on_error", error=True, error_code="declined")
    b.compensation_throw("undo", parent="on_error")
    b.end_event("failed", parent="on_error")
    b.chain("caught", "undo", "failed")
    engine.deploy(b.build())

    from engine.errors import BpmnError

    def fail(context: TaskContext) -> None:
        raise BpmnError("declined")

    engine.register_handler("fail", fail)
    instance = engine.start_latest("comp-error-esp")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["book", "unbook"]
    assert compensation_visits(engine, instance) == [("unbook", "Completed")]


def test_handlers_parked_as_jobs_finish_the_throw_from_later_commands(
    engine: Engine, ran: list[str]
) -> None:
    """Every step is its own transaction: the throw waits as a row, each handler runs from its
    job, and the last one to end lets the throw go on."""
    b = ProcessBuilder("comp-async")
    b.start_event("start")
    b.service_task("book", handler="log")
    b.service_task("unbook", handler="log", async_before=True)
    b.compensation_boundary("book_done", "book", "unbook")
    b.service_task("pay", handler="log")
    b.service_task("refund", handler="log", async_before=True)
    b.compensation_boundary("pay_done", "pay", "refund")
    b.compensation_throw("undo")
    b.user_task("next")
    b.end_event("end")
    b.chain("start", "book", "pay", "undo", "next", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-async")
    assert compensable(engine, instance.id) == []  # consumed as their handlers started
    jobs = sorted(engine.jobs(instance.id), key=lambda job: job.created_at)
    assert len(jobs) == 2
    parked = {(t.node_id, t.mode) for t in instance.tokens()}
    assert parked == {
        ("undo", TokenMode.FORWARD),
        ("refund", TokenMode.COMPENSATION),
        ("unbook", TokenMode.COMPENSATION),
    }
    for job in jobs:
        assert instance.user_tasks() == []
        engine.execute_job(job.id)
    assert ran == ["book", "pay", "refund", "unbook"]
    assert [t.node_id for t in instance.user_tasks()] == ["next"]


def test_a_throw_inside_a_subprocess_compensates_only_that_subprocess(
    engine: Engine, ran: list[str]
) -> None:
    b = ProcessBuilder("comp-inner")
    b.start_event("start")
    b.service_task("outer", handler="log")
    b.service_task("undo_outer", handler="log")
    b.compensation_boundary("outer_done", "outer", "undo_outer")
    b.sub_process("sub")
    b.start_event("sub_start", parent="sub")
    b.service_task("inner", handler="log", parent="sub")
    b.service_task("undo_inner", handler="log", parent="sub")
    b.compensation_boundary("inner_done", "inner", "undo_inner")
    b.compensation_throw("undo", parent="sub", end=True)
    b.chain("sub_start", "inner", "undo")
    b.end_event("end")
    b.chain("start", "outer", "sub", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-inner")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["outer", "inner", "undo_inner"]


def test_a_subprocess_with_its_own_handler_is_compensated_inside_then_by_it(
    engine: Engine, ran: list[str]
) -> None:
    b = ProcessBuilder("comp-sub-handler")
    b.start_event("start")
    b.sub_process("trip")
    b.start_event("trip_start", parent="trip")
    b.service_task("hotel", handler="log", parent="trip")
    b.service_task("cancel_hotel", handler="log", parent="trip")
    b.compensation_boundary("hotel_done", "hotel", "cancel_hotel")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "trip_end")
    b.service_task("cancel_trip", handler="log")
    b.compensation_boundary("trip_done", "trip", "cancel_trip")
    b.service_task("other", handler="log")
    b.compensation_throw("undo", activity="trip")
    b.end_event("end")
    b.chain("start", "trip", "other", "undo", "end")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-sub-handler")
    assert instance.state is InstanceState.COMPLETED
    assert ran == ["hotel", "other", "cancel_hotel", "cancel_trip"]


def test_each_iteration_of_a_multi_instance_subprocess_is_compensated_inside(
    engine: Engine, ran: list[str]
) -> None:
    b = ProcessBuilder("comp-mi-sub")
    b.start_event("start")
    b.sub_process("trip")
    b.multi_instance("trip", cardinality=3)
    b.start_event("trip_start", parent="trip")
    b.service_task("hotel", handler="log", parent="trip")
    b.user_task("cancel_hotel", parent="trip")
    b.compensation_boundary("hotel_done", "hotel", "cancel_hotel")
    b.end_event("trip_end", parent="trip")
    b.chain("trip_start", "hotel", "trip_end")
    b.compensation_throw("undo", end=True)
    b.chain("start", "trip", "undo")
    engine.deploy(b.build())
    instance = engine.start_latest("comp-mi-sub")
    assert compensable(engine, instance.id) == []  # every row consumed as its handler started
    handlers = instance.user_tasks()
    assert [t.node_id for t in handlers] == ["cancel_hotel"] * 3
    assert all(t.mode is TokenMode.COMPENSATION for t in instance.tokens() if t.node_id != "undo")
    for task in handlers:
        engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED
    assert compensation_visits(engine, instance) == [("cancel_hotel", "Completed")] * 3
