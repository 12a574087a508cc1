"""The one waiting fetch-and-lock: lock what is available, or wait for work to appear and lock it
then, up to a timeout.

One plan serves every caller; it has two faces that carry its steps out. `fetch_and_lock` blocks
the calling thread (the Python API, the worker); `fetch_and_lock_async` awaits, holding a thread
only while a statement runs (the HTTP long polls), so that any number of waiting requests hold no
threads. Either way:

- the first look runs the fetch statement itself: a fetch with no timeout is that one statement;
- the channel's generation is read before each look, so work committed between the look and the
  wait wakes the wait (see engine/loops/notifier.py);
- a wake-up runs the fetch only when a cheap read says it would lock something, and locks expiring
  and retry back-offs passing (which nobody announces) are looked for at least once a second;
- when the read said yes but another worker took the work first, the next look backs off a
  little instead of waking on its own fetch's notification in a busy loop;
- a stop (the worker's) or a client gone (the HTTP request's) ends the wait with no tasks.

A command with `roll_back_if_empty` run under an idempotency key spends the key only on a fetch
that locked tasks: an empty look rolls back and the wait goes on.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Generator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import psycopg

from engine.commands.external_tasks import FetchAndLock, NothingLocked
from engine.core.executor import Clock, Command, Idempotency, Result
from engine.loops.notifier import Notifier
from engine.observe.metrics import EXTERNAL_TASK_FETCHES
from engine.schema import EXTERNAL_TASK_CHANNEL
from engine.store import external_tasks as external_task_store

T = TypeVar("T")
R = TypeVar("R", bound=Result)
Tasks = list[dict[str, Any]]
# How a caller on an event loop runs a blocking call in a thread: the face awaits it.
RunBlocking = Callable[[Callable[[], Any]], Awaitable[Any]]

# Lock expiries and retry back-offs pass without a notification: look again at least this often.
RECHECK_SECONDS = 1.0
# How often a blocking wait looks at its stop flag, and an awaiting one at the generation.
_STOP_CHECK_SECONDS = 0.2
_POLL_SECONDS = 0.02
_MAX_MISSES = 8


class FetchingEngine(Protocol):
    """What the fetch needs of an engine (engine.api.Engine is one): its command runner, a
    pooled read connection, its clock and its notifier."""

    notifier: Notifier
    clock: Clock

    def run(self, command: Command[R], idempotency_key: str | Idempotency | None = None) -> R: ...

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]: ...


# -- the plan: what to do next, whatever the face ------------------------------------------------


class _Fetch:
    """Run the fetch; answer: the tasks it locked (maybe none)."""


class _Fetchable:
    """Would a fetch lock anything now? Answer: a bool."""


class _Generation:
    """Answer: the external-task channel's generation."""


@dataclass(frozen=True)
class _Changed:
    """Wait until the channel moves past generation `seen`, or `seconds` pass."""

    seen: int
    seconds: float


@dataclass(frozen=True)
class _Pause:
    """Wait `seconds`, whatever happens."""

    seconds: float


FETCH, FETCHABLE, GENERATION = _Fetch(), _Fetchable(), _Generation()
_Step = _Fetch | _Fetchable | _Generation | _Changed | _Pause


def _plan(timeout: float) -> Generator[_Step, Any, Tasks]:
    """The steps of one waiting fetch, each sent its answer; returns the tasks locked."""
    deadline = time.monotonic() + timeout
    seen: int = (yield GENERATION) if timeout > 0 else 0
    tasks: Tasks = yield FETCH
    misses = 0
    while not tasks:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        if misses:
            # Work was there but another worker (or a transaction holding the rows) got it first;
            # this fetch's own notification must not start a busy loop.
            yield _Pause(min(0.01 * 2**misses, RECHECK_SECONDS, remaining))
        else:
            yield _Changed(seen, min(remaining, RECHECK_SECONDS))
        seen = yield GENERATION
        if (yield FETCHABLE):
            tasks = yield FETCH
            misses = 0 if tasks else min(misses + 1, _MAX_MISSES)
        else:
            misses = 0
    EXTERNAL_TASK_FETCHES.labels("locked" if tasks else "empty").inc()
    return tasks


class _Run:
    """One waiting fetch: its plan, and the statement each step that asks for one runs (the
    faces differ only in how they run statements and wait)."""

    def __init__(
        self,
        engine: FetchingEngine,
        command: FetchAndLock,
        timeout: float,
        idempotency_key: str | Idempotency | None,
    ) -> None:
        self.engine, self.command = engine, command
        self.key = Idempotency.of(idempotency_key, command)
        self.plan = _plan(timeout)
        self.tasks: Tasks = []

    def next(self, answer: Any) -> _Step | None:
        """The step after the one `answer` answers; None once the plan is done (see `tasks`)."""
        try:
            return self.plan.send(answer)
        except StopIteration as done:
            self.tasks = done.value
            return None

    def statement(self, step: _Step) -> Callable[[], Any] | None:
        """What `step` runs for its answer (a blocking call); None for a wait."""
        if isinstance(step, _Fetch):
            return self._fetch
        if isinstance(step, _Fetchable):
            return self._fetchable
        if isinstance(step, _Generation):
            # The first reading starts the notifier, which may wait for its connection.
            return lambda: self.engine.notifier.generation(EXTERNAL_TASK_CHANNEL)
        return None

    def _fetch(self) -> Tasks:
        try:
            return self.engine.run(self.command, self.key).tasks
        except NothingLocked:
            return []

    def _fetchable(self) -> bool:
        """Whether the fetch would lock anything now: one cheap read."""
        with self.engine.connection() as conn:
            topics = [topic.topic for topic in self.command.topics]
            return external_task_store.any_fetchable(conn, topics, self.engine.clock())


# -- the blocking face ----------------------------------------------------------------------------


def fetch_and_lock(
    engine: FetchingEngine,
    command: FetchAndLock,
    timeout: float = 0.0,
    *,
    idempotency_key: str | Idempotency | None = None,
    stopping: threading.Event | None = None,
) -> Tasks:
    """Run `command`; when it locks nothing, wait up to `timeout` seconds for work and lock it
    then. The tasks locked; none when the time ran out or `stopping` was set."""
    run = _Run(engine, command, timeout, idempotency_key)
    answer: Any = None
    while (step := run.next(answer)) is not None:
        statement = run.statement(step)
        answer = statement() if statement is not None else None
        if isinstance(step, _Changed):
            _wait_changed(engine, step, stopping)
        elif isinstance(step, _Pause):
            if stopping is not None:
                stopping.wait(step.seconds)
            else:
                time.sleep(step.seconds)
        if stopping is not None and stopping.is_set():
            run.plan.close()
            return []
    return run.tasks


def _wait_changed(engine: FetchingEngine, step: _Changed, stopping: threading.Event | None) -> None:
    deadline = time.monotonic() + step.seconds
    while stopping is None or not stopping.is_set():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        wait = remaining if stopping is None else min(remaining, _STOP_CHECK_SECONDS)
        if engine.notifier.wait(EXTERNAL_TASK_CHANNEL, wait, since=step.seen):
            return


# -- the awaiting face ----------------------------------------------------------------------------


async def _in_thread(fn: Callable[[], Any]) -> Any:
    return await asyncio.to_thread(fn)


async def fetch_and_lock_async(
    engine: FetchingEngine,
    command: FetchAndLock,
    timeout: float = 0.0,
    *,
    idempotency_key: str | Idempotency | None = None,
    gone: Callable[[], Awaitable[bool]] | None = None,
    run_blocking: RunBlocking = _in_thread,
) -> Tasks:
    """`fetch_and_lock` for an event loop: statements run through `run_blocking` (in a thread),
    waits are awaited without holding one. `gone` (a client that disconnected) is asked after
    every wait and ends the fetch with no tasks."""
    run = _Run(engine, command, timeout, idempotency_key)
    answer: Any = None
    while (step := run.next(answer)) is not None:
        statement = run.statement(step)
        answer = await run_blocking(statement) if statement is not None else None
        if isinstance(step, _Changed):
            deadline = time.monotonic() + step.seconds
            while (
                time.monotonic() < deadline
                and engine.notifier.generation(EXTERNAL_TASK_CHANNEL) == step.seen
            ):
                await asyncio.sleep(_POLL_SECONDS)
        elif isinstance(step, _Pause):
            await asyncio.sleep(step.seconds)
        if isinstance(step, _Changed | _Pause) and gone is not None and await gone():
            run.plan.close()
            return []
    return run.tasks
