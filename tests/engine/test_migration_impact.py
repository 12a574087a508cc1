"""The impact of a migration, read before it runs: the count and sample of the selection, the
running tokens per node, and the refusals by reason, validated once per group of instances that
wait alike; the refusals agree with validating every instance on its own."""

from __future__ import annotations

from collections import Counter
from typing import Any
from uuid import UUID, uuid4

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.queries import migration_impact
from engine.queries.migration_impact import Selection
from engine.store import runs
from tests.engine.test_migration import versions


def _model(key: str, b: str) -> ProcessBuilder:
    """A fork into user tasks a and `b`, a join, a user task c."""
    return (
        ProcessBuilder(key)
        .start_event("s")
        .parallel_gateway("fork")
        .user_task("a")
        .user_task(b)
        .parallel_gateway("join")
        .user_task("c")
        .end_event("e")
        .chain("s", "fork", "a", "join", "c", "e")
        .chain("fork", b, "join")
    )


def _complete(engine: Engine, instance_id: UUID, node: str) -> None:
    [task] = [t for t in engine.user_tasks(instance_id) if t.node_id == node]
    engine.complete_task(task.id)


@pytest.fixture
def mixed(engine: Engine) -> tuple[str, str, dict[str, list[UUID]]]:
    """Version 2 renames b: 4 instances at a and b, 3 with b done (its branch at the join), 2
    with a done, 2 at c; the instances by where they are."""
    source, target = versions(engine, _model("impact", "b"), _model("impact", "b2"))
    made: dict[str, list[UUID]] = {"fresh": [], "b_done": [], "a_done": [], "at_c": []}
    for group, n in (("fresh", 4), ("b_done", 3), ("a_done", 2), ("at_c", 2)):
        for i in range(n):
            instance_id = engine.start_version("impact", 1, business_key=f"{group}-{i}").id
            if group in ("b_done", "at_c"):
                _complete(engine, instance_id, "b")
            if group in ("a_done", "at_c"):
                _complete(engine, instance_id, "a")
            made[group].append(instance_id)
    return source, target, made


def test_the_refusals_by_group_agree_with_validating_each_instance(
    engine: Engine, mixed: tuple[str, str, dict[str, list[UUID]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target, made = mixed
    plan = engine.migration_plan(source, target)
    loaded: list[UUID] = []
    load_run = runs.load_run

    def counting(conn: Any, instance_id: UUID, *args: Any, **kwargs: Any) -> Any:
        loaded.append(instance_id)
        return load_run(conn, instance_id, *args, **kwargs)

    monkeypatch.setattr(runs, "load_run", counting)
    found = migration_impact.impact(
        engine, engine.definition_cache, plan, Selection(source), engine.clock()
    )
    monkeypatch.undo()
    assert found.count == 11 and found.groups == 4
    assert len(loaded) == 4  # one instance validated per group, not eleven
    assert found.refused == 9 and found.migratable == 2 and found.unvalidated == 0
    every = [i for ids in made.values() for i in ids]
    assert sorted(s.id for s in found.sample) == sorted(every)  # fewer than a sample holds

    report = engine.validate_migration(plan, every)
    per_reason: Counter[str] = Counter()
    for instance in report.instances:
        per_reason.update(set(str(f) for f in instance.failures))
    assert {r.reason: r.count for r in found.refusals} == dict(per_reason)
    assert sum(1 for r in report.instances if r.failures) == found.refused
    reasons = {r.reason: r for r in found.refusals}
    assert reasons["token at 'b': 'b' is not mapped: the target definition has no such activity"]
    joined = [r for r in found.refusals if r.reason.startswith("join at 'join'")]
    assert [r.count for r in joined] == [3]
    assert UUID(joined[0].example) in made["b_done"]

    assert found.tokens == {"a": 7, "b": 6, "join": 5, "c": 2}


def test_a_narrowed_selection_counts_samples_and_names_the_ids_it_does_not_hold(
    engine: Engine, mixed: tuple[str, str, dict[str, list[UUID]]]
) -> None:
    source, target, made = mixed
    plan = engine.migration_plan(source, target)
    by_key = Selection(source, business_key="at_c-1")
    found = migration_impact.impact(engine, engine.definition_cache, plan, by_key, engine.clock())
    assert (found.count, found.refused, found.refusals) == (1, 0, [])
    assert [s.id for s in found.sample] == [made["at_c"][1]]
    assert migration_impact.count(engine, by_key) == 1

    stranger = uuid4()
    typed = Selection(source, instance_ids=(made["fresh"][0], made["at_c"][0], stranger))
    found = migration_impact.impact(engine, engine.definition_cache, plan, typed, engine.clock())
    assert found.count == 2 and found.refused == 1 and found.missing == [str(stranger)]
    assert found.tokens == {"a": 1, "b": 1, "c": 1}

    few = migration_impact.impact(
        engine, engine.definition_cache, plan, Selection(source), engine.clock(), sample=3
    )
    assert few.count == 11 and len(few.sample) == 3


def test_the_default_source_is_the_newest_other_version_with_running_instances(
    engine: Engine,
) -> None:
    v1, v2 = versions(engine, _model("impact_src", "b"), _model("impact_src", "b2"))
    assert migration_impact.default_source(engine, "impact_src", v2) is None
    engine.start_version("impact_src", 1)
    found = migration_impact.default_source(engine, "impact_src", v2)
    assert found is not None and found.id == v1
    engine.start_version("impact_src", 2)
    engine.deploy(_model("impact_src", "b3").build())
    v3 = engine.latest_definition("impact_src").id
    found = migration_impact.default_source(engine, "impact_src", v3)
    assert found is not None and found.id == v2
