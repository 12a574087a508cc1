"""Database fixtures shared by the whole suite.

One PostgreSQL server per session (`DATABASE_URL`'s, or an embedded one in a temporary folder), one
template database migrated once, and a fresh copy of it for every test that asks for
`database_url`: `CREATE DATABASE ... TEMPLATE` takes a fraction of a second (made ahead, while
the previous test runs), a migration much longer.
"""

from __future__ import annotations

import os
import queue
import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from playwright.sync_api import ViewportSize
from psycopg import sql

from bench.serving import CHROMIUM, CHROMIUM_ARGS
from engine.db import migrate
from engine.db.database import Database, connect_url_for, normalize_url
from engine.scripting import hosts
from engine.scripting.hosts import HostPool
from tests.oidc_provider import oidc_provider as oidc_provider  # the OpenID provider fixture

# The template's name is the session's own (and, under pytest-xdist, the worker's own): two
# sessions, or two workers, given one `DATABASE_URL` server must not migrate, copy or drop each
# other's template.
TEMPLATE_DATABASE = f"interlock_template_{uuid.uuid4().hex[:12]}"

# The history cleanup's daily window follows the wall clock: left at its default, servers and
# executors the suite starts would schedule (and, inside the window, run) a cleanup job beside
# the jobs a test counts, depending on the time of day. Tests of the window set their own.
os.environ.setdefault("INTERLOCK_CLEANUP_WINDOW", "off")
# Test webhook receivers listen on loopback, which deliveries may reach only when allowed
# (engine/webhooks/urls.py). Tests of the refusal remove this.
os.environ.setdefault("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")

AdminConnection = psycopg.Connection[tuple[Any, ...]]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Give this session a base folder of its own, removed when the session ends.

    By default every session of a user keeps its files in one `pytest-of-<user>` folder in the
    machine's temporary folder, and each session, as it starts, makes that folder private to the
    user again and prunes older sessions' folders in it. Run as root, the embedded server runs
    as a user of its own, which then can no longer reach its files: a session started beside
    another broke the other's database. A folder outside it is no other session's business.
    `--basetemp` still chooses the folder (and keeps it). tests/integration/
    test_concurrent_sessions.py runs two sessions side by side.
    """
    if config.option.basetemp is not None:
        return
    root = os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()
    basetemp = tempfile.mkdtemp(prefix="pytest-interlock-", dir=root)
    config.option.basetemp = basetemp
    config.add_cleanup(lambda: shutil.rmtree(basetemp, ignore_errors=True))


def _create_database(admin: AdminConnection, name: str, template: str | None = None) -> None:
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    admin.execute(statement)


def _drop_database(admin: AdminConnection, name: str) -> None:
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """libpq URL of a database on the session's server that fixtures may use to create others.

    With `DATABASE_URL` set that server is used (its role needs CREATEDB); otherwise an embedded
    server runs in a temporary folder for the session.
    """
    external = os.environ.get("DATABASE_URL")
    if external:
        yield normalize_url(external)
        return
    home: Path = tmp_path_factory.mktemp("pg")
    with Database.open_embedded(home) as db:
        admin_url = connect_url_for(db.url, "postgres")
        with psycopg.connect(admin_url, autocommit=True) as conn:
            # A throwaway server: durability across an OS crash buys nothing and costs every commit.
            conn.execute("ALTER SYSTEM SET fsync = off")
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("ALTER SYSTEM SET full_page_writes = off")
            conn.execute("SELECT pg_reload_conf()")
        yield admin_url


@pytest.fixture(scope="session")
def admin_connection(pg_server: str) -> Iterator[AdminConnection]:
    """An autocommit connection to `pg_server`, for creating and dropping databases."""
    with psycopg.connect(pg_server, autocommit=True) as conn:
        yield conn


@pytest.fixture(scope="session")
def template_database(pg_server: str, admin_connection: AdminConnection) -> Iterator[str]:
    """Name of a database migrated to head once per session; tests get copies of it."""
    _drop_database(admin_connection, TEMPLATE_DATABASE)
    _create_database(admin_connection, TEMPLATE_DATABASE)
    migrate.upgrade(connect_url_for(pg_server, TEMPLATE_DATABASE))
    yield TEMPLATE_DATABASE
    _drop_database(admin_connection, TEMPLATE_DATABASE)


class _Copies:
    """Fresh copies of the template, made ahead on a thread with a connection of its own: a copy
    takes longer than many tests, so the next one is made while the current test runs."""

    AHEAD = 2

    def __init__(self, pg_server: str, template: str) -> None:
        self.pg_server, self.template = pg_server, template
        self.ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=self.AHEAD)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._make, name="database-copies", daemon=True)
        self.thread.start()

    def _make(self) -> None:
        try:
            with psycopg.connect(self.pg_server, autocommit=True) as conn:
                while not self.stopping.is_set():
                    name = f"test_{uuid.uuid4().hex[:12]}"
                    _create_database(conn, name, template=self.template)
                    while True:
                        try:
                            self.ready.put(name, timeout=0.2)
                            break
                        except queue.Full:
                            if self.stopping.is_set():
                                _drop_database(conn, name)
                                return
        except BaseException as exc:  # the next test that asks fails with it
            self.ready.put(exc)

    def take(self) -> str:
        made = self.ready.get(timeout=120)
        if isinstance(made, BaseException):
            raise made
        return made

    def close(self, admin: AdminConnection) -> None:
        self.stopping.set()
        self.thread.join(timeout=60)
        while not self.ready.empty():
            made = self.ready.get_nowait()
            if isinstance(made, str):
                _drop_database(admin, made)


@pytest.fixture(scope="session")
def template_copies(
    pg_server: str, admin_connection: AdminConnection, template_database: str
) -> Iterator[_Copies]:
    copies = _Copies(pg_server, template_database)
    yield copies
    copies.close(admin_connection)


@contextmanager
def _fresh_database(pg_server: str, admin: AdminConnection, copies: _Copies) -> Iterator[str]:
    name = copies.take()
    yield connect_url_for(pg_server, name)
    _drop_database(admin, name)


@pytest.fixture
def database_url(
    pg_server: str, admin_connection: AdminConnection, template_copies: _Copies
) -> Iterator[str]:
    """libpq URL of a fresh, fully migrated database of this test's own (usable by subprocesses)."""
    with _fresh_database(pg_server, admin_connection, template_copies) as url:
        yield url


@pytest.fixture(scope="module")
def module_database_url(
    pg_server: str, admin_connection: AdminConnection, template_copies: _Copies
) -> Iterator[str]:
    """A fresh, fully migrated database shared by one module's tests: the rounds of a race,
    each over instances of its own, need no database each."""
    with _fresh_database(pg_server, admin_connection, template_copies) as url:
        yield url


@pytest.fixture
def empty_database_url(pg_server: str, admin_connection: AdminConnection) -> Iterator[str]:
    """libpq URL of a fresh database with no schema at all (for migration tests)."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    _create_database(admin_connection, name)
    yield connect_url_for(pg_server, name)
    _drop_database(admin_connection, name)


@pytest.fixture
def server(database_url: str) -> Iterator[Any]:
    """A real server on 127.0.0.1 over a fresh database, with a job executor running."""
    from tests.server import live_server

    with live_server(database_url) as running:
        yield running


@pytest.fixture
def one_script_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[HostPool]:
    """A pool of one script process for this test alone: every script of the test runs in the
    same process, one after another, as scripts of unrelated instances may."""
    pool = HostPool(1)
    monkeypatch.setattr(hosts, "_POOL", pool)
    monkeypatch.setattr(hosts, "_POOL_PID", os.getpid())
    yield pool
    pool.close()


# Playwright's `browser` fixture, for every test that drives Chromium: Debian's Chromium, one
# per session (a test that started its own Playwright beside it would find the session's
# running in its thread and be refused).
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is missing at {CHROMIUM}: install Debian's chromium (make chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": VIEWPORT}
