"""One LISTEN connection per engine that wakes waiting threads when the database says so.

Waiters read a channel's generation before they look for work, then wait for it to change: a
notification that arrives between the look and the wait is never missed. The connection starts on
first use; if it drops it is reopened and every waiter is woken to look again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import psycopg

from engine.schema import EXTERNAL_TASK_CHANNEL, JOB_CHANNEL, OUTBOX_CHANNEL

CHANNELS = (OUTBOX_CHANNEL, JOB_CHANNEL, EXTERNAL_TASK_CHANNEL)


class Notifier:
    def __init__(self, url: str, connect_kwargs: Mapping[str, Any] | None = None) -> None:
        self._url = url
        self._connect_kwargs = dict(connect_kwargs or {})
        self._condition = threading.Condition()
        self._generations = dict.fromkeys(CHANNELS, 0)
        self._thread: threading.Thread | None = None
        self._listening = threading.Event()
        self._stopped = threading.Event()

    def generation(self, channel: str) -> int:
        self._ensure_started()
        with self._condition:
            return self._generations[channel]

    def wait(self, channel: str, timeout: float, since: int | None = None) -> bool:
        """Block until `channel` is notified after generation `since` (default: now) or
        `timeout` seconds pass. True when notified."""
        seen = self.generation(channel) if since is None else since
        deadline = time.monotonic() + timeout
        with self._condition:
            while self._generations[channel] == seen:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopped.is_set():
                    return False
                self._condition.wait(remaining)
            return True

    def close(self) -> None:
        self._stopped.set()
        with self._condition:
            self._condition.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _ensure_started(self) -> None:
        if self._thread is not None:
            return
        with self._condition:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._listen, name="interlock-notifier", daemon=True
                )
                self._thread.start()
        self._listening.wait(timeout=10)

    def _listen(self) -> None:
        failures = 0
        while not self._stopped.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, **self._connect_kwargs) as conn:
                    for channel in CHANNELS:
                        conn.execute(f"LISTEN {channel}")
                    self._bump(CHANNELS)  # anything may have happened while not listening
                    self._listening.set()
                    failures = 0
                    while not self._stopped.is_set():
                        for notice in conn.notifies(timeout=0.5):
                            self._bump((notice.channel,))
            except psycopg.Error:
                # The database went away: look again soon, then less often (2 s at most),
                # so that listening resumes within moments of its return.
                self._listening.set()
                failures += 1
                self._stopped.wait(min(2.0, 0.2 * failures))

    def _bump(self, channels: tuple[str, ...]) -> None:
        with self._condition:
            for channel in channels:
                if channel in self._generations:
                    self._generations[channel] += 1
            self._condition.notify_all()
