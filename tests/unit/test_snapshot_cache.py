"""The snapshot cache hands each snapshot out once, as of the report's time, and stays bounded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid4

from engine.core.runtime import InstanceRow, InstanceRun
from engine.core.snapshots import SnapshotCache
from engine.states import InstanceState

FETCHED = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def _run() -> InstanceRun:
    row = InstanceRow(uuid4(), "d:1", "d", None, InstanceState.ACTIVE, 3, FETCHED)
    return InstanceRun(instance=row, now=FETCHED)


def test_a_snapshot_is_taken_once_and_as_of_the_report() -> None:
    cache = SnapshotCache()
    task = uuid4()
    run = _run()
    cache.put(task, run)
    reported = FETCHED + timedelta(seconds=5)
    taken = cache.take(task, reported)
    assert taken is run and taken.now == reported
    assert cache.take(task, reported) is None


def test_the_oldest_snapshots_give_way_beyond_the_capacity() -> None:
    cache = SnapshotCache(capacity=3)
    tasks: list[UUID] = [uuid4() for _ in range(5)]
    for task in tasks:
        cache.put(task, _run())
    assert len(cache) == 3
    assert [cache.take(t, FETCHED) is not None for t in tasks] == [False, False, True, True, True]
