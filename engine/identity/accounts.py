"""Credentials for people and programs: passwords (HTTP Basic, console login) and API tokens,
and the console sessions of password users.

Secrets are stored hashed: passwords with salted PBKDF2, tokens (random, high entropy) with
SHA-256 so that a token is found by its hash in one indexed look-up. A console session is found
the same way: its cookie carries a random id, the row keeps the id's SHA-256.

Checking a password costs one PBKDF2 whether the user exists or not (an unknown name is checked
against a dummy hash with the same iteration count), so the time of a failed log-in does not tell
which user names exist.

This module holds no SQL: the roles, principals and session shapes, and the hashing. The rows are
read and written in engine/store/accounts.py; every change to them is a command
(engine/commands/accounts.py), every read a query (engine/queries/accounts.py).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from engine.db.ids import new_id
from engine.states import Role as Role  # declared there; imported from here by many

PBKDF2_ITERATIONS = 120_000
# The roles from the lowest to the highest: a principal in several built-in groups acts with the
# highest of their roles.
ROLE_RANKS = (Role.VIEWER, Role.OPERATOR, Role.ADMIN)
# The shortest password accepted.
MIN_PASSWORD = 8


@dataclass(frozen=True)
class Principal:
    """Who a request is: its name and role, and whose authorizations apply to it (its grants,
    engine/queries/grants.py): a user (a password, session or single sign-on user, whose id is
    their name; a user's token), or a token's own group. Neither: nobody's (sees nothing)."""

    name: str
    role: Role
    user_id: str | None = None
    group_id: str | None = None


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


def check_password(password: str, record: PasswordRecord | None) -> bool:
    """Whether `password` is the record's. Costs one full PBKDF2 even without a record."""
    matches = _password_matches(password, record.secret_hash if record else _dummy_hash())
    return matches and record is not None


def token_hash(token: str) -> str:
    """What an API token is kept and found under."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """The text of a new API token (random, high entropy)."""
    return "il_" + secrets.token_urlsafe(32)


# -- console sessions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NewSession:
    id: UUID
    # The cookie's value: known only to the browser once this is returned.
    token: str
    csrf_token: str


def new_session() -> NewSession:
    """The id and secrets of a session about to be started (random, high entropy)."""
    return NewSession(new_id(), secrets.token_urlsafe(32), secrets.token_urlsafe(32))


@dataclass(frozen=True)
class LiveSession:
    """A session as a request sees it: its user's name and role read from the credential now."""

    id: UUID
    principal: Principal
    csrf_token: str


@dataclass(frozen=True)
class FoundSession:
    """A live session a cookie names, and whether its last-seen time is due to be marked."""

    session: LiveSession
    touch_due: bool


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
