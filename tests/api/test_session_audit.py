"""Logging in and out are commands like every other change, audited as the user's own console
actions: a log-in leaves one entry naming the new session, a log-out one entry of the same kind
as an admin ending that session (the same command, `EndSessions`); a failed log-in changes
nothing and leaves none. Marking a session seen is a command too, run only when the last mark is
old. The first start's admin is created by a command, once."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from app.main import StartupRefused, ensure_credentials
from app.settings import Settings
from engine.api import Engine
from engine.commands.accounts import CreateFirstAdmin, CreateUser
from engine.identity.accounts import Principal, Role
from engine.queries import accounts as account_reads
from tests.api.test_metrics import scrape, value
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer, console_login

# (user, channel, operation, entity, entity id, property, details) of an entry.
Entry = tuple[str, str, str, str, str, str, dict[str, Any]]


def entry_ids(engine: Engine) -> set[UUID]:
    with engine.connection() as conn:
        return {row[0] for row in conn.execute("SELECT id FROM audit_entry").fetchall()}


def new_entries(engine: Engine, before: set[UUID]) -> list[Entry]:
    with engine.connection() as conn:
        rows = conn.execute(
            "SELECT id, user_id, channel, operation, entity, entity_id, property, details "
            "FROM audit_entry ORDER BY at, id"
        ).fetchall()
    return [tuple(row[1:]) for row in rows if row[0] not in before]


def session_id(engine: Engine, cookie: str) -> str:
    with engine.connection() as conn:
        row = conn.execute(
            "SELECT id FROM console_session WHERE token_hash = %s",
            (hashlib.sha256(cookie.encode()).hexdigest(),),
        ).fetchone()
    assert row is not None
    return str(row[0])


def new_user(engine: Engine) -> str:
    name = f"u-{uuid.uuid4().hex[:8]}"
    engine.run(CreateUser(name, Role.OPERATOR, PASSWORD))
    return name


def commands_run(api: LiveServer, name: str) -> float:
    return value(scrape(api), "interlock_commands_total", command=name, outcome="ok")


def test_log_in_and_log_out_leave_one_entry_each_as_the_users_console_action(
    api: LiveServer,
) -> None:
    name = new_user(api.engine)
    before = entry_ids(api.engine)
    browser = Browser(api.url, name)
    session = session_id(api.engine, browser.cookie)
    details = {"started": 1, "session": session, "client_address": "127.0.0.1"}
    assert new_entries(api.engine, before) == [
        (name, "console", "Update", "User", name, "sessions", details)
    ]

    before = entry_ids(api.engine)
    out = browser.post("/logout")
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert not browser.logged_in()
    assert new_entries(api.engine, before) == [
        (name, "console", "Update", "User", name, "sessions", {"ended": 1, "session": session})
    ]
    browser.close()


def test_log_out_and_an_admin_ending_a_session_run_one_command_with_one_kind_of_entry(
    api: LiveServer,
) -> None:
    name = new_user(api.engine)
    leaving, ended = Browser(api.url, name), Browser(api.url, name)
    admin = Browser(api.url, "admin")
    sessions = [session_id(api.engine, b.cookie) for b in (leaving, ended)]
    runs = commands_run(api, "EndSessions")

    before = entry_ids(api.engine)
    assert leaving.post("/logout").status_code == 303
    assert admin.post(f"/sessions/{sessions[1]}/end").status_code == 200
    assert not leaving.logged_in() and not ended.logged_in()

    assert commands_run(api, "EndSessions") == runs + 2
    found = new_entries(api.engine, before)
    # Who did it differs; what was done is written the same way.
    assert [entry[0] for entry in found] == [name, "admin"]
    assert [entry[1:] for entry in found] == [
        ("console", "Update", "User", name, "sessions", {"ended": 1, "session": session})
        for session in sessions
    ]
    for browser in (leaving, ended, admin):
        browser.close()


def test_a_failed_log_in_changes_nothing_and_leaves_no_entry(api: LiveServer) -> None:
    name = new_user(api.engine)
    runs = commands_run(api, "StartSession")
    before = entry_ids(api.engine)
    for who, password in ((name, "not-the-password"), ("nobody-at-all", PASSWORD)):
        refused = console_login(api.url, who, password)
        assert refused.status_code == 401
        assert "interlock_session" not in refused.cookies
    assert new_entries(api.engine, before) == []
    assert commands_run(api, "StartSession") == runs


def test_a_session_is_marked_seen_by_a_command_only_when_its_mark_is_old(
    api: LiveServer,
) -> None:
    browser = Browser(api.url, new_user(api.engine))
    session = session_id(api.engine, browser.cookie)
    runs = commands_run(api, "TouchSession")
    for _ in range(3):
        assert browser.logged_in()
    assert commands_run(api, "TouchSession") == runs  # marked when it started: not due

    with api.engine.connection() as conn:
        conn.execute(
            "UPDATE console_session SET last_seen_at = now() - interval '2 minutes' WHERE id = %s",
            (session,),
        )
    before = entry_ids(api.engine)
    for _ in range(3):
        assert browser.logged_in()
    assert commands_run(api, "TouchSession") == runs + 1
    assert new_entries(api.engine, before) == []  # nobody's action
    with api.engine.connection() as conn:
        row = conn.execute(
            "SELECT now() - last_seen_at FROM console_session WHERE id = %s", (session,)
        ).fetchone()
    assert row is not None and row[0].total_seconds() < 60
    browser.close()


@pytest.fixture
def fresh(database_url: str) -> Iterator[Engine]:
    with Engine(database_url, migrate=False) as engine:
        yield engine


def test_the_first_start_creates_one_admin_and_token_by_command(fresh: Engine) -> None:
    on_loopback = Settings(database_url="unused", host="127.0.0.1")
    first = ensure_credentials(fresh, on_loopback)
    assert first is not None and first["user"] == "admin"
    assert account_reads.verify_password(fresh, "admin", first["password"]) == Principal(
        "admin", Role.ADMIN, user_id="admin"
    )
    assert account_reads.verify_token(fresh, first["token"]) == Principal(
        "admin-token", Role.ADMIN, group_id="admin"
    )
    assert sorted(account_reads.list_all(fresh)) == [
        ("password", "admin", "admin"),
        ("token", "admin-token", "admin"),
    ]
    # Credentials exist: a later start creates none, and neither does the command itself.
    assert ensure_credentials(fresh, on_loopback) is None
    assert not fresh.run(CreateFirstAdmin("another-password", "il_another")).created
    assert account_reads.count(fresh) == 2
    assert account_reads.verify_password(fresh, "admin", "another-password") is None


def test_a_first_start_open_to_the_network_refuses_without_credentials(fresh: Engine) -> None:
    with pytest.raises(StartupRefused):
        ensure_credentials(fresh, Settings(database_url="unused", host="0.0.0.0"))
    assert account_reads.count(fresh) == 0
