"""Credentials for people and programs: passwords (HTTP Basic, console login) and API tokens.

Secrets are stored hashed: passwords with salted PBKDF2, tokens (random, high entropy) with
SHA-256 so that a token is found by its hash in one indexed look-up.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import psycopg

from engine.errors import BadRequest, Conflict
from engine.ids import new_id

PBKDF2_ITERATIONS = 120_000


class Role(StrEnum):
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    def allows(self, needed: Role) -> bool:
        order = (Role.VIEWER, Role.OPERATOR, Role.ADMIN)
        return order.index(self) >= order.index(needed)


@dataclass(frozen=True)
class Principal:
    name: str
    role: Role


def hash_password(password: str, salt: str | None = None) -> str:
    salt = salt or secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt}${digest.hex()}"


def _password_matches(password: str, stored: str) -> bool:
    try:
        _, iterations, salt, expected = stored.split("$")
    except ValueError:
        return False
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt.encode(), int(iterations))
    return hmac.compare_digest(digest.hex(), expected)


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_password(conn: psycopg.Connection[Any], name: str, role: Role, password: str) -> None:
    if not name or len(password) < 8:
        raise BadRequest("a user needs a name and a password of at least 8 characters")
    try:
        conn.execute(
            "INSERT INTO credential (id, name, kind, role, secret_hash) "
            "VALUES (%s, %s, 'password', %s, %s)",
            (new_id(), name, role.value, hash_password(password)),
        )
    except psycopg.errors.UniqueViolation as exc:
        raise Conflict(f"user '{name}' already exists") from exc


def create_token(conn: psycopg.Connection[Any], name: str, role: Role) -> str:
    """A new API token; the only time its text is known. Returns it."""
    token = "il_" + secrets.token_urlsafe(32)
    try:
        conn.execute(
            "INSERT INTO credential (id, name, kind, role, secret_hash) "
            "VALUES (%s, %s, 'token', %s, %s)",
            (new_id(), name, role.value, _token_hash(token)),
        )
    except psycopg.errors.UniqueViolation as exc:
        raise Conflict(f"a token named '{name}' already exists") from exc
    return token


def verify_password(conn: psycopg.Connection[Any], name: str, password: str) -> Principal | None:
    row = conn.execute(
        "SELECT role, secret_hash FROM credential WHERE kind = 'password' AND name = %s", (name,)
    ).fetchone()
    if row is None or not _password_matches(password, row[1]):
        return None
    return Principal(name, Role(row[0]))


def verify_token(conn: psycopg.Connection[Any], token: str) -> Principal | None:
    row = conn.execute(
        "SELECT name, role FROM credential WHERE kind = 'token' AND secret_hash = %s",
        (_token_hash(token),),
    ).fetchone()
    return Principal(row[0], Role(row[1])) if row else None


def count(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM credential").fetchone()
    return int(row[0]) if row else 0


def delete(conn: psycopg.Connection[Any], kind: str, name: str) -> bool:
    return (
        conn.execute("DELETE FROM credential WHERE kind = %s AND name = %s", (kind, name)).rowcount
        == 1
    )


def list_all(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str]]:
    """(kind, name, role) of every credential; never the secrets."""
    rows = conn.execute("SELECT kind, name, role FROM credential ORDER BY kind, name").fetchall()
    return [(row[0], row[1], row[2]) for row in rows]
