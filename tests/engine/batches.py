"""What the batch tests share: incidents made quickly, a batch run to its end, a batch's rows."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.batches import ChunkResult, RunBatchItems

CHARGE = "batch-charge"


def deploy_charge(engine: Engine) -> None:
    """start -> external task `charge` -> end."""
    engine.deploy(
        ProcessBuilder(CHARGE)
        .start_event("start")
        .service_task("charge", topic=CHARGE)
        .end_event("end")
        .chain("start", "charge", "end")
        .build()
    )


def failed_charges(engine: Engine, count: int, threads: int = 4) -> list[str]:
    """`count` new instances of the charge process, each stopped with an incident (its
    external task failed with no retries left); the incidents' ids, in no order."""
    with ThreadPoolExecutor(threads) as pool:
        instances = list(pool.map(lambda _: engine.start_latest(CHARGE).id, range(count)))
    wanted = {str(instance) for instance in instances}
    tasks: list[dict[str, Any]] = []
    while len(tasks) < count:
        fetched = engine.fetch_and_lock("w", {CHARGE: 600_000}, max_tasks=1000)
        assert fetched, "the started instances' tasks are fetchable"
        tasks += [t for t in fetched if t["instance_id"] in wanted]

    def fail(task: dict[str, Any]) -> None:
        engine.fail_external_task(task["id"], "w", "card declined", retries=0)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(fail, tasks))
    ids: list[str] = []
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT id FROM incident WHERE instance_id = ANY(%s) AND state = 'Open'",
            ([UUID(i) for i in wanted],),
        ).fetchall()
    ids = [str(row[0]) for row in rows]
    assert len(ids) == count
    return ids


def run_to_end(engine: Engine, batch_id: str | UUID, limit: int = 50) -> list[ChunkResult]:
    """Run chunks of the batch until none is left; the chunks."""
    chunks = []
    while True:
        chunk = engine.run(RunBatchItems(UUID(str(batch_id)), limit))
        chunks.append(chunk)
        if not chunk.more:
            return chunks


def batch_row(engine: Engine, batch_id: str | UUID) -> tuple[Any, ...]:
    """(state, total, done, failed, created_by, ended)."""
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT state, total, done, failed, created_by, ended_at IS NOT NULL FROM batch "
            "WHERE id = %s",
            (UUID(str(batch_id)),),
        ).fetchone()
    assert row is not None
    return tuple(row)


def item_states(engine: Engine, batch_id: str | UUID) -> dict[str, tuple[str, str | None]]:
    """item id -> (state, error)."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT item_id, state, error FROM batch_item WHERE batch_id = %s",
            (UUID(str(batch_id)),),
        ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


def batch_entries(engine: Engine, batch_id: str | UUID) -> list[tuple[Any, ...]]:
    """The audit entries of a batch's items: (entity id, user, channel, operation)."""
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT entity_id, user_id, channel, operation FROM audit_entry WHERE batch_id = %s "
            "ORDER BY entity_id",
            (UUID(str(batch_id)),),
        ).fetchall()
    return [tuple(row) for row in rows]
