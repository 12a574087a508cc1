"""Version migration: waiting instances move from v1 to v2 and go on in v2; what cannot be mapped
is refused before anything is written."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine, InstanceHandle
from engine.builder import ProcessBuilder
from engine.commands.jobs import AcquireJobs, ExecuteJob
from engine.commands.migration import MigrationInvalid
from engine.core import audit
from engine.errors import BadRequest
from engine.model import TimerDefinition
from engine.semantics.migration import Instruction, MigrationPlan, generate_plan, validate_plan
from engine.states import AuditChannel, InstanceState
from tests.engine.clock import ManualClock
from tests.engine.test_summaries import assert_exact

OLGA = audit.Actor("olga", AuditChannel.CONSOLE)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed(database_url: str, clock: ManualClock) -> Iterator[Engine]:
    with Engine(database_url, migrate=False, clock=clock) as engine:
        yield engine


def versions(engine: Engine, v1: ProcessBuilder, v2: ProcessBuilder) -> tuple[str, str]:
    """Deploy both versions of one key; their definition ids."""
    first = v1.build()
    engine.deploy(first)
    source = engine.latest_definition(first.key).id
    engine.deploy(v2.build())
    target = engine.latest_definition(first.key).id
    assert source != target
    return source, target


def nodes(instance: InstanceHandle) -> list[str]:
    return sorted(t.node_id for t in instance.tokens())


def audit_rows(engine: Engine, instance_id: UUID) -> list[tuple[Any, ...]]:
    with engine.connection() as conn:
        return conn.execute(
            "SELECT user_id, operation, entity, entity_id, definition_id, definition_key, "
            "details->>'source', details->>'target' FROM audit_entry WHERE instance_id = %s",
            (instance_id,),
        ).fetchall()


def fire_due_jobs(engine: Engine) -> int:
    acquired = engine.run(AcquireJobs("test", 100, 60)).job_ids
    for job_id in acquired:
        engine.run(ExecuteJob(UUID(job_id), "test"))
    return len(acquired)


def test_a_user_task_keeps_its_id_and_the_instance_goes_on_in_v2(
    engine: Engine, database_url: str
) -> None:
    v1 = ProcessBuilder("mig_user").start_event("s").user_task("review").end_event("e")
    v2 = (
        ProcessBuilder("mig_user")
        .start_event("s")
        .user_task("review")
        .user_task("approve")
        .end_event("e")
    )
    source, target = versions(
        engine, v1.chain("s", "review", "e"), v2.chain("s", "review", "approve", "e")
    )
    instance = engine.start_version("mig_user", 1)
    [task] = instance.user_tasks()
    plan = engine.migration_plan(source, target)
    # Only what can hold a token is mapped: not the start and end events.
    assert [(i.source, i.target) for i in plan.instructions] == [(("review",), ("review",))]
    with audit.acting(OLGA):
        [result] = engine.migrate(plan, [instance.id])
    assert (result.target_definition_id, result.tokens) == (target, 1)
    assert instance.info().definition_id == target
    [moved] = instance.user_tasks()
    assert (moved.id, moved.node_id) == (task.id, "review")
    assert audit_rows(engine, instance.id) == [
        ("olga", "Migrate", "ProcessInstance", str(instance.id), target, "mig_user", source, target)
    ]
    engine.complete_task(task.id)
    assert nodes(instance) == ["approve"]  # v2's path
    [approve] = instance.user_tasks()
    engine.complete_task(approve.id)
    assert instance.state is InstanceState.COMPLETED
    assert_exact(database_url)  # the summaries moved with the instance


def test_an_external_task_locked_before_is_completed_after_by_its_worker(engine: Engine) -> None:
    v1 = ProcessBuilder("mig_ext").start_event("s").service_task("charge", topic="mig-charge")
    v2 = (
        ProcessBuilder("mig_ext")
        .start_event("s")
        .service_task("charge", topic="mig-charge")
        .user_task("ship")
        .end_event("e")
    )
    source, target = versions(
        engine, v1.end_event("e").chain("s", "charge", "e"), v2.chain("s", "charge", "ship", "e")
    )
    instance = engine.start_version("mig_ext", 1)
    [locked] = engine.fetch_and_lock("worker-1", {"mig-charge": 60_000})
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    engine.complete_external_task(locked["id"], "worker-1", {"paid": True})  # accepted
    assert nodes(instance) == ["ship"]
    assert instance.variables()["paid"] is True


def test_a_timer_fires_once_at_its_mapped_node(timed: Engine, clock: ManualClock) -> None:
    hour = TimerDefinition(kind="duration", text="PT1H")
    v1 = ProcessBuilder("mig_timer").start_event("s").intermediate_catch_event("wait", timer=hour)
    v2 = (
        ProcessBuilder("mig_timer")
        .start_event("s")
        .intermediate_catch_event("wait", timer=TimerDefinition(kind="duration", text="PT5H"))
        .user_task("after")
        .end_event("e")
    )
    source, target = versions(
        timed, v1.end_event("e").chain("s", "wait", "e"), v2.chain("s", "wait", "after", "e")
    )
    kept = timed.start_version("mig_timer", 1)
    again = timed.start_version("mig_timer", 1)
    timed.migrate(timed.migration_plan(source, target), [kept.id])
    timed.migrate(timed.migration_plan(source, target, update_event_triggers=True), [again.id])
    clock.advance(hours=2)
    assert fire_due_jobs(timed) == 1  # the due date kept: an hour after the start
    assert fire_due_jobs(timed) == 0
    assert nodes(kept) == ["after"]
    assert nodes(again) == ["wait"]  # re-created from v2's five hours
    clock.advance(hours=4)
    assert fire_due_jobs(timed) == 1
    assert nodes(again) == ["after"]


def test_a_message_subscription_follows_and_takes_the_new_name_when_asked(engine: Engine) -> None:
    v1 = (
        ProcessBuilder("mig_msg")
        .start_event("s")
        .intermediate_catch_event("paid", message="mig-paid")
    )
    v2 = (
        ProcessBuilder("mig_msg")
        .start_event("s")
        .intermediate_catch_event("paid", message="mig-paid-v2")
        .user_task("thank")
        .end_event("e")
    )
    source, target = versions(
        engine, v1.end_event("e").chain("s", "paid", "e"), v2.chain("s", "paid", "thank", "e")
    )
    kept = engine.start_version("mig_msg", 1)
    renamed = engine.start_version("mig_msg", 1)
    engine.migrate(engine.migration_plan(source, target), [kept.id])
    engine.migrate(engine.migration_plan(source, target, update_event_triggers=True), [renamed.id])
    engine.correlate_message("mig-paid", instance_id=kept.id)
    engine.correlate_message("mig-paid-v2", instance_id=renamed.id)
    assert nodes(kept) == nodes(renamed) == ["thank"]


def parallel(key: str, after_join: bool) -> ProcessBuilder:
    model = (
        ProcessBuilder(key)
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("a")
        .task("b")
        .parallel_gateway("join")
        .end_event("e")
        .chain("s", "fork", "a", "join")
        .chain("fork", "b", "join")
    )
    if after_join:
        return model.user_task("extra").chain("join", "extra", "e")
    return model.chain("join", "e")


def test_a_parallel_join_with_one_branch_arrived_fires_in_v2(engine: Engine) -> None:
    source, target = versions(engine, parallel("mig_join", False), parallel("mig_join", True))
    instance = engine.start_version("mig_join", 1)
    assert nodes(instance) == ["a", "join"]  # b arrived at the join and waits there
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert nodes(instance) == ["extra"]


def _rows(engine: Engine, instance_id: UUID) -> list[Any]:
    with engine.connection() as conn:
        return [
            conn.execute(
                f"SELECT * FROM {table} WHERE instance_id = %s ORDER BY 1", (instance_id,)
            ).fetchall()
            for table in ("token", "user_task", "history", "join_state", "outbox", "audit_entry")
        ] + [
            conn.execute("SELECT * FROM process_instance WHERE id = %s", (instance_id,)).fetchall()
        ]


def test_what_cannot_be_mapped_is_refused_and_nothing_is_written(engine: Engine) -> None:
    v1 = ProcessBuilder("mig_bad").start_event("s").user_task("review").end_event("e")
    v2 = (
        ProcessBuilder("mig_bad")
        .start_event("s")
        .service_task("review", topic="mig-review")
        .end_event("e")
    )
    source, target = versions(engine, v1.chain("s", "review", "e"), v2.chain("s", "review", "e"))
    instance = engine.start_version("mig_bad", 1)
    before = _rows(engine, instance.id)
    plan = engine.migration_plan(source, target)
    assert ("review",) not in [i.source for i in plan.instructions]  # not the same type
    report = engine.validate_migration(plan, [instance.id])
    assert report.instructions == []
    [failure] = report.instances[0].failures
    assert (failure.node_id, failure.kind) == ("review", "token")
    assert "type changed from userTask to serviceTask:external" in failure.reason
    with audit.acting(OLGA), pytest.raises(MigrationInvalid, match="'review'"):
        engine.migrate(plan, [instance.id])
    forced = MigrationPlan(
        source, target, (*plan.instructions, Instruction(("review",), ("review",)))
    )
    [instruction] = engine.validate_migration(forced).instructions
    assert instruction.failures == [
        "activity 'review' (userTask) cannot become 'review' (serviceTask:external): "
        "the type changes"
    ]
    with audit.acting(OLGA), pytest.raises(MigrationInvalid, match="type changes"):
        engine.migrate(forced, [instance.id])
    assert _rows(engine, instance.id) == before


def test_a_join_whose_arrived_branch_is_gone_is_refused(engine: Engine) -> None:
    v2 = (
        ProcessBuilder("mig_branch")
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("a")
        .task("c")
        .parallel_gateway("join")
        .end_event("e")
        .chain("s", "fork", "a", "join", "e")
        .chain("fork", "c", "join")
    )
    source, target = versions(engine, parallel("mig_branch", False), v2)
    instance = engine.start_version("mig_branch", 1)
    report = engine.validate_migration(engine.migration_plan(source, target), [instance.id])
    [failure] = report.instances[0].failures
    assert (failure.node_id, failure.kind) == ("join", "join")
    assert "flow 'Flow_b_join'" in failure.reason


def test_every_migrated_instance_leaves_one_audit_row(engine: Engine, database_url: str) -> None:
    v1 = ProcessBuilder("mig_many").start_event("s").user_task("t").end_event("e")
    v2 = ProcessBuilder("mig_many").start_event("s").user_task("t", "T2").end_event("e")
    source, target = versions(engine, v1.chain("s", "t", "e"), v2.chain("s", "t", "e"))
    started = [engine.start_version("mig_many", 1) for _ in range(3)]
    with audit.acting(OLGA):
        results = engine.migrate(engine.migration_plan(source, target), [i.id for i in started])
    assert len(results) == 3
    with psycopg.connect(database_url) as conn:
        counts = conn.execute(
            "SELECT instance_id, count(*) FROM audit_entry WHERE operation = 'Migrate' "
            "AND instance_id = ANY(%s) GROUP BY instance_id",
            ([i.id for i in started],),
        ).fetchall()
        visit = conn.execute(
            "SELECT node_name FROM history WHERE instance_id = %s AND node_id = 't'",
            (started[0].id,),
        ).fetchone()
    assert sorted(n for _, n in counts) == [1, 1, 1]
    assert visit == ("T2",)  # the open visit is of v2's node now
    with pytest.raises(MigrationInvalid, match="not the plan's source"):
        engine.migrate(engine.migration_plan(source, target), [started[0].id])


def test_boundary_events_the_target_adds_listen_and_those_it_drops_go(
    timed: Engine, clock: ManualClock
) -> None:
    v1 = (
        ProcessBuilder("mig_boundary")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .boundary_event("cancelled", "review", message="mig-cancel")
        .end_event("gone")
        .chain("s", "review", "e")
        .chain("cancelled", "gone")
    )
    v2 = (
        ProcessBuilder("mig_boundary")
        .start_event("s")
        .user_task("review")
        .end_event("e")
        .boundary_event("late", "review", timer=TimerDefinition(kind="duration", text="PT1H"))
        .user_task("escalate")
        .chain("s", "review", "e")
        .chain("late", "escalate")
    )
    source, target = versions(timed, v1, v2)
    instance = timed.start_version("mig_boundary", 1)
    timed.migrate(timed.migration_plan(source, target), [instance.id])
    with timed.connection() as conn:
        waits = conn.execute(
            "SELECT 'job', node_id, definition_id FROM job WHERE instance_id = %(i)s UNION ALL "
            "SELECT 'subscription', node_id, definition_id FROM event_subscription "
            "WHERE instance_id = %(i)s",
            {"i": instance.id},
        ).fetchall()
    assert waits == [("job", "late", target)]
    clock.advance(hours=2)
    assert fire_due_jobs(timed) == 1
    assert nodes(instance) == ["escalate"]


def _nested(key: str, inner_parent: str | None, name: str | None = None) -> ProcessBuilder:
    model = (
        ProcessBuilder(key)
        .start_event("s")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .end_event("sub_e", parent="sub")
        .end_event("e")
        .chain("s", "sub", "e")
    )
    if inner_parent == "sub":
        return model.user_task("work", name, parent="sub").chain("sub_s", "work", "sub_e")
    return model.chain("sub_s", "sub_e")


def test_a_token_in_a_subprocess_moves_with_its_scope(engine: Engine) -> None:
    source, target = versions(
        engine, _nested("mig_sub", "sub"), _nested("mig_sub", "sub", "Work v2")
    )
    instance = engine.start_version("mig_sub", 1)
    assert nodes(instance) == ["sub", "work"]
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    assert nodes(instance) == ["sub", "work"]
    [task] = instance.user_tasks()
    engine.complete_task(task.id)
    assert instance.state is InstanceState.COMPLETED


def test_a_node_moved_to_another_scope_is_refused() -> None:
    source = _nested("scoped", "sub").build()
    target = (
        ProcessBuilder("scoped")
        .start_event("s")
        .user_task("work")
        .sub_process("sub")
        .start_event("sub_s", parent="sub")
        .end_event("sub_e", parent="sub")
        .end_event("e")
        .chain("s", "work", "sub", "e")
        .chain("sub_s", "sub_e")
        .build()
    )
    plan = generate_plan(source, target, "scoped:1", "scoped:2")
    assert ("work",) not in [i.source for i in plan.instructions]
    forced = MigrationPlan(
        "scoped:1", "scoped:2", (*plan.instructions, Instruction(("work",), ("work",)))
    )
    [report] = validate_plan(forced, source, target)
    assert report.failures == [
        "the parent of 'work' (sub) is not mapped to the parent of 'work' (the process)"
    ]


def test_a_multi_instance_activity_moves_with_its_iterations(engine: Engine) -> None:
    def model(after: bool) -> ProcessBuilder:
        built = (
            ProcessBuilder("mig_mi")
            .start_event("s")
            .user_task("sign")
            .multi_instance("sign", cardinality=2)
            .end_event("e")
        )
        if after:
            return built.user_task("file").chain("s", "sign", "file", "e")
        return built.chain("s", "sign", "e")

    source, target = versions(engine, model(False), model(True))
    instance = engine.start_version("mig_mi", 1)
    first, second = instance.user_tasks()
    engine.complete_task(first.id)
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    engine.complete_task(second.id)
    assert nodes(instance) == ["file"]


def test_a_caller_migrates_and_its_called_instance_stays(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("mig_callee")
        .start_event("s")
        .user_task("inner")
        .end_event("e")
        .chain("s", "inner", "e")
        .build()
    )

    def caller(after: bool) -> ProcessBuilder:
        built = (
            ProcessBuilder("mig_caller")
            .start_event("s")
            .call_activity("call", called_element="mig_callee")
            .end_event("e")
        )
        if after:
            return built.user_task("after").chain("s", "call", "after", "e")
        return built.chain("s", "call", "e")

    source, target = versions(engine, caller(False), caller(True))
    instance = engine.start_version("mig_caller", 1)
    [called] = instance.children()
    callee_definition = called.info().definition_id
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    assert called.info().definition_id == callee_definition
    [task] = called.user_tasks()
    engine.complete_task(task.id)
    assert nodes(instance) == ["after"]


def test_an_event_based_gateway_listens_for_the_targets_events(engine: Engine) -> None:
    def model(events: tuple[str, ...]) -> ProcessBuilder:
        built = ProcessBuilder("mig_gate").start_event("s").event_based_gateway("gate")
        built.chain("s", "gate")
        for name in events:
            built.intermediate_catch_event(name, message=f"mig-{name}").user_task(f"after_{name}")
            built.end_event(f"end_{name}").chain("gate", name, f"after_{name}", f"end_{name}")
        return built

    source, target = versions(engine, model(("paid", "cancelled")), model(("paid", "expired")))
    instance = engine.start_version("mig_gate", 1)
    report = engine.validate_migration(engine.migration_plan(source, target), [instance.id])
    assert report.valid
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    with engine.connection() as conn:
        names = conn.execute(
            "SELECT name FROM event_subscription WHERE instance_id = %s ORDER BY name",
            (instance.id,),
        ).fetchall()
    assert names == [("mig-expired",), ("mig-paid",)]
    engine.correlate_message("mig-expired", instance_id=instance.id)
    assert nodes(instance) == ["after_expired"]


def test_a_node_mapped_to_another_id_takes_its_timer_along(
    timed: Engine, clock: ManualClock
) -> None:
    hour = TimerDefinition(kind="duration", text="PT1H")
    v1 = ProcessBuilder("mig_renamed").start_event("s").intermediate_catch_event("wait", timer=hour)
    v2 = (
        ProcessBuilder("mig_renamed")
        .start_event("s")
        .intermediate_catch_event("pause", timer=hour)
        .user_task("after")
        .end_event("e")
    )
    source, target = versions(
        timed, v1.end_event("e").chain("s", "wait", "e"), v2.chain("s", "pause", "after", "e")
    )
    instance = timed.start_version("mig_renamed", 1)
    generated = timed.migration_plan(source, target)
    assert ("wait",) not in [i.source for i in generated.instructions]
    plan = MigrationPlan(
        source, target, (*generated.instructions, Instruction(("wait",), ("pause",)))
    )
    timed.migrate(plan, [instance.id])
    assert nodes(instance) == ["pause"]
    with timed.connection() as conn:
        [job] = conn.execute(
            "SELECT node_id, due_at FROM job WHERE instance_id = %s", (instance.id,)
        ).fetchall()
    assert job == ("pause", clock.now + timedelta(hours=1))
    clock.advance(hours=1, seconds=1)
    assert fire_due_jobs(timed) == 1
    assert fire_due_jobs(timed) == 0
    assert nodes(instance) == ["after"]


def test_a_plan_travels_as_camundas_json() -> None:
    plan = MigrationPlan("k:1:a", "k:2:b", (Instruction(("wait",), ("pause",), True),))
    assert plan.to_json() == {
        "sourceProcessDefinitionId": "k:1:a",
        "targetProcessDefinitionId": "k:2:b",
        "instructions": [
            {
                "sourceActivityIds": ["wait"],
                "targetActivityIds": ["pause"],
                "updateEventTrigger": True,
            }
        ],
        "variables": None,
    }
    assert MigrationPlan.from_json(plan.to_json()) == plan
    broken = {**plan.to_json(), "instructions": [{"sourceActivityIds": "wait"}]}
    with pytest.raises(BadRequest, match=r"instructions\[0\]\.sourceActivityIds"):
        MigrationPlan.from_json(broken)
