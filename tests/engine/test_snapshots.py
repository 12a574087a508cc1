"""A worker's report runs over the instance its fetch loaded, and a snapshot is only ever tried:
one made stale by another replica's write or fetch writes nothing, and the report is judged
again on committed state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from engine.api import Engine
from engine.commands import common, external_tasks
from engine.core.runtime import InstanceRun
from engine.errors import InvariantViolation, InvariantViolationKind
from engine.states import InstanceState
from engine.store import runs
from tests.engine.clock import ManualClock
from tests.engine.test_concurrency import race
from tests.engine.test_optimistic import RACE_ROUNDS, external_work


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each instance load a command makes, as its `lock` flag."""
    made: list[bool] = []
    load_run = runs.load_run

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs.get("lock", True))
        return load_run(*args, **kwargs)

    monkeypatch.setattr(runs, "load_run", counted)
    return made


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def replicas(database_url: str, clock: ManualClock) -> Iterator[tuple[Engine, Engine]]:
    """Two engines on one database, as two replicas of a server are."""
    with (
        Engine(database_url, migrate=False, clock=clock, pool_size=4) as first,
        Engine(database_url, migrate=False, clock=clock, pool_size=4) as second,
    ):
        yield first, second


def _events(database_url: str, instance_id: Any, event: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM outbox_event WHERE instance_id = %s AND event = %s",
            (instance_id, event),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_report_runs_over_the_snapshot_its_fetch_loaded(
    engine: Engine, loads: list[bool]
) -> None:
    engine.deploy(external_work())
    instance = engine.start_latest("external-work", {"before": 1})
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    assert task["variables"] == {"before": {"type": "integer", "value": 1}}
    engine.complete_external_task(task["id"], "w1", {"done": True})
    assert loads == []
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"before": 1, "done": True}
    assert len(engine.executor.snapshots) == 0


def test_a_snapshot_made_stale_by_another_replica_writes_nothing(
    replicas: tuple[Engine, Engine], database_url: str, loads: list[bool]
) -> None:
    """The other replica's write bumps the instance's version; the report over the older
    snapshot is refused by the write and runs again under the lock, over that write."""
    first, second = replicas
    first.deploy(external_work())
    instance = first.start_latest("external-work")
    [task] = first.fetch_and_lock("w1", {"work": 60_000})
    second.extend_lock(task["id"], "w1", 120_000)
    loads.clear()
    first.complete_external_task(task["id"], "w1", {"done": True})
    assert loads == [True]
    assert instance.state is InstanceState.COMPLETED
    assert _events(database_url, instance.id, "external_task.completed") == 1
    assert _events(database_url, instance.id, "variables.updated") == 1


def test_a_report_after_the_lease_passed_to_another_worker_is_a_lease_conflict(
    replicas: tuple[Engine, Engine], clock: ManualClock, database_url: str
) -> None:
    """Worker 1's lease expires and worker 2 takes the task through the other replica. The
    fetch does not change the instance's version, so only the write's check of the task's
    worker refuses worker 1's report over its snapshot; nothing changes."""
    first, second = replicas
    first.deploy(external_work())
    instance = first.start_latest("external-work")
    [task] = first.fetch_and_lock("w1", {"work": 1_000})
    clock.advance(seconds=2)
    [taken] = second.fetch_and_lock("w2", {"work": 60_000})
    assert taken["id"] == task["id"]
    with pytest.raises(InvariantViolation) as caught:
        first.complete_external_task(task["id"], "w1", {"done": True})
    assert caught.value.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
    assert instance.state is InstanceState.ACTIVE
    assert _events(database_url, instance.id, "external_task.completed") == 0
    assert first.external_task(task["id"]).worker_id == "w2"


def test_a_refusal_over_a_snapshot_is_judged_again_on_committed_state(
    replicas: tuple[Engine, Engine], clock: ManualClock
) -> None:
    """The first replica's snapshot says worker 1 holds the task; worker 2, who took it through
    the other replica, reports through the first: the report succeeds."""
    first, second = replicas
    first.deploy(external_work())
    instance = first.start_latest("external-work")
    [task] = first.fetch_and_lock("w1", {"work": 1_000})
    clock.advance(seconds=2)
    second.fetch_and_lock("w2", {"work": 60_000})
    first.complete_external_task(task["id"], "w2", {"done": True})
    assert instance.state is InstanceState.COMPLETED
    assert instance.variables() == {"done": True}


@pytest.mark.parametrize("round_", range(RACE_ROUNDS))
def test_a_late_report_racing_a_new_fetch_never_completes_a_task_the_fetch_locked(
    replicas: tuple[Engine, Engine], clock: ManualClock, round_: int
) -> None:
    """After worker 1's lease expired, its report (through a replica without its snapshot)
    races worker 2's fetch: either the report completes the task and the fetch finds nothing,
    or the fetch locks it and the report is a lease conflict."""
    first, second = replicas
    first.deploy(external_work())
    instance = first.start_latest("external-work")
    [task] = first.fetch_and_lock("w1", {"work": 1_000})
    clock.advance(seconds=2)
    report, fetched = race(
        2,
        lambda i: (
            second.complete_external_task(task["id"], "w1")
            if i == 0
            else second.fetch_and_lock("w2", {"work": 60_000})
        ),
    )
    if isinstance(report, Exception):
        assert isinstance(report, InvariantViolation), report
        assert report.kind is InvariantViolationKind.EXTERNAL_TASK_LEASE_CONFLICT
        assert [t["id"] for t in fetched] == [task["id"]]
        assert instance.state is InstanceState.ACTIVE
    else:
        assert fetched == []
        assert instance.state is InstanceState.COMPLETED


def test_an_unexpected_error_over_a_snapshot_propagates_and_writes_nothing(
    engine: Engine, loads: list[bool], database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a refusal is judged again under the lock: a defect met while a report runs over its
    snapshot reaches the caller, and the report is not silently run a second time."""
    engine.deploy(external_work())
    instance = engine.start_latest("external-work")
    [task] = engine.fetch_and_lock("w1", {"work": 60_000})
    checked = common.require_running
    calls: list[bool] = []

    def defect_once(run: InstanceRun) -> None:
        calls.append(True)
        if len(calls) == 1:
            raise RuntimeError("a defect, not a refusal")
        checked(run)

    monkeypatch.setattr(external_tasks, "require_running", defect_once)
    with pytest.raises(RuntimeError, match="a defect, not a refusal"):
        engine.complete_external_task(task["id"], "w1", {"done": True})
    assert (calls, loads) == ([True], [])
    assert instance.state is InstanceState.ACTIVE
    assert _events(database_url, instance.id, "external_task.completed") == 0
    assert engine.external_task(task["id"]).worker_id == "w1"


def test_a_refusal_over_a_snapshot_is_judged_again_under_the_lock(
    replicas: tuple[Engine, Engine], clock: ManualClock, loads: list[bool], database_url: str
) -> None:
    """The snapshot's refusal (worker 2 does not hold the task, says worker 1's fetch) is not the
    answer: the report runs again over the locked, committed instance, where worker 2 holds it."""
    first, second = replicas
    first.deploy(external_work())
    instance = first.start_latest("external-work")
    [task] = first.fetch_and_lock("w1", {"work": 1_000})
    clock.advance(seconds=2)
    second.fetch_and_lock("w2", {"work": 60_000})
    loads.clear()
    first.complete_external_task(task["id"], "w2", {"done": True})
    assert loads == [True]
    assert instance.state is InstanceState.COMPLETED
    assert _events(database_url, instance.id, "external_task.completed") == 1
