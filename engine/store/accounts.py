"""The SQL of credentials and console sessions: the commands (engine/commands/accounts.py) write
through these, the reads (engine/queries/accounts.py) read through them; nothing else touches
the `credential` and `console_session` tables."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg

from engine.db.ids import new_id
from engine.identity.accounts import (
    FoundSession,
    LiveSession,
    NewSession,
    PasswordRecord,
    Principal,
    Role,
    SessionRow,
    session_hash,
    token_hash,
    valid_name,
)

Connection = psycopg.Connection[Any]

# A session is live while neither its absolute nor its idle timeout has passed.
_LIVE = "s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => %(idle)s::float8)"


# -- reads ---------------------------------------------------------------------------------------


def password_record(conn: Connection, name: str) -> PasswordRecord | None:
    """The user's row (one indexed look-up), or None for an unknown or impossible name."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT id, role, secret_hash FROM credential WHERE kind = 'password' AND name = %s",
        (name,),
    ).fetchone()
    return PasswordRecord(row[0], name, Role(row[1]), row[2]) if row else None


def token_principal(conn: Connection, token: str) -> Principal | None:
    """Who the API token `token` is, found by its hash; None: no such token."""
    row = conn.execute(
        "SELECT name, role FROM credential WHERE kind = 'token' AND secret_hash = %s",
        (token_hash(token),),
    ).fetchone()
    return Principal(row[0], Role(row[1])) if row else None


def count(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) FROM credential").fetchone()
    return int(row[0]) if row else 0


def list_all(conn: Connection) -> list[tuple[str, str, str]]:
    """(kind, name, role) of every credential; never the secrets."""
    rows = conn.execute("SELECT kind, name, role FROM credential ORDER BY kind, name").fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


def find_session(
    conn: Connection, token: str, *, idle_seconds: float, touch_seconds: float
) -> FoundSession | None:
    """The live session whose cookie carries `token`, with its user's role as of now, and
    whether it was last marked seen more than `touch_seconds` ago. One indexed read; writes
    nothing (marking it seen is the command `TouchSession`)."""
    row = conn.execute(
        "SELECT s.id, s.csrf_token, c.name, c.role,"
        " s.last_seen_at < now() - make_interval(secs => %(touch)s::float8)"
        " FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE s.token_hash = %(hash)s AND " + _LIVE,
        {"hash": session_hash(token), "idle": idle_seconds, "touch": touch_seconds},
    ).fetchone()
    if row is None:
        return None
    return FoundSession(LiveSession(row[0], Principal(row[2], Role(row[3])), row[1]), row[4])


def list_sessions(conn: Connection, *, idle_seconds: float) -> list[SessionRow]:
    """Every live session, the most recently seen first."""
    rows = conn.execute(
        "SELECT s.id, c.name, c.role, s.created_at, s.last_seen_at, s.expires_at,"
        " s.client_address, s.user_agent"
        " FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE " + _LIVE + " ORDER BY s.last_seen_at DESC, s.id",
        {"idle": idle_seconds},
    ).fetchall()
    return [SessionRow(r[0], r[1], Role(r[2]), r[3], r[4], r[5], r[6], r[7]) for r in rows]


# -- reads that lock, for the commands -----------------------------------------------------------


def lock_role(conn: Connection, kind: str, name: str) -> Role | None:
    """The role of the credential, locked until the transaction ends; None: there is none."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT role FROM credential WHERE kind = %s AND name = %s FOR UPDATE", (kind, name)
    ).fetchone()
    return Role(row[0]) if row else None


def lock_session_user(conn: Connection, session_id: UUID) -> str | None:
    """The name of the session's user, the session row locked; None: no such session."""
    row = conn.execute(
        "SELECT c.name FROM console_session s JOIN credential c ON c.id = s.credential_id "
        "WHERE s.id = %s FOR UPDATE OF s",
        (session_id,),
    ).fetchone()
    return str(row[0]) if row else None


# -- writes (commands only) ----------------------------------------------------------------------


def insert_credential(conn: Connection, name: str, kind: str, role: Role, secret_hash: str) -> bool:
    """Write a new credential; False: the name is taken for that kind (nothing written, and the
    statement is fine inside a transaction)."""
    row = conn.execute(
        "INSERT INTO credential (id, name, kind, role, secret_hash) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (kind, name) DO NOTHING RETURNING id",
        (new_id(), name, kind, role.value, secret_hash),
    ).fetchone()
    return row is not None


def update_password(conn: Connection, name: str, secret_hash: str) -> bool:
    """Give the user a new password hash and end every session they have. False: no such
    user."""
    if not valid_name(name):
        return False
    row = conn.execute(
        "WITH changed AS ("
        "  UPDATE credential SET secret_hash = %s WHERE kind = 'password' AND name = %s"
        "  RETURNING id"
        "), ended AS ("
        "  DELETE FROM console_session WHERE credential_id IN (SELECT id FROM changed)"
        ") SELECT count(*) FROM changed",
        (secret_hash, name),
    ).fetchone()
    return bool(row and row[0])


def update_role(conn: Connection, kind: str, name: str, role: Role) -> bool:
    """Change a credential's role; its sessions act with the new role from their next request."""
    if not valid_name(name):
        return False
    return (
        conn.execute(
            "UPDATE credential SET role = %s WHERE kind = %s AND name = %s",
            (role.value, kind, name),
        ).rowcount
        == 1
    )


def delete_credential(conn: Connection, kind: str, name: str) -> bool:
    """Delete a credential; a user's sessions go with it (the foreign key cascades), and so do
    their saved views, in the same statement (a later user of the name starts without them)."""
    if not valid_name(name):
        return False
    row = conn.execute(
        "WITH gone AS (DELETE FROM credential WHERE kind = %(kind)s AND name = %(name)s "
        "  RETURNING kind, name), "
        "views AS (DELETE FROM saved_view WHERE owner IN "
        "  (SELECT name FROM gone WHERE kind = 'password')) "
        "SELECT count(*) FROM gone",
        {"kind": kind, "name": name},
    ).fetchone()
    return row is not None and row[0] == 1


def insert_session(
    conn: Connection,
    session: NewSession,
    credential_id: UUID,
    *,
    max_seconds: float,
    idle_seconds: float,
    client_address: str | None,
    user_agent: str | None,
) -> bool:
    """Keep `session` for the password user `credential_id`; also forgets every session that has
    run out. False: there is no such user (any more): nothing kept."""
    row = conn.execute(
        "WITH expired AS ("
        "  DELETE FROM console_session s WHERE NOT (" + _LIVE + ")"
        "), started AS ("
        "  INSERT INTO console_session"
        "  (id, token_hash, credential_id, csrf_token, expires_at, client_address, user_agent)"
        "  SELECT %(id)s, %(hash)s, id, %(csrf)s, now() + make_interval(secs => %(max)s::float8),"
        "   %(address)s, %(agent)s FROM credential WHERE id = %(credential)s AND kind = 'password'"
        "  RETURNING 1"
        ") SELECT count(*) FROM started",
        {
            "idle": idle_seconds,
            "id": session.id,
            "hash": session_hash(session.token),
            "credential": credential_id,
            "csrf": session.csrf_token,
            "max": max_seconds,
            "address": client_address,
            "agent": (user_agent or "")[:500] or None,
        },
    ).fetchone()
    return bool(row and row[0])


def touch_session(conn: Connection, session_id: UUID) -> None:
    """Mark the session seen now."""
    conn.execute("UPDATE console_session SET last_seen_at = now() WHERE id = %s", (session_id,))


def delete_session(conn: Connection, session_id: UUID) -> bool:
    return conn.execute("DELETE FROM console_session WHERE id = %s", (session_id,)).rowcount == 1


def delete_sessions_of(conn: Connection, name: str, *, keep: UUID | None = None) -> int | None:
    """End every session of the user (but `keep`); the number ended, or None: no such user."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "WITH who AS (SELECT id FROM credential WHERE kind = 'password' AND name = %s),"
        " ended AS ("
        "  DELETE FROM console_session WHERE credential_id IN (SELECT id FROM who)"
        "  AND id IS DISTINCT FROM %s RETURNING 1"
        ") SELECT (SELECT count(*) FROM who), (SELECT count(*) FROM ended)",
        (name, keep),
    ).fetchone()
    if row is None or row[0] == 0:
        return None
    return int(row[1])
