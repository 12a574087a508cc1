"""Graceful shutdown of a server process.

On SIGTERM (or SIGINT) the server drains before it stops:

1. `Shutdown.begin()` runs every hook registered with `on_begin`, at once and in order: the job
   executor stops acquiring, event streams tell their browsers to reconnect (elsewhere), and from
   then on `draining` is true, so external-task fetches answer an empty list without locking
   anything and long polls in progress end the same way.
2. uvicorn stops accepting connections and waits for the requests in flight, up to the grace
   period (`INTERLOCK_SHUTDOWN_GRACE_SECONDS`).
3. The lifespan's shutdown waits for the jobs in hand (what is left of the grace period), stops
   the background loops and lets go of the database, embedded server included.
4. The process exits 0.

A hook is a quick call that does not wait (setting a flag, waking a loop); waiting for work in
hand belongs to the lifespan's shutdown, bounded by `remaining()`.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable
from types import FrameType

import uvicorn

log = logging.getLogger("interlock")

Hook = Callable[[], None]


class Shutdown:
    """The drain of one server process: a flag, its start time and the hooks it runs."""

    def __init__(self, grace_seconds: float) -> None:
        self.grace_seconds = grace_seconds
        self._hooks: list[Hook] = []
        self._deadline: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def draining(self) -> bool:
        return self._deadline is not None

    def remaining(self) -> float:
        """Seconds left of the grace period (all of it before the drain begins)."""
        if self._deadline is None:
            return self.grace_seconds
        return max(0.0, self._deadline - time.monotonic())

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop hooks run on (they may touch what lives on it)."""
        self._loop = loop

    def on_begin(self, hook: Hook) -> None:
        """Run `hook` when the drain begins (at once if it has)."""
        self._hooks.append(hook)
        if self.draining:
            self._run(hook)

    def begin(self) -> None:
        """Start draining (once): run the hooks. Call it on the event loop."""
        if self.draining:
            return
        self._deadline = time.monotonic() + self.grace_seconds
        log.info("shutting down: draining for up to %.0fs", self.grace_seconds)
        for hook in list(self._hooks):
            self._run(hook)

    def begin_soon(self) -> None:
        """`begin` from a signal handler: scheduled on the loop, which may be mid-step now."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.begin)
        else:
            self.begin()

    @staticmethod
    def _run(hook: Hook) -> None:
        try:
            hook()
        except Exception:
            log.exception("shutdown hook %r failed", hook)


class Server(uvicorn.Server):
    """uvicorn's server, starting the application's drain on the first SIGTERM or SIGINT."""

    def __init__(self, config: uvicorn.Config, shutdown: Shutdown) -> None:
        super().__init__(config)
        self.shutdown_drain = shutdown

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if sig in (signal.SIGTERM, signal.SIGINT):
            self.shutdown_drain.begin_soon()
