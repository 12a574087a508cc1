"""Tell listeners what a command changed after it committed, off the command's path.

A NOTIFY inside a transaction makes its commit wait for a database-wide lock that is held through
the commit's flush, so notifying commands commit one at a time. The engine's connections therefore
skip the notify triggers (the session setting `interlock.notify = after_commit`); a command names
the channels its changes concern (new outbox rows, work that became available) and the executor
announces them after the commit. One thread per engine folds the announcements made meanwhile
into one NOTIFY per channel, in a transaction of its own that does not wait for the flush, and
sends at most one such transaction every `min_interval` seconds: a lone commit is announced at
once, a busy engine's commits are announced together (each NOTIFY is a transaction, and under load
they would cost nearly as much as the commands they announce).

Listeners lose nothing if an announcement never comes (the process died between the commit and
the NOTIFY): they poll as well. Writers other than the engine (psql, scripts) keep the trigger.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import psycopg

log = logging.getLogger("engine.announcer")  # the name operators' log settings know

# Set on every pooled connection of the engine: the executor announces what its commands changed.
QUIET_TRIGGERS = "SET interlock.notify = after_commit"


class Announcer:
    def __init__(
        self,
        url: str,
        min_interval: float = 0.005,
        connect_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self._url = url
        self._connect_kwargs = dict(connect_kwargs or {})
        self._min_interval = min_interval
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def announce(self, channel: str) -> None:
        """NOTIFY `channel` soon; announcements made before it goes out are folded into one."""
        with self._lock:
            self._pending.add(channel)
            if self._thread is None and not self._stopped.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="interlock-announcer", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Send what is pending, then stop."""
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        last_sent = float("-inf")
        while True:
            self._wake.wait(0.5)
            pause = last_sent + self._min_interval - time.monotonic()
            if pause > 0 and not self._stopped.is_set():
                time.sleep(pause)  # what is announced meanwhile goes out with this NOTIFY
            self._wake.clear()
            with self._lock:
                channels, self._pending = sorted(self._pending), set()
            if channels:
                try:
                    if conn is None or conn.closed:
                        conn = psycopg.connect(self._url, autocommit=True, **self._connect_kwargs)
                        conn.execute("SET synchronous_commit = off")
                    conn.execute(
                        "SELECT pg_notify(c, '') FROM unnest(%s::text[]) AS c", (channels,)
                    )
                    last_sent = time.monotonic()
                except psycopg.Error:
                    log.warning("could not announce %s; listeners will poll", channels)
                    if conn is not None:
                        conn.close()
                    conn = None
            if self._stopped.is_set():
                break
        if conn is not None:
            conn.close()
