"""Instance snapshots a fetch-and-lock loaded, kept for the report that usually follows.

A fetch-and-lock loads each locked task's instance in the same statement (it costs a few index
lookups there, a round trip of its own later). The worker's report on that task takes the
snapshot instead of loading again, and runs optimistically over it (see engine/core/executor.py):
the write applies only if the instance's version and the task's worker are still the ones loaded.
A snapshot is therefore never trusted, only tried: a stale one costs one refused write and the
report runs again the ordinary way. Each snapshot is used at most once, and the cache is bounded,
so a worker that never reports, or reports through another replica, costs nothing but an entry
that ages out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime
from uuid import UUID

from engine.core.runtime import InstanceRun


class SnapshotCache:
    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._runs: OrderedDict[UUID, InstanceRun] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, task_id: UUID, run: InstanceRun) -> None:
        """Keep `run`, loaded by the fetch that locked `task_id`, for the task's next report."""
        with self._lock:
            self._runs[task_id] = run
            self._runs.move_to_end(task_id)
            while len(self._runs) > self.capacity:
                self._runs.popitem(last=False)

    def take(self, task_id: UUID, now: datetime) -> InstanceRun | None:
        """The snapshot for a report on `task_id`, as of `now`, removed from the cache."""
        with self._lock:
            run = self._runs.pop(task_id, None)
        if run is not None:
            run.now = now
        return run

    def __len__(self) -> int:
        return len(self._runs)
