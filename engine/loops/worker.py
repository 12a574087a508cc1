"""An external-task worker in Python, over the `Engine` API.

    worker = Worker(engine, max_tasks=10)

    @worker.topic("charge-card", variables=["amount"])
    def charge(task: Task) -> dict[str, Any]:
        receipt = payments.charge(task.variables["amount"])   # outside any transaction
        return {"receipt": receipt}

    worker.run_forever()

A handler's outcome is reported back as a command: returning completes the task with the
returned variables; raising `BpmnError` throws a BPMN error at the task; raising
`ExternalTaskFailure` fails it with the retries it says; raising anything else fails it with one
retry fewer than the task had (`default_retries` the first time). Reports about a task this worker
no longer holds (its lock expired and another worker took it, or it was retired) are rejected by
the engine and logged here. Work is at least once: make handlers idempotent.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from engine.commands.external_tasks import FetchAndLock, TopicRequest
from engine.db.outage import is_database_outage
from engine.errors import BpmnError, DatabaseUnavailable, InterlockError
from engine.language.variables import from_row
from engine.loops import fetching
from engine.loops.jobs import default_owner

if TYPE_CHECKING:
    from engine.api import Engine

log = logging.getLogger("engine.worker")  # the name operators' log settings know

_MAX_ERROR_BACKOFF_SECONDS = 30.0


class ExternalTaskFailure(Exception):
    """Raise from a handler to fail the task with explicit `retries` (0 opens an incident) and a
    wait of `retry_timeout_ms` before it can be fetched again."""

    def __init__(
        self,
        message: str,
        details: str | None = None,
        retries: int = 0,
        retry_timeout_ms: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.retries = retries
        self.retry_timeout_ms = retry_timeout_ms


@dataclass
class Task:
    """A locked external task as a handler sees it. `variables` holds the requested variables as
    Python values (dates as aware datetimes)."""

    id: str
    topic: str
    instance_id: str
    business_key: str | None
    variables: dict[str, Any]
    retries: int | None
    worker_id: str
    node_id: str
    definition_id: str
    definition_key: str
    lock_expires_at: datetime | None
    error_message: str | None
    priority: int
    engine: Engine = field(repr=False, compare=False)

    @classmethod
    def from_fetched(cls, fetched: Mapping[str, Any], engine: Engine) -> Task:
        expires = fetched.get("lock_expires_at")
        return cls(
            id=fetched["id"],
            topic=fetched["topic"],
            instance_id=fetched["instance_id"],
            business_key=fetched.get("business_key"),
            variables={
                name: from_row(typed["type"], typed["value"]).value
                for name, typed in fetched.get("variables", {}).items()
            },
            retries=fetched.get("retries"),
            worker_id=fetched["worker_id"],
            node_id=fetched["node_id"],
            definition_id=fetched["definition_id"],
            definition_key=fetched["definition_key"],
            lock_expires_at=datetime.fromisoformat(expires) if expires else None,
            error_message=fetched.get("error_message"),
            priority=fetched.get("priority", 0),
            engine=engine,
        )

    def extend_lock(self, ms: int) -> None:
        """Hold the task `ms` milliseconds from now (for a handler that needs longer)."""
        self.engine.extend_lock(self.id, self.worker_id, ms)


TaskHandler = Callable[[Task], Mapping[str, Any] | None]


@dataclass(frozen=True)
class _Subscription:
    topic: str
    handler: TaskHandler
    lock_ms: int | None
    variables: tuple[str, ...] | None


class Worker:
    """Fetches and locks tasks of its topics, runs their handlers outside any transaction, and
    reports each outcome. One worker handles its tasks one after another in the thread that
    runs it; run several (threads or processes) for parallelism."""

    # First wait after a failure of the loop itself (database down); doubles up to 30 s.
    error_backoff_seconds: float = 0.5

    def __init__(
        self,
        engine: Engine,
        worker_id: str | None = None,
        *,
        max_tasks: int = 10,
        lock_ms: int = 30_000,
        long_poll_seconds: float = 20.0,
        default_retries: int = 3,
        retry_timeout_ms: int = 1_000,
    ) -> None:
        self.engine = engine
        self.worker_id = worker_id or default_owner()
        self.max_tasks = max_tasks
        self.lock_ms = lock_ms
        self.long_poll_seconds = long_poll_seconds
        self.default_retries = default_retries
        self.retry_timeout_ms = retry_timeout_ms
        self._subscriptions: dict[str, _Subscription] = {}
        self._stopping = threading.Event()
        self._loop_done = threading.Event()
        self._loop_done.set()
        self._loop_thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"Worker(worker_id={self.worker_id!r}, topics={sorted(self._subscriptions)})"

    @property
    def topics(self) -> list[str]:
        return sorted(self._subscriptions)

    def topic(
        self, name: str, *, lock_ms: int | None = None, variables: list[str] | None = None
    ) -> Callable[[TaskHandler], TaskHandler]:
        """Decorator: handle tasks of topic `name`, fetching only `variables` (None: all)."""
        if not name:
            raise ValueError("a topic needs a non-empty name")
        if name in self._subscriptions:
            raise ValueError(f"topic '{name}' already has a handler")
        if lock_ms is not None and lock_ms <= 0:
            raise ValueError("lock_ms must be positive")

        def register(handler: TaskHandler) -> TaskHandler:
            self._subscriptions[name] = _Subscription(
                name, handler, lock_ms, tuple(variables) if variables is not None else None
            )
            return handler

        return register

    # -- one round --------------------------------------------------------------------------------

    def run_once(self) -> int:
        """Fetch and lock up to `max_tasks` tasks, waiting up to `long_poll_seconds` for some,
        and handle each; the number handled. Tasks fetched are handled even when a stop is
        requested meanwhile: they are in hand."""
        handled = 0
        for fetched in self._fetch():
            self._handle(Task.from_fetched(fetched, self.engine))
            handled += 1
        return handled

    def _requests(self) -> list[TopicRequest]:
        return [
            TopicRequest(s.topic, s.lock_ms or self.lock_ms, s.variables)
            for s in self._subscriptions.values()
        ]

    def _fetch(self) -> list[dict[str, Any]]:
        if not self._subscriptions or self._stopping.is_set():
            return []
        command = FetchAndLock(self.worker_id, self.max_tasks, tuple(self._requests()))
        return fetching.fetch_and_lock(
            self.engine, command, self.long_poll_seconds, stopping=self._stopping
        )

    def _handle(self, task: Task) -> None:
        subscription = self._subscriptions.get(task.topic)
        if subscription is None:  # pragma: no cover - only subscribed topics are fetched
            return
        engine, worker_id = self.engine, self.worker_id
        report: Callable[[], object]
        try:
            returned = subscription.handler(task)
            if returned is not None and not isinstance(returned, Mapping):
                raise TypeError(
                    f"a handler returns a mapping of variables or None, not "
                    f"{type(returned).__name__}"
                )
        except BpmnError as error:
            outcome = "bpmn-error"
            report = partial(
                engine.external_task_bpmn_error, task.id, worker_id, error.code, error.message
            )
        except ExternalTaskFailure as failure:
            outcome = "failed"
            report = partial(
                engine.fail_external_task,
                task.id,
                worker_id,
                failure.message,
                details=failure.details,
                retries=failure.retries,
                retry_timeout_ms=failure.retry_timeout_ms,
            )
        except Exception as exc:
            retries = task.retries - 1 if task.retries is not None else self.default_retries
            outcome = "failed"
            report = partial(
                engine.fail_external_task,
                task.id,
                worker_id,
                f"{type(exc).__name__}: {exc}",
                details=traceback.format_exc(),
                retries=max(0, retries),
                retry_timeout_ms=self.retry_timeout_ms,
            )
        else:
            outcome = "completed"
            report = partial(
                engine.complete_external_task, task.id, worker_id, dict(returned or {})
            )
        self._report(task, outcome, report)

    def _report(self, task: Task, outcome: str, send: Callable[[], object]) -> None:
        """Send the report. A rejected one (the lease was lost, the task retired) is logged:
        the engine has already made sure it changed nothing. While the database is down the
        report is sent again, every 2 s at most, until the task's lock expires: the work done
        is not thrown away for an outage shorter than the lock."""
        try:
            self._send_through_outage(task, send)
        except InterlockError as error:
            log.warning(
                "worker %s: report '%s' of task %s (%s) rejected: %s",
                self.worker_id,
                outcome,
                task.id,
                task.topic,
                error.message,
            )
        else:
            log.debug("worker %s: task %s %s", self.worker_id, task.id, outcome)

    def _send_through_outage(self, task: Task, send: Callable[[], object]) -> None:
        expires = task.lock_expires_at
        failures = 0
        while True:
            try:
                send()
                return
            except DatabaseUnavailable:
                failures += 1
                if expires is None or datetime.now(expires.tzinfo) >= expires:
                    raise
                log.warning(
                    "worker %s: database unavailable; report of task %s again soon",
                    self.worker_id,
                    task.id,
                )
                self._stopping.wait(min(2.0, 0.25 * failures))

    # -- the loop ---------------------------------------------------------------------------------

    def run_forever(self) -> None:
        """Fetch and handle until `stop()`. Database outages are logged and waited out."""
        self._stopping.clear()
        self._loop_done.clear()
        self._run_loop()

    def start(self) -> threading.Thread:
        """Run the loop of `run_forever` in a daemon thread."""
        self._stopping.clear()
        self._loop_done.clear()
        thread = threading.Thread(
            target=self._run_loop, name=f"interlock-worker-{self.worker_id}", daemon=True
        )
        thread.start()
        return thread

    def _run_loop(self) -> None:
        self._loop_thread = threading.current_thread()
        failures = 0
        try:
            while not self._stopping.is_set():
                try:
                    self.run_once()
                    failures = 0
                except Exception as exc:
                    failures += 1
                    # While the database is down, look again every 2 s at most.
                    limit = 2.0 if is_database_outage(exc) else _MAX_ERROR_BACKOFF_SECONDS
                    backoff = min(limit, self.error_backoff_seconds * 2 ** min(failures - 1, 10))
                    log.exception(
                        "worker %s: round failed; again in %.1fs", self.worker_id, backoff
                    )
                    self._stopping.wait(backoff)
        finally:
            self._loop_thread = None
            self._loop_done.set()

    def stop(self, timeout: float = 30.0) -> None:
        """No new fetch; a long poll in progress ends. From another thread than the loop's,
        wait (up to `timeout` seconds) for the tasks in hand to be handled and reported."""
        self._stopping.set()
        if threading.current_thread() is not self._loop_thread:
            self._loop_done.wait(timeout)
