"""Batches: every item done or failed exactly once, in chunks of one transaction each; suspend,
resume, cancel and retry; each type does its work; two runners never run an item twice."""

from __future__ import annotations

import threading
from collections import Counter
from uuid import UUID

import pytest

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.batches import (
    CancelBatch,
    CreateBatch,
    RetryBatchItems,
    RunBatchItems,
    SuspendBatch,
)
from engine.core import audit
from engine.errors import BadRequest, Conflict
from engine.loops.jobs import JobExecutor
from engine.states import AuditChannel, BatchType, InstanceState
from engine.store import batches as store
from tests.engine.batches import (
    batch_entries,
    batch_row,
    deploy_charge,
    failed_charges,
    item_states,
    run_to_end,
)

OLGA = audit.Actor("olga", AuditChannel.CONSOLE)
MISSING = "00000000-0000-4000-8000-000000000001"


def _create(engine: Engine, kind: BatchType, items: list[str], **payload: object) -> str:
    with audit.acting(OLGA):
        return engine.run(CreateBatch(kind, tuple(items), payload)).batch_id


def _open_incidents(engine: Engine, ids: list[str]) -> int:
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM incident WHERE id = ANY(%s) AND state = 'Open'",
            ([UUID(i) for i in ids],),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _operator_entries(engine: Engine, batch_id: str) -> list[tuple[str, str]]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT operation, user_id FROM audit_entry WHERE entity = 'Batch' AND entity_id = %s "
            "ORDER BY at, operation",
            (batch_id,),
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


def test_a_retry_batch_retries_each_incident_once_and_records_the_one_that_failed(
    engine: Engine,
) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, 5)
    batch_id = _create(engine, BatchType.RETRY_INCIDENTS, [*incidents, MISSING])
    assert batch_row(engine, batch_id) == ("Running", 6, 0, 0, "olga", False)
    chunks = run_to_end(engine, batch_id, limit=4)
    assert [(c.done, c.failed) for c in chunks] == [(4, 0), (1, 1)]
    assert batch_row(engine, batch_id) == ("Completed", 6, 5, 1, "olga", True)
    assert _open_incidents(engine, incidents) == 0
    states = item_states(engine, batch_id)
    assert states[MISSING] == ("Failed", f"incident {MISSING} does not exist")
    assert {states[i] for i in incidents} == {("Done", None)}
    # Each item ran as the batch's creator, with the batch's id on its entry.
    assert batch_entries(engine, batch_id) == sorted(
        (i, "olga", "batch", "Retry") for i in incidents
    )
    assert _operator_entries(engine, batch_id) == [("CreateBatch", "olga")]
    # Run again: nothing is left, nothing runs twice.
    assert engine.run(RunBatchItems(UUID(batch_id))).done == 0
    assert len(batch_entries(engine, batch_id)) == 5


def test_the_job_executor_runs_a_batch_to_its_end(engine: Engine) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, 3)
    batch_id = _create(engine, BatchType.RETRY_INCIDENTS, incidents)
    executor = JobExecutor(engine, lock_seconds=30)
    for _ in range(5):
        executor.run_once()
    assert batch_row(engine, batch_id) == ("Completed", 3, 3, 0, "olga", True)
    assert _open_incidents(engine, incidents) == 0
    assert engine.jobs() == []  # the batch's job is gone with its work


def test_a_batch_job_without_its_batch_is_deleted(engine: Engine) -> None:
    with engine.connection() as conn:
        store.schedule_job(conn, UUID(MISSING), engine.clock(), 3)
    assert len(engine.jobs()) == 1
    JobExecutor(engine, lock_seconds=30).run_once()
    assert engine.jobs() == []


def test_suspend_stops_resume_continues_cancel_stops_for_good(engine: Engine) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, 6)
    batch_id = UUID(_create(engine, BatchType.RETRY_INCIDENTS, incidents))
    engine.run(RunBatchItems(batch_id, 2))
    with audit.acting(OLGA):
        assert engine.run(SuspendBatch(batch_id)).state == "Suspended"
    assert engine.jobs() == []
    assert engine.run(RunBatchItems(batch_id, 2)).done == 0
    assert batch_row(engine, batch_id)[:4] == ("Suspended", 6, 2, 0)
    with audit.acting(OLGA):
        assert engine.run(SuspendBatch(batch_id, suspended=False)).state == "Running"
    assert [job.id for job in engine.jobs()] == [batch_id]
    assert engine.run(RunBatchItems(batch_id, 2)).done == 2
    with audit.acting(OLGA):
        assert engine.run(CancelBatch(batch_id)).state == "Cancelled"
        with pytest.raises(Conflict, match="already Cancelled"):
            engine.run(CancelBatch(batch_id))
        with pytest.raises(Conflict):
            engine.run(SuspendBatch(batch_id, suspended=False))
    assert engine.run(RunBatchItems(batch_id, 10)).done == 0
    assert batch_row(engine, batch_id) == ("Cancelled", 6, 4, 0, "olga", True)
    assert _open_incidents(engine, incidents) == 2  # the rest is left undone
    assert Counter(s for s, _ in item_states(engine, batch_id).values()) == {
        "Done": 4,
        "Pending": 2,
    }
    assert _operator_entries(engine, str(batch_id)) == [
        ("CreateBatch", "olga"),
        ("Suspend", "olga"),
        ("Activate", "olga"),
        ("Delete", "olga"),
    ]


def test_retrying_failed_items_runs_them_again(engine: Engine) -> None:
    deploy_charge(engine)
    [incident] = failed_charges(engine, 1)
    batch_id = UUID(_create(engine, BatchType.RETRY_INCIDENTS, [incident]))
    engine.retry_incident(incident)  # retried by hand meanwhile: the item will fail
    run_to_end(engine, batch_id)
    assert batch_row(engine, batch_id)[:4] == ("Completed", 1, 0, 1)
    assert item_states(engine, batch_id)[incident] == (
        "Failed",
        f"incident {incident} is already resolved",
    )
    [task] = engine.fetch_and_lock("w", {"batch-charge": 60_000})
    engine.fail_external_task(task["id"], "w", "declined again", retries=0)
    [again] = engine.incidents(instance_id=task["instance_id"])
    # The item names the incident: a new incident is a new item; this one fails again.
    with audit.acting(OLGA):
        assert engine.run(RetryBatchItems(batch_id)).retried == 1
    assert batch_row(engine, batch_id)[:4] == ("Running", 1, 0, 0)
    run_to_end(engine, batch_id)
    assert batch_row(engine, batch_id)[:4] == ("Completed", 1, 0, 1)
    with audit.acting(OLGA):
        engine.run(RetryBatchItems(batch_id))
    engine.run(SuspendBatch(batch_id))
    engine.run(CancelBatch(batch_id))
    with pytest.raises(Conflict, match="cancelled"):
        engine.run(RetryBatchItems(batch_id))
    assert ("RetryBatch", "olga") in _operator_entries(engine, str(batch_id))
    assert engine.incident(again.id).state == "Open"


def _instances(engine: Engine, key: str, count: int) -> list[str]:
    return [str(engine.start_latest(key).id) for _ in range(count)]


def test_each_instance_type_does_its_work(engine: Engine) -> None:
    engine.deploy(
        ProcessBuilder("batch-wait")
        .start_event("start")
        .user_task("review", "Review")
        .end_event("end")
        .chain("start", "review", "end")
        .build()
    )
    ids = _instances(engine, "batch-wait", 3)
    suspend = _create(engine, BatchType.SUSPEND_INSTANCES, ids)
    run_to_end(engine, suspend)
    assert {engine.instance(i).state for i in ids} == {InstanceState.SUSPENDED}
    resume = _create(engine, BatchType.RESUME_INSTANCES, ids[:2])
    run_to_end(engine, resume)
    assert [engine.instance(i).state for i in ids] == [
        InstanceState.ACTIVE,
        InstanceState.ACTIVE,
        InstanceState.SUSPENDED,
    ]
    variables = _create(
        engine,
        BatchType.SET_VARIABLES,
        ids,
        variables={"tier": {"value": "gold"}, "limit": {"value": 7, "type": "Long"}},
    )
    run_to_end(engine, variables)
    # The suspended one takes variables too (Camunda allows it); each instance has them.
    assert [engine.instance(i).variables() for i in ids] == [{"tier": "gold", "limit": 7}] * 3
    cancel = _create(engine, BatchType.CANCEL_INSTANCES, ids)
    run_to_end(engine, cancel)
    assert {engine.instance(i).state for i in ids} == {InstanceState.TERMINATED}
    again = _create(engine, BatchType.CANCEL_INSTANCES, ids[:1])
    run_to_end(engine, again)
    assert batch_row(engine, again)[:4] == ("Completed", 1, 0, 1)
    assert "already Terminated" in str(item_states(engine, again)[ids[0]][1])
    history = _create(engine, BatchType.DELETE_HISTORY, [*ids, MISSING])
    run_to_end(engine, history)
    assert batch_row(engine, history)[:4] == ("Completed", 4, 3, 1)
    with engine.connection() as conn:
        left = conn.execute(
            "SELECT count(*) FROM process_instance WHERE id = ANY(%s)",
            ([UUID(i) for i in ids],),
        ).fetchone()
    assert left == (0,)
    assert [row[3] for row in batch_entries(engine, history)] == ["DeleteHistory"] * 3


def test_a_history_deletion_refuses_a_running_instance(engine: Engine) -> None:
    deploy_charge(engine)
    running = str(engine.start_latest("batch-charge").id)
    batch_id = _create(engine, BatchType.DELETE_HISTORY, [running])
    run_to_end(engine, batch_id)
    assert item_states(engine, batch_id)[running] == (
        "Failed",
        f"process instance {running} has not ended (Active)",
    )
    assert engine.instance(running).state is InstanceState.ACTIVE


def test_retries_batches_set_retries(engine: Engine) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, 2)
    tasks = [str(view.external_task_id) for view in (engine.incident(i) for i in incidents)]
    batch_id = _create(engine, BatchType.SET_EXTERNAL_TASK_RETRIES, tasks, retries=4)
    run_to_end(engine, batch_id)
    assert [engine.external_task(t).retries for t in tasks] == [4, 4]
    assert _open_incidents(engine, incidents) == 0
    engine.deploy(
        ProcessBuilder("batch-async")
        .start_event("start")
        .service_task("work", handler="work", async_before=True)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    instance = engine.start_latest("batch-async")
    [job] = engine.jobs(instance.id)
    jobs_batch = _create(engine, BatchType.SET_JOB_RETRIES, [str(job.id)], retries=9)
    run_to_end(engine, jobs_batch)
    assert engine.job(job.id).retries == 9


@pytest.mark.parametrize(
    ("kind", "items", "payload", "field", "message"),
    [
        ("reboot", [MISSING], {}, "type", "unknown batch type 'reboot'"),
        (BatchType.MODIFY, [MISSING], {}, "instructions", "non-empty list"),
        (
            BatchType.MODIFY,
            [MISSING],
            {"instructions": [{"type": "cancel"}]},
            "instructions",
            r"instructions\[0\]: a stored modification instruction does not read",
        ),
        (BatchType.MIGRATE, [MISSING], {}, "sourceProcessDefinitionId", "definition id"),
        (BatchType.SET_JOB_RETRIES, [MISSING], {}, "retries", "retries must be a whole number"),
        (BatchType.SET_JOB_RETRIES, [MISSING], {"retries": -1}, "retries", "between 0"),
        (BatchType.SET_VARIABLES, [MISSING], {"variables": {}}, "variables", "non-empty"),
        (BatchType.SET_VARIABLES, [MISSING], {"variables": {"a": 1}}, "variables", "object"),
        (BatchType.CANCEL_INSTANCES, [], {}, "items", "at least one item"),
        (BatchType.CANCEL_INSTANCES, ["nope"], {}, "items", "'nope' is not a UUID"),
    ],
)
def test_a_bad_batch_is_refused_naming_the_field_and_nothing_is_written(
    engine: Engine,
    kind: str,
    items: list[str],
    payload: dict[str, object],
    field: str,
    message: str,
) -> None:
    with audit.acting(OLGA), pytest.raises(BadRequest, match=message) as refused:
        engine.run(CreateBatch(kind, tuple(items), payload))
    assert refused.value.detail.get("field") == field
    with engine.connection() as conn:
        assert conn.execute("SELECT count(*) FROM batch").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM audit_entry").fetchone() == (0,)


def test_two_runners_of_one_batch_never_run_an_item_twice(engine: Engine) -> None:
    deploy_charge(engine)
    incidents = failed_charges(engine, 120)
    batch_id = _create(engine, BatchType.RETRY_INCIDENTS, incidents)
    barrier = threading.Barrier(2)
    done: list[int] = []

    def runner() -> None:
        barrier.wait()
        done.append(sum(chunk.done for chunk in run_to_end(engine, batch_id, limit=10)))

    threads = [threading.Thread(target=runner) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(done) == 120
    assert batch_row(engine, batch_id)[:4] == ("Completed", 120, 120, 0)
    entries = Counter(row[0] for row in batch_entries(engine, batch_id))
    assert set(entries) == set(incidents) and set(entries.values()) == {1}
