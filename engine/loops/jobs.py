"""The job executor: acquire due jobs (timers, asynchronous continuations, retries) and run each
one as its own command.

Exactly once comes from the commands, not from this loop: `AcquireJobs` locks a batch for an
owner in one statement (SKIP LOCKED, taking over expired locks), and `ExecuteJob` runs a job only
for the owner that holds its lock, under the instance lock, deleting the job with its work. An
executor that dies holding locks delays its jobs until the locks expire; another one then takes
them over.
"""

from __future__ import annotations

import gc
import logging
import os
import secrets
import socket
import time
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar
from uuid import UUID

import psycopg

from engine.commands.cleanup import ScheduleHistoryCleanup
from engine.commands.jobs import DATABASE_ERRORS, AcquireJobs, ExecuteJobs, ReleaseJobs
from engine.commands.jobs import run_job as run_job_command
from engine.core.executor import Clock, Command, Idempotency, Result
from engine.db.outage import is_database_outage
from engine.loops.notifier import Notifier
from engine.loops.threads import Looping, Loops
from engine.observe.metrics import JOBS
from engine.schema import JOB_CHANNEL
from engine.store import jobs as job_store

__all__ = ["DATABASE_ERRORS", "JobExecutor", "default_owner", "is_database_outage", "run_job"]

log = logging.getLogger("engine.jobs")  # the name operators' log settings know
T = TypeVar("T", bound=Result)


class JobEngine(Protocol):
    """What the executor needs of an engine (engine.api.Engine is one)."""

    notifier: Notifier
    clock: Clock

    def run(self, command: Command[T], idempotency_key: str | Idempotency | None = None) -> T: ...

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


# How long an acquired job stays locked for its executor (seconds; default 300): after a crash
# its jobs wait this long before another executor takes them over.
LOCK_SECONDS_ENV = "INTERLOCK_JOB_LOCK_SECONDS"
DEFAULT_LOCK_SECONDS = 300.0


def default_lock_seconds() -> float:
    """INTERLOCK_JOB_LOCK_SECONDS, else 300."""
    text = os.environ.get(LOCK_SECONDS_ENV)
    if not text:
        return DEFAULT_LOCK_SECONDS
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(f"{LOCK_SECONDS_ENV} must be a positive number of seconds, not {text}")
    return value


# How often a waiting thread looks at its stop flag.
_STOP_CHECK_SECONDS = 0.2
_MAX_ERROR_BACKOFF_SECONDS = 30.0


def run_job(engine: JobEngine, job_id: UUID, owner: str | None) -> str:
    """Run one job as `owner` (None: whoever holds it), the one way jobs run (see
    engine.commands.jobs.run_job). Returns the outcome: "executed", "failed" (the job's command
    raised and the failure was counted down), "gone", "not-owner" or "instance-not-active"."""
    return run_job_command(engine.run, job_id, owner).outcome


def _one_per_instance(instances: list[list[str]]) -> list[tuple[UUID, UUID]]:
    """The first acquired job of each instance, as (job id, instance id)."""
    first: dict[UUID, UUID] = {}
    for job_id, instance_id in instances:
        first.setdefault(UUID(instance_id), UUID(job_id))
    return [(job_id, instance_id) for instance_id, job_id in first.items()]


# Young objects a collection waits for. A batch of a few hundred jobs allocates tens of
# thousands of objects that live until its write; at the default (700) young collections run
# dozens of times per batch and scan them again each time.
_YOUNG_COLLECTION_THRESHOLD = 20_000


def _settle_garbage_collector() -> None:
    """Tune the collector for a long-running executor: freeze what exists by now (modules,
    parsed definitions, pools), so full collections no longer scan it, and collect young
    objects less often. Only ever raises the threshold the process set."""
    gc.freeze()
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, _YOUNG_COLLECTION_THRESHOLD), *older)


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class JobExecutor(Looping):
    """Runs due jobs of the engine's database in background threads (or the caller's, with
    `run_once`). Any number of executors, in any number of processes, may share a database."""

    _log = log
    # First wait after a failure of the loop itself (database down); doubles up to 30 s.
    error_backoff_seconds: float = 0.5
    # Jobs per acquisition. Timers of different instances run together, so a burst of due
    # timers costs a few transactions; other jobs run one at a time.
    batch_size: int = 200

    def __init__(
        self,
        engine: JobEngine,
        *,
        owner: str | None = None,
        batch_size: int = batch_size,
        lock_seconds: float | None = None,
        poll_interval: float = 5.0,
        threads: int = 1,
        history_cleanup: bool = False,
    ) -> None:
        """`history_cleanup`: schedule the history cleanup job in its daily window as the loop
        starts (engine/commands/cleanup.py). Every executor runs the job once it is due."""
        if batch_size < 1 or threads < 1:
            raise ValueError("batch_size and threads must be at least 1")
        if lock_seconds is None:
            lock_seconds = default_lock_seconds()
        if lock_seconds <= 0 or poll_interval <= 0:
            raise ValueError("lock_seconds and poll_interval must be positive")
        self.engine = engine
        self.owner = owner or default_owner()
        self.batch_size = batch_size
        self.lock_seconds = lock_seconds
        self.poll_interval = poll_interval
        self.threads = threads
        self.history_cleanup = history_cleanup
        self._cleanup_scheduled = False
        self._loops = Loops("interlock-jobs", "job executor")
        self._stopping = self._loops.stopping

    def __repr__(self) -> str:
        return f"JobExecutor(owner={self.owner!r})"

    # -- one batch --------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Acquire one batch of due jobs and run them; the number run.

        Timers of different instances run together in one transaction; when that fails (a
        handler raised), each runs on its own, so only the failing one counts a failure. A
        handler may thus run twice, but its database effects commit once. A stop request ends
        the batch after the job in hand and gives the rest back."""
        acquired = self.engine.run(AcquireJobs(self.owner, self.batch_size, self.lock_seconds))
        job_ids = [UUID(job_id) for job_id in acquired.job_ids]
        done = self._run_together(_one_per_instance(acquired.timers))
        rest = [job_id for job_id in job_ids if job_id not in done]
        ran = len(done)
        for index, job_id in enumerate(rest):
            if self._stopping.is_set():
                self._release(rest[index:])
                break
            outcome = run_job(self.engine, job_id, self.owner)
            JOBS.labels(outcome).inc()
            log.debug("job %s: %s", job_id, outcome)
            ran += 1
        return ran

    def _run_together(self, jobs: list[tuple[UUID, UUID]]) -> set[UUID]:
        """Run `jobs` (job id, instance id) in one command; the ids it ran, none if it failed."""
        if len(jobs) < 2 or self._stopping.is_set():
            return set()
        try:
            outcomes = self.engine.run(ExecuteJobs(tuple(jobs), self.owner)).outcomes
        except Exception as exc:
            if is_database_outage(exc):
                raise
            log.warning(
                "jobs %s failed together (%s: %s); running them one at a time",
                ", ".join(str(job_id) for job_id, _ in jobs),
                type(exc).__name__,
                exc,
            )
            return set()
        for outcome in outcomes.values():
            JOBS.labels(outcome).inc()
        return {UUID(job_id) for job_id in outcomes}

    def _release(self, job_ids: list[UUID]) -> None:
        try:
            self.engine.run(ReleaseJobs(self.owner, tuple(job_ids)))
        except DATABASE_ERRORS:
            log.warning("could not release %d jobs; their locks will expire", len(job_ids))

    # -- the loop ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Run the loop in `threads` daemon threads until `stop()`."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        _settle_garbage_collector()
        self._loops.start(self._loop, self.threads)
        log.info("job executor %s started (%d threads)", self.owner, self.threads)

    def run_forever(self, stop_timeout: float = 10.0) -> None:
        """Run until `stop()`/`request_stop()`, or until KeyboardInterrupt or SystemExit reach
        the calling thread; the jobs in hand finish either way (within `stop_timeout`)."""
        self.start()
        try:
            while not self._stopping.wait(0.5):
                pass
        finally:
            self.stop(stop_timeout)

    def _loop(self) -> None:
        failures = 0
        empty = 0
        notifier = self.engine.notifier
        while not self._stopping.is_set():
            try:
                if self.history_cleanup and not self._cleanup_scheduled:
                    self.engine.run(ScheduleHistoryCleanup())
                    self._cleanup_scheduled = True
                # Read before acquiring: a job committed after the acquisition bumps it.
                seen = notifier.generation(JOB_CHANNEL)
                ran = self.run_once()
                failures = 0
                if ran >= self.batch_size:
                    empty = 0
                    continue
                empty = empty + 1 if ran == 0 else 0
                self._idle(seen, empty)
            except Exception as exc:
                failures += 1
                # While the database is down, look again every 2 s at most: jobs resume within
                # moments of its return.
                limit = 2.0 if is_database_outage(exc) else _MAX_ERROR_BACKOFF_SECONDS
                backoff = min(limit, self.error_backoff_seconds * 2 ** min(failures - 1, 10))
                log.exception("job executor %s: loop failed; again in %.1fs", self.owner, backoff)
                self._stopping.wait(backoff)

    def _idle(self, seen: int, empty: int) -> None:
        """Sleep until a job may be acquirable: woken by the database, by the next due time, by
        `poll_interval` (a safety net) or by a stop request. Wake-ups that bring nothing due now
        (a timer for later, a job another executor took first) go back to sleep without
        acquiring. `empty` counts the acquisitions in a row that found nothing."""
        notifier = self.engine.notifier
        deadline = time.monotonic() + self.poll_interval
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            delay = self._seconds_until_acquirable(remaining)
            if delay <= 0:
                if empty > 1:
                    # Due jobs the acquisition skipped: rows another transaction holds for a
                    # moment. Give it that moment instead of spinning.
                    self._stopping.wait(min(0.01 * empty, 0.5))
                return
            if not self._wait(seen, min(delay, remaining)):
                return
            seen = notifier.generation(JOB_CHANNEL)

    def _seconds_until_acquirable(self, horizon: float) -> float:
        now = self.engine.clock()
        with self.engine.connection() as conn:
            first = job_store.next_acquirable(conn, now, horizon)
        if first is None:
            return horizon
        return (first - now).total_seconds()

    def _wait(self, seen: int, timeout: float) -> bool:
        """Wait for a notification after generation `seen`; False on timeout or stop."""
        deadline = time.monotonic() + timeout
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            step = min(remaining, _STOP_CHECK_SECONDS)
            if self.engine.notifier.wait(JOB_CHANNEL, step, since=seen):
                return True
        return False
