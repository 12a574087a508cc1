"""Modify and migrate batches: the stored modification or plan runs on each instance, an instance
that does not fit fails alone with why, and a plan that cannot apply makes no batch."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.batches import CreateBatch
from engine.commands.migration import MigrationInvalid
from engine.commands.modification import ModifyInstance, to_spec
from engine.core import audit
from engine.semantics.modification import CancelNode, StartBefore
from engine.states import AuditChannel, BatchType, TokenState
from tests.engine.batches import batch_entries, batch_row, item_states, run_to_end
from tests.engine.modification_support import forked

OLGA = audit.Actor("olga", AuditChannel.CONSOLE)


def _create(
    engine: Engine, kind: BatchType, items: list[str], payload: Mapping[str, object]
) -> str:
    with audit.acting(OLGA):
        return engine.run(CreateBatch(kind, tuple(items), payload)).batch_id


def _positions(engine: Engine, instance_id: object) -> set[str]:
    """The nodes the instance's tokens wait at."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT node_id FROM token WHERE instance_id = %s AND state = %s",
            (instance_id, TokenState.WAITING),
        ).fetchall()
    return {row[0] for row in rows}


def test_a_modify_batch_modifies_each_instance_of_its_definition(engine: Engine) -> None:
    engine.deploy(forked("batch-fork"))
    engine.deploy(forked("batch-fork-other"))
    mine = [engine.start_latest("batch-fork") for _ in range(2)]
    other = engine.start_latest("batch-fork-other")
    command = ModifyInstance(
        mine[0].id, (CancelNode("a"), StartBefore(node_id="after")), annotation="bulk"
    )
    payload = {**to_spec(command), "processDefinitionId": mine[0].info().definition_id}
    items = [str(i.id) for i in (*mine, other)]
    batch_id = _create(engine, BatchType.MODIFY, items, payload)
    run_to_end(engine, batch_id)
    assert batch_row(engine, batch_id) == ("Completed", 3, 2, 1, "olga", True)
    for instance in mine:
        assert _positions(engine, instance.id) == {"after", "b"}
    assert _positions(engine, other.id) == {"a", "b"}
    state, error = item_states(engine, batch_id)[str(other.id)]
    assert state == "Failed" and error is not None
    assert "not of the modification's process definition" in error
    assert batch_entries(engine, batch_id) == sorted(
        (str(i.id), "olga", "batch", "ModifyProcessInstance") for i in mine
    )


def _two_versions(engine: Engine, key: str) -> None:
    v1 = ProcessBuilder(key).start_event("s").user_task("review").end_event("e")
    v2 = ProcessBuilder(key).start_event("s").user_task("review").user_task("check")
    engine.deploy(v1.chain("s", "review", "e").build())
    engine.deploy(v2.end_event("e").chain("s", "review", "check", "e").build())


def test_a_migrate_batch_migrates_what_follows_the_plan(engine: Engine) -> None:
    _two_versions(engine, "batch-mig")
    old = engine.start_version("batch-mig", 1)
    new = engine.start_version("batch-mig", 2)
    source = old.info().definition_id
    target = new.info().definition_id
    plan = {
        "sourceProcessDefinitionId": source,
        "targetProcessDefinitionId": target,
        "instructions": [{"sourceActivityIds": ["review"], "targetActivityIds": ["review"]}],
    }
    unmappable = [{"sourceActivityIds": ["review"], "targetActivityIds": ["x"]}]
    wrong = {**plan, "instructions": unmappable}
    with pytest.raises(MigrationInvalid, match="the migration plan is invalid"):
        _create(engine, BatchType.MIGRATE, [str(old.id)], wrong)
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM batch").fetchone() == (0,)

    batch_id = _create(engine, BatchType.MIGRATE, [str(old.id), str(new.id)], plan)
    run_to_end(engine, batch_id)
    assert batch_row(engine, batch_id) == ("Completed", 2, 1, 1, "olga", True)
    assert old.info().definition_id == target
    state, error = item_states(engine, batch_id)[str(new.id)]
    assert state == "Failed" and error is not None and "not the plan's source" in error
    assert batch_entries(engine, batch_id) == [(str(old.id), "olga", "batch", "Migrate")]
