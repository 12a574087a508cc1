"""Variables belong to scopes: the locals of an activity instance (a token at a task, a
subprocess's scope token) are rows keyed by their owner, seen from inside the scope, hiding outer
names, set by Camunda's setVariable rule, and gone with the activity instance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.instances import InstanceResult
from engine.commands.loading import load
from engine.core.executor import Result, Tx
from engine.language.variables import infer
from engine.queries import instances as reads
from engine.states import InstanceState
from engine.store.persist import save_runs


@dataclass(frozen=True)
class SetLocals:
    """Set locals on the live token at `node_id` (dropping its earlier ones first, when asked),
    in one command."""

    name: ClassVar[str] = "SetLocals"
    result_type: ClassVar[type[Result]] = InstanceResult

    instance_id: UUID
    node_id: str
    values: dict[str, Any]
    drop_first: bool = False
    removed: tuple[str, ...] = field(default_factory=tuple)

    def execute(self, tx: Tx) -> InstanceResult:
        run = load(tx, self.instance_id)
        [owner] = [t for t in run.live_tokens() if t.node_id == self.node_id]
        if self.drop_first:
            run.drop_locals(owner.id)
        for name, value in self.values.items():
            run.set_local(owner.id, name, infer(value))
        for name in self.removed:
            run.remove_variable(owner.id, name)
        save_runs(tx.conn, [run])
        return InstanceResult(str(run.instance.id), run.instance.definition_id, "ACTIVE")


def review_in_subprocess() -> ProcessBuilder:
    """start -> sub[ review -> level > 3 ? high : done ] -> after -> end."""
    return (
        ProcessBuilder("scoped")
        .start_event("start")
        .sub_process("sub", "Review")
        .start_event("sub_start", parent="sub")
        .user_task("review", parent="sub")
        .exclusive_gateway("gate", parent="sub", default="low")
        .user_task("high", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "review", "gate")
        .flow("gate", "high", condition="${level > 3}")
        .flow("gate", "sub_end", id="low")
        .flow("high", "sub_end")
        .user_task("after")
        .end_event("end")
        .chain("start", "sub", "after", "end")
    )


def rows(engine: Engine, instance_id: UUID, tokens: dict[str, UUID]) -> set[tuple[str, str, Any]]:
    """(owner node or "" for the root, name, value) of every variable row of the instance."""
    owners = {str(token_id): node for node, token_id in tokens.items()}
    return {
        (owners.get(row.scope_key, row.scope_key), row.name, row.value)
        for row in reads.variables_in_scopes(engine, instance_id)
    }


def live_tokens(engine: Engine, instance_id: UUID) -> dict[str, UUID]:
    return {t.node_id: t.token_id for t in engine.instance(instance_id).tokens()}


def task_at(engine: Engine, instance_id: UUID, node_id: str) -> str:
    [task] = [t for t in engine.user_tasks(instance_id) if t.node_id == node_id]
    return str(task.id)


def test_locals_are_seen_inside_their_scope_hide_outer_names_and_vanish_with_it(
    engine: Engine,
) -> None:
    engine.deploy(review_in_subprocess().build())
    instance = engine.start_latest("scoped", {"level": 1})
    iid = instance.id
    engine.run(SetLocals(iid, "sub", {"level": 5}))
    engine.run(SetLocals(iid, "review", {"note": "n"}))
    tokens = live_tokens(engine, instance.id)
    assert rows(engine, instance.id, tokens) == {
        ("", "level", 1),
        ("sub", "level", 5),
        ("review", "note", "n"),
    }
    # The gateway inside the subprocess reads the subprocess's `level` (5), not the root's (1).
    engine.complete_task(task_at(engine, instance.id, "review"), {"fresh": True})
    assert {t.node_id for t in engine.user_tasks(instance.id)} == {"high"}
    # The task's locals went with it; the subprocess's stay while it runs.
    assert rows(engine, instance.id, tokens) == {
        ("", "level", 1),
        ("", "fresh", True),
        ("sub", "level", 5),
    }
    # A name a scope already has is set there (Camunda's setVariable): the root keeps 1.
    engine.complete_task(task_at(engine, instance.id, "high"), {"level": 9})
    assert instance.variables() == {"level": 1, "fresh": True}
    assert rows(engine, instance.id, tokens) == {("", "level", 1), ("", "fresh", True)}
    engine.complete_task(task_at(engine, instance.id, "after"))
    assert instance.state is InstanceState.COMPLETED


def test_a_local_dropped_and_set_again_in_one_command_keeps_the_new_value(engine: Engine) -> None:
    engine.deploy(review_in_subprocess().build())
    instance = engine.start_latest("scoped", {"level": 1})
    iid = instance.id
    engine.run(SetLocals(iid, "review", {"note": "old", "other": 2}))
    engine.run(SetLocals(iid, "review", {"note": "new"}, drop_first=True))
    tokens = live_tokens(engine, instance.id)
    assert rows(engine, instance.id, tokens) == {("", "level", 1), ("review", "note", "new")}
    engine.run(SetLocals(iid, "review", {}, removed=("note",)))
    assert rows(engine, instance.id, tokens) == {("", "level", 1)}


def test_a_condition_sees_a_root_variable_when_no_scope_hides_it(engine: Engine) -> None:
    engine.deploy(review_in_subprocess().build())
    instance = engine.start_latest("scoped", {"level": 4})
    engine.complete_task(task_at(engine, instance.id, "review"))
    assert {t.node_id for t in engine.user_tasks(instance.id)} == {"high"}


def test_an_external_task_fetch_returns_the_variables_visible_from_its_token(
    engine: Engine,
) -> None:
    model = (
        ProcessBuilder("scoped-external")
        .start_event("start")
        .sub_process("sub")
        .start_event("sub_start", parent="sub")
        .user_task("first", parent="sub")
        .service_task("work", topic="work", parent="sub")
        .end_event("sub_end", parent="sub")
        .chain("sub_start", "first", "work", "sub_end")
        .end_event("end")
        .chain("start", "sub", "end")
        .build()
    )
    engine.deploy(model)
    instance = engine.start_latest("scoped-external", {"a": 1, "b": 2})
    engine.run(SetLocals(instance.id, "sub", {"b": 20, "c": 30}))
    engine.complete_task(task_at(engine, instance.id, "first"))
    [task] = engine.fetch_and_lock("w1", {"work": 10_000})
    assert {name: v["value"] for name, v in task["variables"].items()} == {
        "a": 1,
        "b": 20,
        "c": 30,
    }
