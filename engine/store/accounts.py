"""The SQL of credentials and console sessions: the commands (engine/commands/accounts.py) write
through these, the reads (engine/queries/accounts.py) read through them; nothing else touches
the `credential` and `console_session` tables.

A credential's role is not a column: it is read, on every request, from the built-in groups its
user belongs to (a token: its user's, or its own group), the highest one winning; groups of
their own make a viewer, whose reads their authorizations narrow. A credential in no group acts
with no role: it authenticates nobody (see `role_rank_sql`)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import psycopg

from engine.db.ids import new_id
from engine.identity.accounts import (
    ROLE_RANKS,
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
from engine.identity.permissions import BUILTIN_ROLES

Connection = psycopg.Connection[Any]

# A session is live while neither its absolute nor its idle timeout has passed.
_LIVE = "s.expires_at > now() AND s.last_seen_at > now() - make_interval(secs => %(idle)s::float8)"


def _rank_of_group(column: str) -> str:
    """SQL: the rank of the role the group `column` names (NULL: no built-in group)."""
    cases = " ".join(f"WHEN '{g}' THEN {ROLE_RANKS.index(r) + 1}" for g, r in BUILTIN_ROLES.items())
    return f"CASE {column} {cases} END"


def role_rank_sql(alias: str) -> str:
    """SQL: the rank (1-based in ROLE_RANKS) of the role the credential `alias` acts with: its
    user's highest built-in group, else its own group's; a user or token whose groups are none
    of the built-in ones acts as a viewer (what they see is what their groups' and their own
    authorizations grant: engine/queries/grants.py); NULL for a credential in no group at all."""
    return (
        f"coalesce((SELECT max(coalesce({_rank_of_group('m.group_id')}, 1)) FROM group_membership m"
        f" WHERE m.user_id = {alias}.user_id), {_rank_of_group(f'{alias}.group_id')},"
        f" CASE WHEN {alias}.group_id IS NOT NULL THEN 1 END)"
    )


def _role(rank: int | None) -> Role | None:
    return ROLE_RANKS[rank - 1] if rank else None


_RANK = role_rank_sql("c")

# -- reads ---------------------------------------------------------------------------------------


def password_record(conn: Connection, name: str) -> PasswordRecord | None:
    """The user's row (one indexed look-up), or None for an unknown or impossible name, or a
    user whose groups give them no role (who may not log in)."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT c.id, " + _RANK + ", c.secret_hash FROM credential c"
        " WHERE c.kind = 'password' AND c.name = %s",
        (name,),
    ).fetchone()
    role = _role(row[1]) if row else None
    return PasswordRecord(row[0], name, role, row[2]) if row and role else None


def password_hash(conn: Connection, name: str) -> str | None:
    """The user's password hash, whatever their role; None: no such user or no password."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT secret_hash FROM credential WHERE kind = 'password' AND name = %s", (name,)
    ).fetchone()
    return str(row[0]) if row else None


def token_principal(conn: Connection, token: str) -> Principal | None:
    """Who the API token `token` is, found by its hash; None: no such token, or one that acts
    with no role."""
    row = conn.execute(
        "SELECT c.name, " + _RANK + ", c.user_id, c.group_id FROM credential c"
        " WHERE c.kind = 'token' AND c.secret_hash = %s",
        (token_hash(token),),
    ).fetchone()
    role = _role(row[1]) if row else None
    return Principal(row[0], role, row[2], row[3]) if row and role else None


def count(conn: Connection) -> int:
    row = conn.execute("SELECT count(*) FROM credential").fetchone()
    return int(row[0]) if row else 0


def list_all(conn: Connection) -> list[tuple[str, str, str | None]]:
    """(kind, name, role) of every credential (None: it acts with no role); never the
    secrets."""
    rows = conn.execute(
        "SELECT c.kind, c.name, " + _RANK + " FROM credential c ORDER BY c.kind, c.name"
    ).fetchall()
    return [(row[0], row[1], role.value if (role := _role(row[2])) else None) for row in rows]


def find_session(
    conn: Connection, token: str, *, idle_seconds: float, touch_seconds: float
) -> FoundSession | None:
    """The live session whose cookie carries `token`, with its user's role as of now, and
    whether it was last marked seen more than `touch_seconds` ago. One indexed read; writes
    nothing (marking it seen is the command `TouchSession`)."""
    row = conn.execute(
        "SELECT s.id, s.csrf_token, c.name, " + _RANK + ","
        " s.last_seen_at < now() - make_interval(secs => %(touch)s::float8)"
        " FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE s.token_hash = %(hash)s AND " + _LIVE,
        {"hash": session_hash(token), "idle": idle_seconds, "touch": touch_seconds},
    ).fetchone()
    role = _role(row[3]) if row else None
    if row is None or role is None:
        return None
    return FoundSession(LiveSession(row[0], Principal(row[2], role, row[2]), row[1]), row[4])


def list_sessions(conn: Connection, *, idle_seconds: float) -> list[SessionRow]:
    """Every live session, the most recently seen first."""
    rows = conn.execute(
        "SELECT * FROM (SELECT s.id, c.name, " + _RANK + " AS rank, s.created_at,"
        " s.last_seen_at, s.expires_at, s.client_address, s.user_agent"
        " FROM console_session s JOIN credential c ON c.id = s.credential_id"
        " WHERE " + _LIVE + ") live WHERE rank IS NOT NULL ORDER BY last_seen_at DESC, id",
        {"idle": idle_seconds},
    ).fetchall()
    return [
        SessionRow(r[0], r[1], ROLE_RANKS[r[2] - 1], r[3], r[4], r[5], r[6], r[7]) for r in rows
    ]


# -- reads that lock, for the commands -----------------------------------------------------------


def lock_role(conn: Connection, kind: str, name: str) -> tuple[Role | None] | None:
    """The role of the credential (None: it acts with none), the credential locked until the
    transaction ends; None: there is no such credential."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT " + _RANK + " FROM credential c WHERE c.kind = %s AND c.name = %s FOR UPDATE",
        (kind, name),
    ).fetchone()
    return (_role(row[0]),) if row else None


def lock_user(conn: Connection, name: str) -> tuple[UUID, Role | None] | None:
    """The password user's credential id and role (None: their groups give none), the
    credential locked until the transaction ends; None: there is no such user."""
    if not valid_name(name):
        return None
    row = conn.execute(
        "SELECT c.id, " + _RANK + " FROM credential c"
        " WHERE c.kind = 'password' AND c.name = %s FOR UPDATE OF c",
        (name,),
    ).fetchone()
    return (row[0], _role(row[1])) if row else None


def lock_session_user(conn: Connection, session_id: UUID) -> str | None:
    """The name of the session's user, the session row locked; None: no such session."""
    row = conn.execute(
        "SELECT c.name FROM console_session s JOIN credential c ON c.id = s.credential_id "
        "WHERE s.id = %s FOR UPDATE OF s",
        (session_id,),
    ).fetchone()
    return str(row[0]) if row else None


# -- writes (commands only) ----------------------------------------------------------------------


def insert_credential(
    conn: Connection,
    name: str,
    kind: str,
    secret_hash: str,
    *,
    user_id: str | None = None,
    group_id: str | None = None,
) -> bool:
    """Write a new credential of the user `user_id` or the group `group_id` (a password: of the
    user `name`); False: the name is taken for that kind (nothing written, and the statement is
    fine inside a transaction)."""
    row = conn.execute(
        "INSERT INTO credential (id, name, kind, user_id, group_id, secret_hash) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (kind, name) DO NOTHING RETURNING id",
        (new_id(), name, kind, user_id, group_id, secret_hash),
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
    """Change a credential's role: a user leaves every role-giving built-in group and joins
    `role`'s; a token of its own group then belongs to `role`'s group (a user's token acts as its
    user). Its sessions act with the new role from their next request."""
    if not valid_name(name):
        return False
    if kind == "token":
        return (
            conn.execute(
                "UPDATE credential SET group_id = %s WHERE kind = 'token' AND name = %s"
                " AND group_id IS NOT NULL RETURNING 1",
                (role.value, name),
            ).fetchone()
            is not None
        )
    row = conn.execute(
        "WITH who AS (SELECT user_id FROM credential WHERE kind = 'password' AND name = %(name)s),"
        " gone AS (DELETE FROM group_membership WHERE user_id IN (SELECT user_id FROM who)"
        "  AND group_id = ANY(%(builtin)s)),"
        " joined AS (INSERT INTO group_membership (group_id, user_id)"
        "  SELECT %(role)s, user_id FROM who ON CONFLICT DO NOTHING)"
        " SELECT count(*) FROM who",
        {"name": name, "role": role.value, "builtin": list(BUILTIN_ROLES)},
    ).fetchone()
    return bool(row and row[0])


def tokens_of(conn: Connection, user_id: str) -> list[str]:
    """The labels of the API tokens of the user `user_id` (which act as that user)."""
    rows = conn.execute(
        "SELECT name FROM credential WHERE kind = 'token' AND user_id = %s ORDER BY name",
        (user_id,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def delete_own_token(conn: Connection, name: str, user_id: str) -> bool:
    """Delete the API token `name` if it is the user `user_id`'s; False: no such token of
    theirs."""
    if not valid_name(name):
        return False
    row = conn.execute(
        "DELETE FROM credential WHERE kind = 'token' AND name = %s AND user_id = %s RETURNING id",
        (name, user_id),
    ).fetchone()
    return row is not None


def delete_credential(conn: Connection, kind: str, name: str) -> bool:
    """Delete a credential; a password user goes with theirs (see `delete_user`), a user's
    sessions go with it (the foreign key cascades)."""
    if not valid_name(name):
        return False
    if kind == "password":
        return delete_user(conn, name)
    row = conn.execute(
        "WITH gone AS (DELETE FROM credential WHERE kind = %(kind)s AND name = %(name)s "
        "  RETURNING kind, name) "
        "SELECT count(*) FROM gone",
        {"kind": kind, "name": name},
    ).fetchone()
    return row is not None and row[0] == 1


def delete_user(conn: Connection, user_id: str) -> bool:
    """Delete a user: their password, tokens, sessions, group and tenant memberships go with
    them (the foreign keys cascade), and so do their own authorizations and saved views, in the
    same statement (a later user of the name starts without them)."""
    if not valid_name(user_id):
        return False
    row = conn.execute(
        "WITH gone AS (DELETE FROM identity_user WHERE id = %(id)s RETURNING id), "
        "views AS (DELETE FROM saved_view WHERE owner IN (SELECT id FROM gone)), "
        "grants AS (DELETE FROM authorization_rule WHERE user_id IN (SELECT id FROM gone)) "
        "SELECT count(*) FROM gone",
        {"id": user_id},
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
