"""Call activities reached by every kind of command: jobs of the job executor (timers, async
continuations, batches of timers), a worker's optimistic report, message correlation and signal
broadcast. Whichever command changes a called instance, its caller changes in the same
transaction, and every instance is locked after its family's root."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.errors import NeedsTransaction
from engine.loops.jobs import JobExecutor
from engine.loops.worker import Task, Worker
from engine.model import CallMapping, ProcessModel, TimerDefinition
from engine.states import InstanceState
from engine.store import definitions
from tests.engine.clock import ManualClock
from tests.engine.test_call_activity_races import deadlocks, open_work, visits


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock, pool_size=6) as engine:
        yield engine


def calling(key: str, called: str, *, timeout: str | None = None, **call: Any) -> ProcessModel:
    """Start -> Call -> After (handler `after`) -> End; with `timeout`, an interrupting timer
    boundary event on the call activity leads to TimedOut (a user task)."""
    builder = (
        ProcessBuilder(key)
        .start_event("Start")
        .call_activity("Call", called_element=called, **call)
        .service_task("After", handler="after")
        .end_event("End")
        .chain("Start", "Call", "After", "End")
    )
    if timeout is not None:
        builder.boundary_event(
            "Timeout", "Call", timer=TimerDefinition(kind="duration", text=timeout)
        ).user_task("TimedOut").end_event("TimedOutEnd").chain("Timeout", "TimedOut", "TimedOutEnd")
    return builder.build()


def writers(conn: psycopg.Connection[Any], root: UUID) -> int:
    """How many transactions last wrote the family's instance rows."""
    [(count,)] = conn.execute(
        "SELECT count(DISTINCT xmin::text) FROM process_instance WHERE root_instance_id = %s",
        (root,),
    ).fetchall()
    return int(count)


def states(engine: Engine, root: UUID) -> dict[str, str]:
    """definition key -> state of every instance of the family (keys differ per level here)."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT definition_key, state FROM process_instance WHERE root_instance_id = %s",
            (root,),
        ).fetchall()
    return dict(rows)


@pytest.fixture
def after_calls(timed: Engine) -> list[UUID]:
    called: list[UUID] = []
    timed.register_handler("after", lambda ctx: called.append(ctx.instance_id))
    return called


def test_a_timer_boundary_on_the_call_activity_ends_the_called_instance(
    timed: Engine, clock: ManualClock, after_calls: list[UUID]
) -> None:
    timed.deploy(
        ProcessBuilder("slow")
        .start_event("Start")
        .user_task("Work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build(),
        calling("impatient", "slow", timeout="PT1H"),
    )
    root = timed.start_latest("impatient")
    [child] = root.children()
    executor = JobExecutor(timed, owner="timers", lock_seconds=60)
    assert executor.run_once() == 0  # not due yet
    clock.advance(hours=1, seconds=1)
    assert executor.run_once() == 1
    assert states(timed, root.id) == {"impatient": "Active", "slow": "Terminated"}
    assert [t.node_id for t in root.tokens()] == ["TimedOut"]
    assert child.user_tasks() == [] or all(t.state != "Open" for t in child.user_tasks())
    with timed.connection() as conn:
        assert open_work(conn, root.id) == {"tokens": 1, "user tasks": 1}
        assert writers(conn, root.id) == 1
    assert after_calls == []


def test_due_timers_of_a_caller_and_its_called_instance_run_as_in_some_serial_order(
    timed: Engine, clock: ManualClock, after_calls: list[UUID]
) -> None:
    """The call activity's timeout and the called instance's own timer fall due together: the
    executor's batch of timers must not run both over the family as loaded (the called
    instance completing and its caller taking the timeout, which no order of the two gives)."""
    timed.deploy(
        ProcessBuilder("napper")
        .start_event("Start")
        .intermediate_catch_event("Nap", timer=TimerDefinition(kind="duration", text="PT1H"))
        .end_event("End")
        .chain("Start", "Nap", "End")
        .build(),
        calling("watcher", "napper", timeout="PT1H"),
    )
    roots = [timed.start_latest("watcher") for _ in range(3)]
    clock.advance(hours=2)
    executor = JobExecutor(timed, owner="timers", lock_seconds=60)
    while executor.run_once():
        pass
    for root in roots:
        found = states(timed, root.id)
        if found["napper"] == "Completed":
            # The called instance's timer came first: the caller went on, its timeout gone.
            assert found["watcher"] == "Completed", found
            assert [t.node_id for t in root.tokens()] == []
        else:
            # The timeout came first: the called instance ended before its timer.
            assert found == {"watcher": "Active", "napper": "Terminated"}, found
            assert [t.node_id for t in root.tokens()] == ["TimedOut"]
        with timed.connection() as conn:
            assert visits(conn, root.id, "After") + visits(conn, root.id, "TimedOut") == 1


def test_an_async_step_of_the_called_instance_runs_as_a_job_and_resumes_the_caller(
    timed: Engine, after_calls: list[UUID]
) -> None:
    steps: list[UUID] = []
    timed.register_handler("step", lambda ctx: steps.append(ctx.instance_id))
    timed.deploy(
        ProcessBuilder("async_child")
        .start_event("Start")
        .service_task("Step", handler="step", async_before=True)
        .end_event("End")
        .chain("Start", "Step", "End")
        .build(),
        calling("async_parent", "async_child"),
    )
    roots = [timed.start_latest("async_parent") for _ in range(2)]
    children = [only for root in roots for only in root.children()]
    assert [c.state for c in children] == [InstanceState.ACTIVE] * 2
    assert [len(timed.jobs(instance_id=c.id)) for c in children] == [1, 1]
    executor = JobExecutor(timed, owner="async", lock_seconds=60)
    assert executor.run_once() == 2
    assert sorted(steps) == sorted(c.id for c in children)
    assert sorted(after_calls) == sorted(r.id for r in roots)
    for root in roots:
        assert states(timed, root.id) == {"async_parent": "Completed", "async_child": "Completed"}
        with timed.connection() as conn:
            assert writers(conn, root.id) == 1  # the job's transaction wrote both
            assert open_work(conn, root.id) == {}


def test_a_workers_report_that_ends_the_called_instance_reruns_under_the_lock(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An optimistic report writes one instance; one that reaches the caller stops before any
    write and runs again the ordinary way, so everything is written once."""
    after: list[UUID] = []
    engine.register_handler("after", lambda ctx: after.append(ctx.instance_id))
    engine.deploy(
        ProcessBuilder("ext_child")
        .start_event("Start")
        .service_task("First", topic="ext-call")
        .service_task("Second", topic="ext-call")
        .end_event("End")
        .chain("Start", "First", "Second", "End")
        .build(),
        calling("ext_parent", "ext_child", outputs=[CallMapping(source="n", target="n")]),
    )
    refused: list[str] = []
    optimistic = engine.executor._run_optimistic

    def spy(command: Any) -> Any:
        try:
            return optimistic(command)
        except NeedsTransaction as exc:
            refused.append(f"{command.name}: {exc}")
            raise

    monkeypatch.setattr(engine.executor, "_run_optimistic", spy)
    root = engine.start_latest("ext_parent")
    [child] = root.children()
    worker = Worker(engine, "ext-worker", max_tasks=5, lock_ms=60_000, long_poll_seconds=0)
    count = iter(range(1, 10))

    @worker.topic("ext-call")
    def work(task: Task) -> dict[str, Any]:
        return {"n": next(count)}

    assert worker.run_once() == 1  # First: the child goes on to Second, on its own
    assert refused == []
    assert root.state is InstanceState.ACTIVE and after == []
    assert worker.run_once() == 1  # Second: the child completes and its caller goes on
    assert len(refused) == 1 and refused[0].startswith("CompleteExternalTask")
    assert states(engine, root.id) == {"ext_parent": "Completed", "ext_child": "Completed"}
    assert after == [root.id]
    assert root.variables() == {"n": 2}
    with engine.connection() as conn:
        assert writers(conn, root.id) == 1
        for instance_id, node in ((child.id, "First"), (child.id, "Second"), (root.id, "Call")):
            assert visits(conn, instance_id, node) == 1, node
        assert visits(conn, root.id, "After") == 1
        rows = conn.execute(
            "SELECT state FROM external_task WHERE instance_id = %s", (child.id,)
        ).fetchall()
        assert sorted(rows) == [("Completed",), ("Completed",)]
        assert open_work(conn, root.id) == {}


def test_a_message_to_a_receive_task_of_the_called_instance_resumes_the_caller(
    engine: Engine,
) -> None:
    after: list[UUID] = []
    engine.register_handler("after", lambda ctx: after.append(ctx.instance_id))
    engine.deploy(
        ProcessBuilder("listener")
        .start_event("Start")
        .receive_task("Hear", message="news")
        .end_event("End")
        .chain("Start", "Hear", "End")
        .build(),
        calling(
            "asker",
            "listener",
            inputs=[CallMapping(business_key=True, source="case-7")],
            outputs=[CallMapping(source="story", target="story")],
        ),
    )
    root = engine.start_latest("asker")
    [child] = root.children()
    assert child.info().business_key == "case-7"
    result = engine.correlate_message("news", business_key="case-7", variables={"story": "s"})
    assert result.deliveries == [{"kind": "instance", "instance_id": str(child.id)}]
    assert states(engine, root.id) == {"asker": "Completed", "listener": "Completed"}
    assert root.variables() == {"story": "s"}
    assert after == [root.id]
    with engine.connection() as conn:
        assert writers(conn, root.id) == 1


def signalled() -> list[ProcessModel]:
    """A caller waiting for the signal `go` beside a parallel multi-instance call activity whose
    two called instances wait for it too."""
    child = (
        ProcessBuilder("sig_child")
        .start_event("Start")
        .intermediate_catch_event("Wait", signal="go")
        .end_event("End")
        .chain("Start", "Wait", "End")
        .build()
    )
    parent = (
        ProcessBuilder("sig_parent")
        .start_event("Start")
        .parallel_gateway("Fork")
        .call_activity("Call", called_element="sig_child")
        .multi_instance("Call", cardinality=2)
        .intermediate_catch_event("Wait", signal="go")
        .parallel_gateway("Join")
        .service_task("After", handler="after")
        .end_event("End")
        .chain("Start", "Fork", "Call", "Join")
        .chain("Fork", "Wait", "Join")
        .chain("Join", "After", "End")
        .build()
    )
    return [child, parent]


def test_a_signal_reaches_a_caller_and_two_called_instances_in_one_command(
    engine: Engine,
) -> None:
    after: list[UUID] = []
    engine.register_handler("after", lambda ctx: after.append(ctx.instance_id))
    engine.deploy(*signalled())
    roots = [engine.start_latest("sig_parent") for _ in range(2)]
    family_of = {r.id: {r.id, *(c.id for c in r.children())} for r in roots}
    assert [len(f) for f in family_of.values()] == [3, 3]
    with engine.connection() as conn:
        before = deadlocks(conn)
    result = engine.signal("go")
    delivered = sorted(d["instance_id"] for d in result.deliveries)
    assert delivered == sorted(str(i) for f in family_of.values() for i in f)
    for root in roots:
        assert states(engine, root.id) == {"sig_parent": "Completed", "sig_child": "Completed"}
        with engine.connection() as conn:
            assert visits(conn, root.id, "After") == 1
            assert visits(conn, root.id, "Join") == 2  # both branches arrived, once each
            assert open_work(conn, root.id) == {}
            assert writers(conn, root.id) == 1
    assert sorted(after) == sorted(r.id for r in roots)
    with engine.connection() as conn:
        assert deadlocks(conn) == before


def test_a_multi_instance_call_activity_looks_its_called_process_up_once(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten iterations start ten called instances in one command, with one look-up of the
    process they call (each look-up is a round trip), and all of them of the same version."""
    engine.register_handler("after", lambda ctx: None)
    engine.register_handler("work", lambda ctx: {"got": ctx.variables["i"]})
    engine.deploy(
        ProcessBuilder("mi_leaf")
        .start_event("Start")
        .service_task("Work", handler="work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build(),
        ProcessBuilder("mi_root")
        .start_event("Start")
        .call_activity(
            "Call", called_element="mi_leaf", inputs=[CallMapping(source="i", target="i")]
        )
        .multi_instance("Call", collection="items", element_variable="i")
        .end_event("End")
        .chain("Start", "Call", "End")
        .build(),
    )
    looked_up: list[str] = []
    latest = definitions.latest_for_tenant

    def counting(conn: Any, key: str, tenant_id: Any, *rest: Any) -> Any:
        looked_up.append(key)
        return latest(conn, key, tenant_id, *rest)

    monkeypatch.setattr(definitions, "latest_for_tenant", counting)
    each_tenant = definitions.latest_of_each_tenant

    def counting_each(conn: Any, key: str, *rest: Any) -> Any:
        looked_up.append(key)
        return each_tenant(conn, key, *rest)

    monkeypatch.setattr(definitions, "latest_of_each_tenant", counting_each)
    root = engine.start_latest("mi_root", {"items": list(range(10))})
    assert root.state is InstanceState.COMPLETED
    assert looked_up == ["mi_root", "mi_leaf"]
    children = root.children()
    assert sorted(c.variables()["got"] for c in children) == list(range(10))
    assert {c.info().definition_id for c in children} == {engine.latest_definition("mi_leaf").id}


def test_a_workers_bpmn_error_leaves_the_called_instance_for_its_caller(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's BPMN error the called instance does not catch is caught on the call activity:
    the optimistic report stops before writing and runs again under the lock."""
    engine.register_handler("after", lambda ctx: None)
    engine.deploy(
        ProcessBuilder("risky")
        .start_event("Start")
        .service_task("Remote", topic="risky")
        .end_event("End")
        .chain("Start", "Remote", "End")
        .build(),
        ProcessBuilder("guarded")
        .start_event("Start")
        .call_activity("Call", called_element="risky")
        .end_event("End")
        .boundary_event("Failed", "Call", error=True, error_code="BROKEN")
        .user_task("Repair")
        .end_event("Repaired")
        .chain("Start", "Call", "End")
        .chain("Failed", "Repair", "Repaired")
        .build(),
    )
    refused: list[str] = []
    optimistic = engine.executor._run_optimistic

    def spy(command: Any) -> Any:
        try:
            return optimistic(command)
        except NeedsTransaction:
            refused.append(command.name)
            raise

    monkeypatch.setattr(engine.executor, "_run_optimistic", spy)
    root = engine.start_latest("guarded")
    [child] = root.children()
    [task] = engine.fetch_and_lock("w", {"risky": 60_000})
    engine.external_task_bpmn_error(task["id"], "w", "BROKEN", "the line is down")
    assert refused == ["ExternalTaskBpmnError"]
    assert states(engine, root.id) == {"guarded": "Active", "risky": "Terminated"}
    assert [t.node_id for t in root.tokens()] == ["Repair"]
    with engine.connection() as conn:
        assert writers(conn, root.id) == 1
        assert open_work(conn, root.id) == {"tokens": 1, "user tasks": 1}
        assert visits(conn, child.id, "Remote") == 1


def test_interrupting_a_multi_instance_call_activity_ends_every_called_instance(
    engine: Engine,
) -> None:
    engine.deploy(
        ProcessBuilder("waiter")
        .start_event("Start")
        .user_task("Work")
        .end_event("End")
        .chain("Start", "Work", "End")
        .build(),
        ProcessBuilder("crowd")
        .start_event("Start")
        .call_activity("Call", called_element="waiter")
        .multi_instance("Call", cardinality=3)
        .end_event("End")
        .boundary_event("Enough", "Call", message="enough")
        .end_event("Stopped")
        .chain("Start", "Call", "End")
        .chain("Enough", "Stopped")
        .build(),
    )
    root = engine.start_latest("crowd", business_key="crowd-1")
    children = root.children()
    assert len(children) == 3
    result = engine.correlate_message("enough", business_key="crowd-1")
    assert result.deliveries == [{"kind": "instance", "instance_id": str(root.id)}]
    assert root.state is InstanceState.COMPLETED
    assert [c.state for c in children] == [InstanceState.TERMINATED] * 3
    with engine.connection() as conn:
        assert open_work(conn, root.id) == {}
        assert writers(conn, root.id) == 1
