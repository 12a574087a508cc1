"""Database outages: telling one from a failed command, failing fast while it lasts, and noticing
when it ends.

Each engine has one `Availability`. Every failure that means the database cannot be reached (a
connection refused or lost, a server shutting down, no pooled connection in time) marks it down
and reaches the caller as `DatabaseUnavailable`, never as a hang. While it is down a request does
not wait for the pool: at most one connection attempt (`probe`) every `probe_interval` seconds
looks whether it is back, and every other request fails at once. The first success marks it up.
`engine.observe.metrics.DATABASE_UP` follows what this process saw last.

Pooled connections are looked at before each use (`PoolCheck`): an idle connection whose server
went away has a readable socket (end of file, or the FATAL message of a terminated backend), and
only then does the check cost a round trip. A broken one is discarded with every other idle one
that is broken too, so a request after an outage never meets a row of dead connections.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from engine.errors import DatabaseUnavailable
from engine.observe import metrics

log = logging.getLogger("interlock.database")

# admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections; class 08 is
# connection_exception.
_OUTAGE_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "53300"})
UNAVAILABLE_MESSAGE = "the database is unavailable; try again shortly"
# How long a request waits for a pooled connection before it looks whether the database is down.
_WAIT_SLICE = 0.5


def is_database_outage(exc: BaseException) -> bool:
    """A failure of the database rather than of the work: the server cannot be reached, went
    away or is shutting down. A statement or lock timeout, a serialization failure or a
    deadlock is the work's own failure, not an outage."""
    if isinstance(exc, DatabaseUnavailable | PoolTimeout | _Unreachable | psycopg.InterfaceError):
        return True
    if isinstance(exc, psycopg.OperationalError):
        state = exc.sqlstate
        return state is None or state.startswith("08") or state in _OUTAGE_SQLSTATES
    return False


class _Unreachable(BaseException):
    """Raised by `PoolCheck` out of the pool's getconn, whose retry loop catches Exception: the
    connection it looked at is broken and the server refuses new ones, so the request ends now
    instead of waiting for the pool's timeout. `Availability.translating` turns it into
    DatabaseUnavailable; it never leaves this module's context managers."""


class Availability:
    """Whether this process can reach the database, as its last attempts found."""

    def __init__(
        self, probe: Callable[[], None], pool_timeout: float = 5.0, probe_interval: float = 0.5
    ) -> None:
        self._probe = probe
        self.pool_timeout = pool_timeout
        self.probe_interval = probe_interval
        self._down_since: float | None = None
        self._last_probe = float("-inf")
        self._probe_lock = threading.Lock()

    @property
    def up(self) -> bool:
        return self._down_since is None

    def mark_down(self, reason: object) -> None:
        if self._down_since is None:
            # The next request looks at once: one lost connection (a terminated backend) need
            # not mean the server is gone.
            self._down_since = time.monotonic()
            self._last_probe = float("-inf")
            metrics.DATABASE_UP.set(0)
            log.warning("the database is unavailable: %s", reason)

    def mark_up(self) -> None:
        since = self._down_since
        if since is not None:
            self._down_since = None
            metrics.DATABASE_UP.set(1)
            log.warning("the database answers again after %.1fs", time.monotonic() - since)

    def unavailable(self) -> DatabaseUnavailable:
        return DatabaseUnavailable(UNAVAILABLE_MESSAGE)

    def admit(self) -> None:
        """Return when the database may be tried: it is up, or a probe found it back. Raise
        DatabaseUnavailable at once otherwise."""
        if self._down_since is None:
            return
        now = time.monotonic()
        if now - self._last_probe < self.probe_interval:
            raise self.unavailable()
        if not self._probe_lock.acquire(blocking=False):
            raise self.unavailable()  # another request is looking right now
        try:
            self._last_probe = now
            try:
                self._probe()
            except psycopg.Error as exc:
                raise self.unavailable() from exc
            self.mark_up()
        finally:
            self._probe_lock.release()

    @contextmanager
    def translating(self) -> Iterator[None]:
        """Around work with the database: an outage inside marks it down and leaves as
        DatabaseUnavailable; anything else passes unchanged."""
        try:
            yield
        except _Unreachable as exc:
            self.mark_down(exc.__cause__ or "no connection")
            raise self.unavailable() from exc.__cause__
        except Exception as exc:
            if not is_database_outage(exc):
                raise
            self.mark_down(exc)
            if isinstance(exc, DatabaseUnavailable):
                raise
            raise self.unavailable() from exc

    @contextmanager
    def connection(self, pool: ConnectionPool[Any]) -> Iterator[psycopg.Connection[Any]]:
        """A connection of `pool`, failing fast while the database is down."""
        self.admit()
        with self.translating(), self.pooled(pool) as conn:
            yield conn
        self.mark_up()

    @contextmanager
    def pooled(self, pool: ConnectionPool[Any]) -> Iterator[psycopg.Connection[Any]]:
        """`pool.connection()`, waiting `pool_timeout` seconds at most, and giving up as soon
        as the database is found down meanwhile (by anyone: a waiting request would otherwise
        wait its whole timeout for connections that cannot come)."""
        deadline = time.monotonic() + self.pool_timeout
        with ExitStack() as stack:
            while True:
                remaining = deadline - time.monotonic()
                wait = max(0.001, min(_WAIT_SLICE, remaining))
                try:
                    conn = stack.enter_context(pool.connection(timeout=wait))
                    break
                except PoolTimeout:
                    if not self.up or remaining <= _WAIT_SLICE:
                        raise
            yield conn


class PoolCheck:
    """The `check` of an engine's pools (see the module docstring). Set `pool` once the pool
    exists."""

    def __init__(self, availability: Availability, probe: Callable[[], None]) -> None:
        self.availability = availability
        self.probe = probe
        self.pool: ConnectionPool[Any] | None = None

    def __call__(self, conn: psycopg.Connection[Any]) -> None:
        if conn.closed:
            raise psycopg.OperationalError("the connection is closed")
        if not _readable(conn.fileno()):
            return
        try:
            ConnectionPool.check_connection(conn)
        except psycopg.Error as exc:
            try:
                self.probe()
            except psycopg.Error:
                raise _Unreachable() from exc
            if self.pool is not None:
                self.pool.check()  # the others that broke with this one go too
            raise


def _readable(fd: int) -> bool:
    """Whether `fd` has something to read (or is closed) right now, without waiting. poll()
    where there is one: select() refuses descriptors above FD_SETSIZE (1024), which a busy
    server reaches."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable)
