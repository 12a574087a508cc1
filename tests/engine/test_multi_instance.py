"""Multi-instance and standard loops on real PostgreSQL: the host token of the body, its
iteration tokens, their counters as committed local variables, early completion with the work of
the remaining iterations retired, boundary events on the body and nesting."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.core.handlers import TaskContext
from engine.errors import BpmnError, Conflict, ExpressionError
from engine.states import InstanceState
from tests.engine.clock import ManualClock

DATA = Path(__file__).parent.parent / "data" / "bpmn"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def engine(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, pool_size=4, clock=clock) as engine:
        yield engine


def scopes(engine: Engine, instance: InstanceHandle) -> dict[str, dict[str, Any]]:
    """The instance's variables by scope: '' the root, else the owning token's node and id."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT v.scope_key, v.name, v.value FROM variable v WHERE v.instance_id = %s",
            (instance.id,),
        ).fetchall()
    found: dict[str, dict[str, Any]] = {}
    for scope_key, name, value in rows:
        found.setdefault(scope_key, {})[name] = value
    return found


def tokens(engine: Engine, instance: InstanceHandle) -> list[tuple[UUID, str, str, UUID | None]]:
    with engine.connection() as conn:
        return [
            (row[0], row[1], row[2], row[3])
            for row in conn.execute(
                "SELECT id, node_id, state, scope_id FROM token WHERE instance_id = %s "
                "ORDER BY created_at, id",
                (instance.id,),
            ).fetchall()
        ]


def task_states(engine: Engine, instance: InstanceHandle) -> list[tuple[str, str, str | None]]:
    with engine.connection() as conn:
        return [
            (row[0], row[1], row[2])
            for row in conn.execute(
                "SELECT node_id, state, assignee FROM user_task WHERE instance_id = %s "
                "ORDER BY assignee, created_at",
                (instance.id,),
            ).fetchall()
        ]


def body_and_iterations(
    engine: Engine, instance: InstanceHandle, node_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The live host's locals and its live iterations' locals, by loopCounter."""
    live = [
        t
        for t in tokens(engine, instance)
        if t[1] == node_id and t[2] not in ("Completed", "Terminated")
    ]
    ids = {t[0] for t in live}
    [host] = [t for t in live if t[3] not in ids]
    variables = scopes(engine, instance)
    iterations = [variables.get(str(t[0]), {}) for t in live if t[3] == host[0]]
    return variables[str(host[0])], sorted(iterations, key=lambda v: v["loopCounter"])


def deploy_contract(engine: Engine) -> None:
    engine.deploy(DATA / "contract_review.bpmn")


def test_parallel_user_tasks_over_a_collection(engine: Engine) -> None:
    deploy_contract(engine)
    instance = engine.start_latest(
        "contract-review", {"reviewers": ["ann", "bob", "cy"], "quorum": 3, "copies": 0}
    )
    assert task_states(engine, instance) == [
        ("Task_Review", "Open", "ann"),
        ("Task_Review", "Open", "bob"),
        ("Task_Review", "Open", "cy"),
    ]
    body, iterations = body_and_iterations(engine, instance, "Task_Review")
    assert body == {"nrOfInstances": 3, "nrOfActiveInstances": 3, "nrOfCompletedInstances": 0}
    assert iterations == [
        {"loopCounter": 0, "reviewer": "ann"},
        {"loopCounter": 1, "reviewer": "bob"},
        {"loopCounter": 2, "reviewer": "cy"},
    ]
    # The element variable is no process variable: only the iteration sees it.
    assert "reviewer" not in instance.variables()
    by_assignee = {t.assignee: t for t in instance.user_tasks()}
    engine.complete_task(by_assignee["bob"].id, {"bobSays": "ok"})
    body, iterations = body_and_iterations(engine, instance, "Task_Review")
    assert body == {"nrOfInstances": 3, "nrOfActiveInstances": 2, "nrOfCompletedInstances": 1}
    assert [i["reviewer"] for i in iterations] == ["ann", "cy"]
    engine.complete_task(by_assignee["ann"].id)
    engine.complete_task(by_assignee["cy"].id)
    # Zero copies to sign: the sequential body completes as soon as it starts.
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables()["bobSays"] == "ok"
    assert set(scopes(engine, instance)) == {""}
    steps = [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]
    assert steps.count(("Task_Review", "multiInstanceBody", "Completed")) == 1
    assert steps.count(("Task_Review", "userTask", "Completed")) == 3
    assert steps.count(("Task_Sign", "multiInstanceBody", "Completed")) == 1
    assert ("Task_Sign", "userTask", "Completed") not in steps


def test_the_completion_condition_ends_the_body_early_and_retires_the_rest(engine: Engine) -> None:
    deploy_contract(engine)
    instance = engine.start_latest(
        "contract-review", {"reviewers": ["ann", "bob", "cy", "dan"], "quorum": 2, "copies": 1}
    )
    by_assignee = {t.assignee: t for t in instance.user_tasks()}
    engine.complete_task(by_assignee["dan"].id)
    engine.complete_task(by_assignee["ann"].id)
    assert task_states(engine, instance) == [
        ("Task_Review", "Completed", "ann"),
        ("Task_Review", "Retired", "bob"),
        ("Task_Review", "Retired", "cy"),
        ("Task_Review", "Completed", "dan"),
        ("Task_Sign", "Open", None),
    ]
    # The iterations; the host went on to the signing.
    review = [t for t in tokens(engine, instance) if t[1] == "Task_Review"]
    assert sorted(t[2] for t in review) == ["Completed", "Completed", "Terminated", "Terminated"]
    # Only the body of the signing and its one iteration hold locals now.
    body, iterations = body_and_iterations(engine, instance, "Task_Sign")
    assert body == {"nrOfInstances": 1, "nrOfActiveInstances": 1, "nrOfCompletedInstances": 0}
    assert iterations == [{"loopCounter": 0}]
    assert len(scopes(engine, instance)) == 3
    with pytest.raises(Conflict, match="was retired"):
        engine.complete_task(by_assignee["bob"].id)
    [sign] = instance.user_tasks()
    engine.complete_task(sign.id)
    assert instance.state is InstanceState.COMPLETED


def test_an_empty_collection_completes_the_body_at_once(engine: Engine) -> None:
    deploy_contract(engine)
    instance = engine.start_latest("contract-review", {"reviewers": [], "quorum": 1, "copies": 2})
    [sign] = instance.user_tasks()
    assert sign.node_id == "Task_Sign"
    assert "nrOfInstances" not in instance.variables()


def test_sequential_iterations_run_one_after_another(engine: Engine) -> None:
    deploy_contract(engine)
    instance = engine.start_latest(
        "contract-review", {"reviewers": ["ann"], "quorum": 1, "copies": 3}
    )
    [review] = instance.user_tasks()
    engine.complete_task(review.id)
    for counter in range(3):
        [sign] = instance.user_tasks()
        assert sign.node_id == "Task_Sign"
        body, iterations = body_and_iterations(engine, instance, "Task_Sign")
        assert body == {
            "nrOfInstances": 3,
            "nrOfActiveInstances": 1,
            "nrOfCompletedInstances": counter,
        }
        assert iterations == [{"loopCounter": counter}]
        engine.complete_task(sign.id)
    assert instance.state is InstanceState.COMPLETED
    steps = [(s.node_id, s.node_type) for p in instance.history() for s in p.steps]
    assert steps.count(("Task_Sign", "userTask")) == 3
    assert steps.count(("EndEvent_Signed", "endEvent")) == 1


def test_a_boundary_timer_on_a_sequential_body_ends_every_iteration(
    engine: Engine, clock: ManualClock
) -> None:
    deploy_contract(engine)
    instance = engine.start_latest(
        "contract-review", {"reviewers": ["ann"], "quorum": 1, "copies": 3}
    )
    engine.complete_task(instance.user_tasks()[0].id)
    engine.complete_task(instance.user_tasks()[0].id)  # the first copy is signed
    [job] = engine.jobs(instance.id)
    host = [t for t in tokens(engine, instance) if t[1] == "Task_Sign" and t[3] is None]
    assert [t[2] for t in host] == ["Waiting"]
    assert job.node_id == "Event_SigningLate"
    assert job.due_at == clock.now + timedelta(hours=1)
    clock.advance(hours=1)
    assert engine.execute_job(job.id) == "executed"
    assert instance.state is InstanceState.COMPLETED
    assert sorted(task_states(engine, instance)) == [
        ("Task_Review", "Completed", "ann"),
        ("Task_Sign", "Completed", None),
        ("Task_Sign", "Retired", None),
    ]
    steps = [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]
    assert ("Task_Sign", "multiInstanceBody", "Terminated") in steps
    assert ("Task_Sign", "userTask", "Terminated") in steps
    assert ("EndEvent_Expired", "endEvent", "Completed") in steps
    assert set(scopes(engine, instance)) == {""}
    assert engine.jobs(instance.id) == []


def test_an_interrupting_message_on_a_parallel_body_retires_every_iteration(
    engine: Engine,
) -> None:
    deploy_contract(engine)
    instance = engine.start_latest(
        "contract-review", {"reviewers": ["ann", "bob", "cy"], "quorum": 3, "copies": 1}
    )
    engine.complete_task(instance.user_tasks()[0].id)
    result = engine.correlate_message("ContractWithdrawn", instance_id=instance.id)
    assert result is not None
    assert instance.state is InstanceState.COMPLETED
    assert sorted(s for _, s, _ in task_states(engine, instance)) == [
        "Completed",
        "Retired",
        "Retired",
    ]
    steps = [(s.node_id, s.state) for p in instance.history() for s in p.steps]
    assert ("EndEvent_Withdrawn", "Completed") in steps
    assert ("Task_Sign", "Active") not in steps
    with engine.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM event_subscription WHERE instance_id = %s", (instance.id,)
        ).fetchone() == (0,)
    assert set(scopes(engine, instance)) == {""}


def test_nested_multi_instance_in_a_multi_instance_subprocess(engine: Engine) -> None:
    engine.deploy(DATA / "batch_approval.bpmn")
    instance = engine.start_latest(
        "batch-approval", {"batches": ["ann", "bob"], "itemsPerBatch": 2}
    )
    tasks = instance.user_tasks()
    assert sorted(t.assignee or "" for t in tasks) == ["ann", "ann", "bob", "bob"]
    live = [t for t in tokens(engine, instance) if t[2] not in ("Completed", "Terminated")]
    # one subprocess body, two subprocess iterations, two task bodies, four task iterations
    assert sorted(t[1] for t in live) == ["SubProcess_Batch"] * 3 + ["Task_Item"] * 6
    for task in tasks[:-1]:
        engine.complete_task(task.id)
        assert instance.state is InstanceState.ACTIVE
    engine.complete_task(tasks[-1].id)
    assert instance.state is InstanceState.COMPLETED
    steps = [(s.node_id, s.node_type) for p in instance.history() for s in p.steps]
    assert steps.count(("SubProcess_Batch", "multiInstanceBody")) == 1
    assert steps.count(("SubProcess_Batch", "subProcess")) == 2
    assert steps.count(("Task_Item", "multiInstanceBody")) == 2
    assert steps.count(("Task_Item", "userTask")) == 4
    assert set(scopes(engine, instance)) == {""}


def test_automatic_service_task_iterations(engine: Engine) -> None:
    seen: list[tuple[int, Any]] = []

    @engine.handler("charge")
    def charge(ctx: TaskContext) -> dict[str, Any]:
        seen.append((ctx.variables["loopCounter"], ctx.variables.get("order")))
        return {"charged": ctx.variables.get("charged", 0) + 1}

    model = (
        ProcessBuilder("charge-all")
        .start_event("start")
        .service_task("charge", handler="charge")
        .multi_instance("charge", collection="orders", element_variable="order")
        .service_task("again", handler="charge")
        .multi_instance("again", sequential=True, cardinality="${2}")
        .end_event("end")
        .chain("start", "charge", "again", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("charge-all", {"orders": ["a", "b", "c"]})
    assert instance.state is InstanceState.COMPLETED
    assert seen == [(0, "a"), (1, "b"), (2, "c"), (0, None), (1, None)]
    assert instance.variables()["charged"] == 5


def test_a_standard_loop_runs_while_its_condition_holds_up_to_its_maximum(engine: Engine) -> None:
    @engine.handler("poll")
    def poll(ctx: TaskContext) -> dict[str, Any]:
        return {
            "polls": ctx.variables["polls"] + 1,
            "counters": [*ctx.variables["counters"], ctx.variables["loopCounter"]],
        }

    for key, condition, test_before, maximum, start, expected in (
        ("loop-max", "${polls < 10}", False, 3, 0, [0, 1, 2]),
        ("loop-cond", "${polls < 2}", False, None, 0, [0, 1]),
        # Checked after the run without testBefore: runs once even when false from the start.
        ("loop-after", "${polls < 0}", False, None, 0, [0]),
        ("loop-before", "${polls < 0}", True, 5, 0, []),
        ("loop-before-true", "${polls < 2}", True, 5, 0, [0, 1]),
    ):
        model = (
            ProcessBuilder(key)
            .start_event("start")
            .service_task("poll", handler="poll")
            .standard_loop("poll", condition=condition, test_before=test_before, maximum=maximum)
            .end_event("end")
            .chain("start", "poll", "end")
            .build()
        )
        engine.deploy(model)
        instance = engine.start_latest(key, {"polls": start, "counters": []})
        assert instance.state is InstanceState.COMPLETED, key
        assert instance.variables()["counters"] == expected, key
        assert set(scopes(engine, instance)) == {""}


def test_a_standard_loop_of_user_tasks_keeps_its_counter_between_commands(engine: Engine) -> None:
    model = (
        ProcessBuilder("ask-again")
        .start_event("start")
        .user_task("ask")
        .standard_loop("ask", condition="${!answered}", maximum=4)
        .end_event("end")
        .chain("start", "ask", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("ask-again", {"answered": False})
    for _ in range(2):
        engine.complete_task(instance.user_tasks()[0].id)
    host = [t for t in tokens(engine, instance) if t[2] == "Waiting" and t[3] is None]
    assert scopes(engine, instance)[str(host[0][0])] == {"loopCounter": 2}
    engine.complete_task(instance.user_tasks()[0].id, {"answered": True})
    assert instance.state is InstanceState.COMPLETED


def test_a_bad_collection_fails_the_command_naming_the_activity(engine: Engine) -> None:
    deploy_contract(engine)

    def count() -> object:
        with engine.connection() as conn:
            return conn.execute("SELECT count(*) FROM process_instance").fetchone()

    before = count()
    with pytest.raises(Exception, match="Task_Review") as caught:
        engine.start_latest("contract-review", {"reviewers": "ann", "quorum": 1, "copies": 1})
    assert "not a list" in str(caught.value)
    with pytest.raises(Exception, match="loopCardinality"):
        engine.start_latest("contract-review", {"reviewers": [], "quorum": 1, "copies": -1})
    assert count() == before  # nothing half-written


def test_a_bpmn_error_in_an_iteration_is_caught_on_the_body(engine: Engine) -> None:
    ran: list[int] = []

    @engine.handler("check")
    def check(ctx: TaskContext) -> None:
        ran.append(ctx.variables["loopCounter"])
        if ctx.variables["loopCounter"] == 1:
            raise BpmnError("BAD", "item 1 is bad")

    model = (
        ProcessBuilder("check-all")
        .start_event("start")
        .service_task("check", handler="check")
        .multi_instance("check", cardinality=4)
        .end_event("end")
        .boundary_event("bad", "check", error_code="BAD")
        .user_task("fix")
        .end_event("fixed")
        .chain("start", "check", "end")
        .chain("bad", "fix", "fixed")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("check-all")
    # The body's boundary event ends it: the iterations not yet run never run.
    assert ran == [0, 1]
    [fix] = instance.user_tasks()
    assert fix.node_id == "fix"
    steps = [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]
    assert ("check", "multiInstanceBody", "Terminated") in steps
    assert [s for s in steps if s[0] == "end"] == []
    assert scopes(engine, instance) == {}  # no variables at all: no locals left


def test_receive_and_external_task_iterations(engine: Engine) -> None:
    model = (
        ProcessBuilder("collect")
        .start_event("start")
        .receive_task("wait", message="Signed")
        .multi_instance("wait", cardinality=2)
        .service_task("ship", topic="shipping")
        .multi_instance("ship", collection="parcels", element_variable="parcel")
        .end_event("end")
        .chain("start", "wait", "ship", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("collect", {"parcels": ["p1", "p2", "p3"]})
    with engine.connection() as conn:
        waiting = conn.execute(
            "SELECT count(*) FROM event_subscription WHERE instance_id = %s AND name = 'Signed'",
            (instance.id,),
        ).fetchone()
    assert waiting == (2,)
    engine.correlate_message("Signed", instance_id=instance.id, all=True)
    tasks = engine.fetch_and_lock("worker-1", {"shipping": 60_000}, max_tasks=10)
    assert len(tasks) == 3
    for task in tasks:
        engine.complete_external_task(task["id"], "worker-1", {})
    assert instance.state is InstanceState.COMPLETED
    steps = [(s.node_id, s.node_type) for p in instance.history() for s in p.steps]
    assert steps.count(("wait", "receiveTask")) == 2
    assert steps.count(("ship", "serviceTask")) == 3


def test_runaway_loops_fail_the_command_naming_the_activity(engine: Engine) -> None:
    engine.register_handler("noop", lambda ctx: None)
    forever = (
        ProcessBuilder("forever")
        .start_event("start")
        .service_task("spin", handler="noop")
        .standard_loop("spin", condition="${true}")
        .end_event("end")
        .chain("start", "spin", "end")
        .build()
    )
    huge = (
        ProcessBuilder("huge")
        .start_event("start")
        .task("each")
        .multi_instance("each", cardinality="${n}")
        .end_event("end")
        .chain("start", "each", "end")
        .build()
    )
    engine.deploy(forever, huge)
    with pytest.raises(ExpressionError, match="loopCondition of activity 'spin' still holds"):
        engine.start_latest("forever")
    with pytest.raises(ExpressionError, match="activity 'each' asks for 100001 iterations"):
        engine.start_latest("huge", {"n": 100_001})
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM process_instance").fetchone() == (0,)


def test_an_uncaught_error_ends_only_its_iteration(engine: Engine) -> None:
    ran: list[int] = []

    @engine.handler("try")
    def attempt(ctx: TaskContext) -> None:
        ran.append(ctx.variables["loopCounter"])
        if ctx.variables["loopCounter"] == 1:
            raise BpmnError("NOPE")

    model = (
        ProcessBuilder("try-all")
        .start_event("start")
        .service_task("try", handler="try")
        .multi_instance("try", sequential=True, cardinality=3)
        .user_task("after")
        .end_event("end")
        .chain("start", "try", "after", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("try-all")
    # As in Camunda 7 by default, the error ends the iteration that threw it; the body goes on.
    assert ran == [0, 1, 2]
    [after] = instance.user_tasks()
    assert after.node_id == "after"
    steps = [(s.node_id, s.node_type, s.state) for p in instance.history() for s in p.steps]
    assert steps.count(("try", "serviceTask", "Completed")) == 3
    assert steps.count(("try", "multiInstanceBody", "Completed")) == 1
