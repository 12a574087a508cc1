"""A database from before users, groups and authorizations (revision 0024) upgrades with every
user, token and session still working, each with the role it had; the built-in groups are
granted what engine/identity/permissions.py declares; and a downgrade gives the roles back."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import httpx
import psycopg

from engine.db import migrate
from engine.db.ids import new_id
from engine.identity.accounts import hash_password, new_token, session_hash, token_hash
from engine.identity.permissions import builtin_grants
from tests.server import live_server

BEFORE = "0024"
PASSWORD = "an-old-long-password"
SESSION = "s" * 43  # what a cookie of the old schema carried


def _old_database(url: str, token: str) -> None:
    """Rows written as the schema of 0024 had them: a role on each credential."""
    migrate.upgrade(url, BEFORE)
    with psycopg.connect(url) as conn:
        ann = new_id()
        conn.execute(
            "INSERT INTO credential (id, name, kind, role, secret_hash) VALUES"
            " (%s, 'ann', 'password', 'operator', %s),"
            " (%s, 'bob', 'password', 'admin', %s),"
            " (%s, 'old-token', 'token', 'viewer', %s)",
            (
                ann,
                hash_password(PASSWORD),
                new_id(),
                hash_password(PASSWORD),
                new_id(),
                token_hash(token),
            ),
        )
        conn.execute(
            "INSERT INTO console_session (id, token_hash, credential_id, csrf_token, expires_at)"
            " VALUES (%s, %s, %s, 'csrf', %s)",
            (new_id(), session_hash(SESSION), ann, datetime.now(UTC) + timedelta(hours=1)),
        )


def _basic(name: str, password: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def test_users_tokens_and_sessions_work_after_the_upgrade(empty_database_url: str) -> None:
    token = new_token()
    _old_database(empty_database_url, token)

    migrate.upgrade(empty_database_url)

    with live_server(empty_database_url) as server, httpx.Client(base_url=server.url) as client:
        # ann, an operator: her password works, she reads but may not list users.
        assert client.get("/api/v1/instances", headers=_basic("ann", PASSWORD)).status_code == 200
        assert client.get("/api/v1/users", headers=_basic("ann", PASSWORD)).status_code == 403
        assert client.get("/api/v1/users", headers=_basic("ann", "wrong")).status_code == 401
        # bob, an admin, may.
        users = client.get("/api/v1/users", headers=_basic("bob", PASSWORD))
        assert users.status_code == 200
        listed = {u["name"]: u["role"] for u in users.json()["items"]}
        assert (listed["ann"], listed["bob"]) == ("operator", "admin")
        # The viewer token reads, and acts as a viewer.
        bearer = {"Authorization": f"Bearer {token}"}
        assert client.get("/api/v1/instances", headers=bearer).status_code == 200
        assert client.get("/api/v1/users", headers=bearer).status_code == 403
        # ann's console session is still live, as her.
        client.cookies.set("interlock_session", SESSION)
        page = client.get("/")
        assert page.status_code == 200
        assert "ann" in page.text


def test_the_builtin_groups_are_granted_what_is_declared(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT g.id, g.type, a.type, a.resource_type, a.resource_id, a.permissions"
            " FROM identity_group g JOIN authorization_rule a ON a.group_id = g.id"
        ).fetchall()
    assert {row[1] for row in rows} == {"SYSTEM"}
    assert {row[2] for row in rows} == {1}  # GRANT
    assert {row[4] for row in rows} == {"*"}
    assert sorted((r[0], r[3], r[5]) for r in rows) == sorted(
        (g.group_id, int(g.resource_type), g.permissions) for g in builtin_grants()
    )


def test_a_downgrade_gives_each_credential_its_role_back(empty_database_url: str) -> None:
    _old_database(empty_database_url, new_token())
    migrate.upgrade(empty_database_url)

    migrate.downgrade(empty_database_url, BEFORE)

    with psycopg.connect(empty_database_url) as conn:
        roles: dict[str, str] = dict(conn.execute("SELECT name, role FROM credential").fetchall())
    assert roles == {"ann": "operator", "bob": "admin", "old-token": "viewer"}
