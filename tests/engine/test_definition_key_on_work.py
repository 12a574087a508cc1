"""External tasks and outbox rows carry their instance's definition key, written with the row
(reads narrowed by definition key test it on the row): a new row has it, and an instance
migrated to a definition of another key takes its external tasks along."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder


def _process(key: str) -> Any:
    return (
        ProcessBuilder(key)
        .start_event("s")
        .service_task("charge", topic="keyed-charge")
        .end_event("e")
        .chain("s", "charge", "e")
        .build()
    )


def _keys(engine: Engine, instance_id: UUID) -> tuple[set[str | None], set[str | None]]:
    with engine.connection() as conn:
        tasks = conn.execute(
            "SELECT definition_key FROM external_task WHERE instance_id = %s", (instance_id,)
        ).fetchall()
        events = conn.execute(
            "SELECT definition_key FROM outbox_event WHERE instance_id = %s", (instance_id,)
        ).fetchall()
    return {row[0] for row in tasks}, {row[0] for row in events}


def test_new_rows_carry_the_key_and_a_migration_to_another_key_moves_the_tasks(
    engine: Engine,
) -> None:
    engine.deploy(_process("keyed_a"))
    engine.deploy(_process("keyed_b"))
    instance = engine.start_latest("keyed_a")
    assert _keys(engine, instance.id) == ({"keyed_a"}, {"keyed_a"})

    source = engine.latest_definition("keyed_a").id
    target = engine.latest_definition("keyed_b").id
    engine.migrate(engine.migration_plan(source, target), [instance.id])
    tasks, _ = _keys(engine, instance.id)
    assert tasks == {"keyed_b"}
    [locked] = engine.fetch_and_lock("worker-1", {"keyed-charge": 60_000})
    engine.complete_external_task(locked["id"], "worker-1", {})
    # The events written after the migration carry the new key.
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT definition_key FROM outbox_event WHERE instance_id = %s "
            "ORDER BY seq DESC LIMIT 1",
            (instance.id,),
        ).fetchone()
    assert row == ("keyed_b",)
