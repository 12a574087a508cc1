"""Background loops: a set of daemon threads that run one loop until asked to stop, what the job
executor and the webhook dispatcher share. Stopping is cooperative: a thread looks at `stopping`
between pieces of work, so the work in hand finishes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("engine.loops")  # the name operators' log settings know


class Loops:
    """`count` daemon threads named `<name>-<n>` running `target`, for `what` (in log lines)."""

    def __init__(self, name: str, what: str) -> None:
        self.name = name
        self.what = what
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def start(self, target: Callable[[], None], count: int) -> None:
        if self.running:
            raise RuntimeError(f"{self.what} is already running")
        self.stopping.clear()
        self._threads = [
            threading.Thread(target=target, name=f"{self.name}-{n}", daemon=True)
            for n in range(count)
        ]
        for thread in self._threads:
            thread.start()

    def request_stop(self) -> None:
        """Ask the threads to stop after the work in hand; does not wait."""
        self.stopping.set()

    def stop(self, timeout: float) -> bool:
        """Stop and wait up to `timeout` seconds in all; whether every thread ended."""
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning("%s thread %s did not stop within %ss", self.what, thread.name, timeout)
        self._threads = [thread for thread in self._threads if thread.is_alive()]
        return not self._threads


class Looping:
    """What runs its work on `Loops` (the job executor, the webhook dispatcher): asked to stop,
    stopped, and whether it runs. `_log` is its logger, `owner` the name it goes by."""

    _loops: Loops
    _log: logging.Logger
    owner: str

    def request_stop(self) -> None:
        """Ask the threads to stop after the work in hand; does not wait."""
        self._loops.request_stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop gracefully: every thread finishes the work in hand (a dispatcher gives back the
        rest of its batch), then this returns."""
        self._loops.stop(timeout)
        self._log.info("%s %s stopped", self._loops.what, self.owner)

    @property
    def running(self) -> bool:
        return self._loops.running
