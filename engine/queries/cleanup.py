"""What the history cleanup is doing: its job, the run in progress and the latest runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.queries import Connection, fetch_all, query
from engine.store import jobs as job_store
from engine.store.cleanup import CLEANUP_JOB_ID, RUN_COLUMNS, CleanupRun


@dataclass(frozen=True)
class CleanupStatus:
    # The cleanup job (None: not scheduled: no window, and no run started by hand).
    job: job_store.JobInfo | None
    # The latest runs, newest first; the first is in progress when its state is Running.
    runs: list[CleanupRun] = field(default_factory=list)

    @property
    def running(self) -> CleanupRun | None:
        return self.runs[0] if self.runs and self.runs[0].finished_at is None else None

    @property
    def last_finished(self) -> CleanupRun | None:
        return next((run for run in self.runs if run.finished_at is not None), None)


@query
def status(conn: Connection, runs: int = 10) -> CleanupStatus:
    return CleanupStatus(
        job_store.get(conn, CLEANUP_JOB_ID),
        fetch_all(
            conn,
            CleanupRun,
            f"SELECT {RUN_COLUMNS} FROM history_cleanup_run ORDER BY id DESC LIMIT %s",
            (runs,),
        ),
    )
