"""Credentials for people and programs: passwords (HTTP Basic, console login) and API tokens,
and the console sessions of password users.

Secrets are stored hashed: passwords with salted PBKDF2, tokens (random, high entropy) with
SHA-256 so that a token is found by its hash in one indexed look-up. A console session is found
the same way: its cookie carries a random id, the row keeps the id's SHA-256.

Checking a password costs one PBKDF2 whether the user exists or not (an unknown name is checked
against a dummy hash with the same iteration count), so the time of a failed log-in does not tell
which user names exist.

Every function of a connection here is a `query` (engine/queries): the web layer calls it with
the engine, which lends it a pooled autocommit connection for the call.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg

from engine.errors import BadRequest, Conflict
from engine.ids import new_id
from engine.queries import query
from engine.states import Role as Role  # declared there; imported from here by many

PBKDF2_ITERATIONS = 120_000


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role


def hash_password(password: str, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt}${digest.hex()}"


@functools.cache
def _dummy_hash() -> str:
    """A hash of a random password nobody knows, with the iteration count of real ones."""
    return hash_password(secrets.token_urlsafe(24))


def _password_matches(password: str, stored: str) -> bool:
    try:
        _, iterations, salt, expected = stored.split("$")
        rounds = int(iterations)
    except ValueError:
        rounds, salt, expected = PBKDF2_ITERATIONS, "", ""
    digest = hashlib.pbkdf2_hmac(
        "sha256", password.encode("utf-8", "surrogatepass"), salt.encode(), rounds
    )
    return hmac.compare_digest(digest.hex().encode(), expected.encode()) and bool(expected)


@dataclass(frozen=True)
class PasswordRecord:
    """A password user's row as it is now: the role to act with, the hash to check against."""

    id: UUID
    name: str
    role: Role
    secret_hash: str


def valid_name(name: str) -> bool:
    """PostgreSQL text cannot hold NUL: such a name can match no user (and must not reach SQL)."""
    return bool(name) and "\0" not in name


@query
def password_record(conn: psycopg.Connection[Any], name: str) -> PasswordRecord | None:
    """The user's row (one indexed look-up), or None for an unknown or impossible name."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT id, role, secret_hash FROM credential WHERE kind = 'password' AND name = %s",
        (name,),
    ).fetchone()
    return PasswordRecord(row[0], name, Role(row[1]), row[2]) if row else None


def check_password(password: str, record: PasswordRecord | None) -> bool:
    """Whether `password` is the record's. Costs one full PBKDF2 even without a record."""
    matches = _password_matches(password, record.secret_hash if record else _dummy_hash())
    return matches and record is not None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@query
def create_password(conn: psycopg.Connection[Any], name: str, role: Role, password: str) -> None:
    if not valid_name(name) or len(password) < 8:
        raise BadRequest("a user needs a name and a password of at least 8 characters")
    _insert_credential(
        conn, name, "password", role, hash_password(password), f"user '{name}' already exists"
    )


@query
def create_token(conn: psycopg.Connection[Any], name: str, role: Role) -> str:
    """A new API token; the only time its text is known. Returns it."""
    token = new_token()
    add_token(conn, name, role, token)
    return token


def new_token() -> str:
    """The text of a new API token (random, high entropy)."""
    return "il_" + secrets.token_urlsafe(32)


def add_token(conn: psycopg.Connection[Any], name: str, role: Role, token: str) -> None:
    """Keep the API token `token` (its hash) under `name`."""
    _insert_credential(
        conn, name, "token", role, _token_hash(token), f"a token named '{name}' already exists"
    )


def _insert_credential(
    conn: psycopg.Connection[Any], name: str, kind: str, role: Role, secret_hash: str, taken: str
) -> None:
    """Write a new credential; a name already in use is a conflict with the message `taken`
    (nothing written: the statement is fine inside a transaction)."""
    row = conn.execute(
        "INSERT INTO credential (id, name, kind, role, secret_hash) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (kind, name) DO NOTHING RETURNING id",
        (new_id(), name, kind, role.value, secret_hash),
    ).fetchone()
    if row is None:
        raise Conflict(taken)


def role_of(conn: psycopg.Connection[Any], kind: str, name: str) -> Role | None:
    """The role of the credential, locked until the transaction ends; None: there is none."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT role FROM credential WHERE kind = %s AND name = %s FOR UPDATE", (kind, name)
    ).fetchone()
    return Role(row[0]) if row else None


@query
def verify_password(conn: psycopg.Connection[Any], name: str, password: str) -> Principal | None:
    record = password_record(conn, name)
    # Checked even without a record: an unknown name costs the same PBKDF2 as a known one.
    if not check_password(password, record) or record is None:
        return None
    return Principal(name, record.role)


@query
def set_password(conn: psycopg.Connection[Any], name: str, password: str) -> bool:
    """Give the user a new password and end every session they have. False: no such user."""
    if len(password) < 8:
        raise BadRequest("a password needs at least 8 characters")
    if not valid_name(name):
        return False
    row = conn.execute(
        "WITH changed AS ("
        "  UPDATE credential SET secret_hash = %s WHERE kind = 'password' AND name = %s"
        "  RETURNING id"
        "), ended AS ("
        "  DELETE FROM console_session WHERE credential_id IN (SELECT id FROM changed)"
        ") SELECT count(*) FROM changed",
        (hash_password(password), name),
    ).fetchone()
    return bool(row and row[0])


@query
def set_role(conn: psycopg.Connection[Any], kind: str, name: str, role: Role) -> bool:
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


@query
def verify_token(conn: psycopg.Connection[Any], token: str) -> Principal | None:
    row = conn.execute(
        "SELECT name, role FROM credential WHERE kind = 'token' AND secret_hash = %s",
        (_token_hash(token),),
    ).fetchone()
    return Principal(row[0], Role(row[1])) if row else None


@query
def count(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM credential").fetchone()
    return int(row[0]) if row else 0


@query
def delete(conn: psycopg.Connection[Any], kind: str, name: str) -> bool:
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


@query
def list_all(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str]]:
    """(kind, name, role) of every credential; never the secrets."""
    rows = conn.execute("SELECT kind, name, role FROM credential ORDER BY kind, name").fetchall()
    return [(row[0], row[1], row[2]) for row in rows]


# -- console sessions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NewSession:
    id: UUID
    # The cookie's value: known only to the browser once this is returned.
    token: str
    csrf_token: str


@dataclass(frozen=True)
class LiveSession:
    """A session as a request sees it: its user's name and role read from the credential now."""

    id: UUID
    principal: Principal
    csrf_token: str


@dataclass(frozen=True)
class SessionRow:
    id: UUID
    user: str
    role: Role
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    client_address: str | None
    user_agent: str | None


def session_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


_LIVE = "s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => %(idle)s::float8)"


@query
def create_session(
    conn: psycopg.Connection[Any],
    credential_id: UUID,
    *,
    max_seconds: float,
    idle_seconds: float,
    client_address: str | None = None,
    user_agent: str | None = None,
) -> NewSession:
    """A new session for a password user; also forgets every session that has run out."""
    token = secrets.token_urlsafe(32)
    session = NewSession(new_id(), token, secrets.token_urlsafe(32))
    conn.execute(
        "WITH expired AS ("
        "  DELETE FROM console_session s WHERE NOT (" + _LIVE + ")"
        ") INSERT INTO console_session"
        " (id, token_hash, credential_id, csrf_token, expires_at, client_address, user_agent)"
        " SELECT %(id)s, %(hash)s, id, %(csrf)s, now() + make_interval(secs => %(max)s::float8),"
        "  %(address)s, %(agent)s FROM credential WHERE id = %(credential)s AND kind = 'password'",
        {
            "idle": idle_seconds,
            "id": session.id,
            "hash": session_hash(token),
            "credential": credential_id,
            "csrf": session.csrf_token,
            "max": max_seconds,
            "address": client_address,
            "agent": (user_agent or "")[:500] or None,
        },
    )
    return session


@query
def find_session(
    conn: psycopg.Connection[Any], token: str, *, idle_seconds: float, touch_seconds: float
) -> LiveSession | None:
    """The live session whose cookie carries `token`, with its user's role as of now. Marks it
    seen when it was last marked more than `touch_seconds` ago (not on every request)."""
    row = conn.execute(
        "WITH found AS ("
        "  SELECT s.id, s.csrf_token, s.last_seen_at, c.name, c.role"
        "  FROM console_session s JOIN credential c ON c.id = s.credential_id"
        "  WHERE s.token_hash = %(hash)s AND " + _LIVE + "), touched AS ("
        "  UPDATE console_session SET last_seen_at = now() WHERE id IN ("
        "    SELECT id FROM found"
        "    WHERE last_seen_at < now() - make_interval(secs => %(touch)s::float8))"
        ") SELECT id, csrf_token, name, role FROM found",
        {"hash": session_hash(token), "idle": idle_seconds, "touch": touch_seconds},
    ).fetchone()
    if row is None:
        return None
    return LiveSession(row[0], Principal(row[2], Role(row[3])), row[1])


@query
def end_session(conn: psycopg.Connection[Any], session_id: UUID) -> bool:
    return conn.execute("DELETE FROM console_session WHERE id = %s", (session_id,)).rowcount == 1


@query
def end_sessions_of(
    conn: psycopg.Connection[Any], name: str, *, keep: UUID | None = None
) -> int | None:
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


@query
def list_sessions(conn: psycopg.Connection[Any], *, idle_seconds: float) -> list[SessionRow]:
    """Every live session, the most recently seen first."""
    rows = conn.execute(
        "SELECT s.id, c.name, c.role, s.created_at, s.last_seen_at, s.expires_at,"
        " s.client_address, s.user_agent"
        " FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE " + _LIVE + " ORDER BY s.last_seen_at DESC, s.id",
        {"idle": idle_seconds},
    ).fetchall()
    return [SessionRow(r[0], r[1], Role(r[2]), r[3], r[4], r[5], r[6], r[7]) for r in rows]
