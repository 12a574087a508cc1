"""Optimistic commands: a load without the instance lock and one write applied only over the
version loaded; a lost race or a handler runs the command again under the lock."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar
from uuid import UUID

import psycopg
import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.common import persist
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.core.handlers import TaskContext
from engine.errors import Conflict
from engine.language.variables import infer
from engine.model import ProcessModel
from engine.states import InstanceState
from tests.engine.test_concurrency import race

RACE_ROUNDS = 30


def external_work(key: str = "external-work", after_handler: bool = False) -> ProcessModel:
    """start -> work (external) [-> after (handler)] -> end."""
    builder = ProcessBuilder(key).start_event("start").service_task("work", topic="work")
    builder.end_event("end")
    if after_handler:
        builder.service_task("after", handler="after").chain("start", "work", "after", "end")
    else:
        builder.chain("start", "work", "end")
    return builder.build()


def external_fan_out(branches: int) -> ProcessModel:
    """start -> split -> N external tasks -> join -> end."""
    builder = (
        ProcessBuilder(f"external-fan-out-{branches}")
        .start_event("start")
        .parallel_gateway("split")
        .parallel_gateway("join")
        .end_event("end")
        .chain("start", "split")
        .chain("join", "end")
    )
    for n in range(branches):
        builder.service_task(f"task_{n}", topic="branch").chain("split", f"task_{n}", "join")
    return builder.build()


@dataclass(frozen=True)
class _SetVariable:
    """Sets one variable, optimistically. On its first attempt, between its load and its write,
    another transaction changes the same instance (`interfere`)."""

    name: ClassVar[str] = "SetVariableOptimistically"
    result_type: ClassVar[type[Result]] = Result
    optimistic: ClassVar[bool] = True

    instance_id: UUID
    variable: str
    database_url: str
    interfere: bool
    attempts: list[bool] = field(default_factory=list, compare=False)

    def execute(self, tx: Tx) -> Result:
        self.attempts.append(tx.optimistic)
        run = load(tx, self.instance_id)
        if self.interfere and len(self.attempts) == 1:
            with psycopg.connect(self.database_url, autocommit=True) as other:
                other.execute(
                    "UPDATE process_instance SET version = version + 1 WHERE id = %s",
                    (self.instance_id,),
                )
        run.set_variable(self.variable, infer(len(self.attempts)))
        persist(tx, run)
        return Result()


def _version(database_url: str, instance_id: UUID) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT version FROM process_instance WHERE id = %s", (instance_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize(
    ("interfere", "attempts"), [(False, [True]), (True, [True, False])], ids=["alone", "stale"]
)
def test_an_optimistic_write_applies_once_or_runs_again_under_the_lock(
    engine: Engine, database_url: str, interfere: bool, attempts: list[bool]
) -> None:
    """Alone, the command writes once without the lock. When another transaction changes the
    instance between its load and its write, that write changes nothing and the command runs
    again under the lock, setting the value it computed then (2)."""
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    before = _version(database_url, instance.id)
    command = _SetVariable(instance.id, "x", database_url, interfere=interfere)
    engine.run(command)
    assert command.attempts == attempts
    assert instance.variables()["x"] == len(attempts)
    # One bump per write that applied, another transaction's included.
    assert _version(database_url, instance.id) == before + len(attempts)
    with psycopg.connect(database_url) as conn:
        updates = conn.execute(
            "SELECT count(*) FROM outbox_event WHERE instance_id = %s "
            "AND event = 'variables.updated'",
            (instance.id,),
        ).fetchone()
    assert updates == (1,)


def test_every_write_to_an_instance_bumps_its_version(engine: Engine, database_url: str) -> None:
    """What lets an optimistic write see a pessimistic command that changed only a task."""
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    before = _version(database_url, instance.id)
    engine.unlock_external_task(task["id"])
    assert _version(database_url, instance.id) == before + 1


def test_a_handler_after_a_report_runs_once_in_the_transaction(
    engine: Engine, database_url: str
) -> None:
    calls: list[UUID] = []

    def after(ctx: TaskContext) -> None:
        calls.append(ctx.instance_id)
        ctx.connection.execute(
            "INSERT INTO app_effect (instance_id) VALUES (%s)", (ctx.instance_id,)
        )

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE app_effect (instance_id uuid)")
    engine.register_handler("after", after)
    engine.deploy(external_work("with-handler", after_handler=True))
    instance = engine.start_latest("with-handler")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    engine.complete_external_task(task["id"], "w1", {"done": True})
    assert instance.state is InstanceState.COMPLETED
    assert calls == [instance.id]
    with psycopg.connect(database_url) as conn:
        effects = conn.execute("SELECT instance_id FROM app_effect").fetchall()
    assert effects == [(instance.id,)]


@pytest.mark.parametrize("round_", range(RACE_ROUNDS))
def test_racing_reports_on_one_instance_join_exactly_once(
    round_engine: Engine, round_: int
) -> None:
    """Workers complete every branch of one instance at once: optimistic writes lose races and
    run again under the lock; the join lets exactly one token through and nothing is lost."""
    engine = round_engine
    branches = 4 + round_ % 5
    engine.deploy(external_fan_out(branches))
    instance = engine.start_latest(f"external-fan-out-{branches}")
    locked = [
        engine.fetch_and_lock(f"worker-{i}", {"branch": 60_000}, max_tasks=1)[0]
        for i in range(branches)
    ]
    outcomes = race(
        branches,
        lambda i: engine.complete_external_task(locked[i]["id"], f"worker-{i}", {f"v{i}": i}),
    )
    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert instance.state is InstanceState.COMPLETED
    history = instance.history()
    assert [s.node_id for p in history for s in p.steps].count("end") == 1
    merged = [p for p in history if p.merged_into is not None]
    assert len(merged) == branches - 1
    assert instance.variables() == {f"v{i}": i for i in range(branches)}


@pytest.mark.parametrize("round_", range(RACE_ROUNDS))
def test_a_report_racing_a_cancellation_either_completes_or_is_refused(
    round_engine: Engine, round_: int
) -> None:
    """A worker's report against an operator's cancellation of the instance: exactly one of them
    takes effect, and the other is told so."""
    engine = round_engine
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    report, cancel = race(
        2,
        lambda i: engine.complete_external_task(task["id"], "w1") if i == 0 else instance.cancel(),
    )
    if isinstance(report, Exception):
        assert isinstance(report, Conflict) and "retired" in str(report), report
        assert cancel is InstanceState.TERMINATED
        assert instance.state is InstanceState.TERMINATED
    else:
        assert isinstance(cancel, Conflict) and "already Completed" in str(cancel), cancel
        assert instance.state is InstanceState.COMPLETED
