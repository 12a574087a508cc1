"""The SQL of users, groups, tenants, their memberships and authorizations, for the commands
(engine/commands/identity.py, engine/commands/accounts.py): each write is one statement, and a
row a command checks before changing it is read locked. The reads are engine/queries/identity.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import psycopg

from engine.db.ids import new_id
from engine.identity.permissions import ADMIN_GROUPS, AuthorizationType
from engine.store import savepoints

Connection = psycopg.Connection[Any]


@dataclass(frozen=True)
class UserRow:
    id: str
    first_name: str | None
    last_name: str | None
    email: str | None


@dataclass(frozen=True)
class GroupRow:
    id: str
    name: str | None
    type: str | None


@dataclass(frozen=True)
class TenantRow:
    id: str
    name: str | None


@dataclass(frozen=True)
class AuthorizationRow:
    id: UUID
    type: AuthorizationType
    user_id: str | None
    group_id: str | None
    resource_type: int
    resource_id: str
    permissions: int


# -- users ---------------------------------------------------------------------------------------


def lock_user(conn: Connection, user_id: str) -> UserRow | None:
    row = conn.execute(
        "SELECT id, first_name, last_name, email FROM identity_user WHERE id = %s FOR UPDATE",
        (user_id,),
    ).fetchone()
    return UserRow(*row) if row else None


def insert_user(conn: Connection, user: UserRow) -> bool:
    """False: the id is taken (nothing written)."""
    row = conn.execute(
        "INSERT INTO identity_user (id, first_name, last_name, email) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        (user.id, user.first_name, user.last_name, user.email),
    ).fetchone()
    return row is not None


def update_user(conn: Connection, user: UserRow) -> None:
    conn.execute(
        "UPDATE identity_user SET first_name = %s, last_name = %s, email = %s WHERE id = %s",
        (user.first_name, user.last_name, user.email, user.id),
    )


def admins(conn: Connection) -> set[str]:
    """The users who act as admins (members of an admin group), the memberships locked so that
    two commands cannot each remove one of the last two."""
    rows = conn.execute(
        "SELECT user_id FROM group_membership WHERE group_id = ANY(%s) FOR UPDATE",
        (list(ADMIN_GROUPS),),
    ).fetchall()
    return {str(row[0]) for row in rows}


def admin_memberships(conn: Connection) -> set[tuple[str, str]]:
    """(group, user) of every membership of an admin group, locked as `admins` locks them."""
    rows = conn.execute(
        "SELECT group_id, user_id FROM group_membership WHERE group_id = ANY(%s) FOR UPDATE",
        (list(ADMIN_GROUPS),),
    ).fetchall()
    return {(str(row[0]), str(row[1])) for row in rows}


# -- groups and memberships ----------------------------------------------------------------------


def lock_group(conn: Connection, group_id: str) -> GroupRow | None:
    row = conn.execute(
        "SELECT id, name, type FROM identity_group WHERE id = %s FOR UPDATE", (group_id,)
    ).fetchone()
    return GroupRow(*row) if row else None


def insert_group(conn: Connection, group: GroupRow) -> bool:
    row = conn.execute(
        "INSERT INTO identity_group (id, name, type) VALUES (%s, %s, %s)"
        " ON CONFLICT (id) DO NOTHING RETURNING id",
        (group.id, group.name, group.type),
    ).fetchone()
    return row is not None


def update_group(conn: Connection, group: GroupRow) -> None:
    conn.execute(
        "UPDATE identity_group SET name = %s, type = %s WHERE id = %s",
        (group.name, group.type, group.id),
    )


def delete_group(conn: Connection, group_id: str) -> None:
    """The group goes with its memberships and tokens (the foreign keys cascade) and its own
    authorizations."""
    conn.execute(
        "WITH gone AS (DELETE FROM identity_group WHERE id = %(id)s RETURNING id)"
        " DELETE FROM authorization_rule WHERE group_id IN (SELECT id FROM gone)",
        {"id": group_id},
    )


def members(conn: Connection, group_id: str) -> set[str]:
    rows = conn.execute(
        "SELECT user_id FROM group_membership WHERE group_id = %s", (group_id,)
    ).fetchall()
    return {str(row[0]) for row in rows}


def insert_membership(conn: Connection, group_id: str, user_id: str) -> bool:
    """False: the user was a member already."""
    row = conn.execute(
        "INSERT INTO group_membership (group_id, user_id) VALUES (%s, %s)"
        " ON CONFLICT DO NOTHING RETURNING 1",
        (group_id, user_id),
    ).fetchone()
    return row is not None


def delete_membership(conn: Connection, group_id: str, user_id: str) -> bool:
    return (
        conn.execute(
            "DELETE FROM group_membership WHERE group_id = %s AND user_id = %s RETURNING 1",
            (group_id, user_id),
        ).fetchone()
        is not None
    )


# -- tenants and their memberships ---------------------------------------------------------------


def lock_tenant(conn: Connection, tenant_id: str) -> TenantRow | None:
    row = conn.execute(
        "SELECT id, name FROM tenant WHERE id = %s FOR UPDATE", (tenant_id,)
    ).fetchone()
    return TenantRow(*row) if row else None


def insert_tenant(conn: Connection, tenant: TenantRow) -> bool:
    row = conn.execute(
        "INSERT INTO tenant (id, name) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
        (tenant.id, tenant.name),
    ).fetchone()
    return row is not None


def update_tenant(conn: Connection, tenant: TenantRow) -> None:
    conn.execute("UPDATE tenant SET name = %s WHERE id = %s", (tenant.name, tenant.id))


def delete_tenant(conn: Connection, tenant_id: str) -> None:
    """Its memberships go with it (the foreign key cascades)."""
    conn.execute("DELETE FROM tenant WHERE id = %s", (tenant_id,))


def user_exists(conn: Connection, user_id: str) -> bool:
    """Whether the user is there, their row share-locked until the transaction ends."""
    row = conn.execute("SELECT 1 FROM identity_user WHERE id = %s FOR SHARE", (user_id,)).fetchone()
    return row is not None


def group_exists(conn: Connection, group_id: str) -> bool:
    """Whether the group is there, its row share-locked until the transaction ends."""
    row = conn.execute(
        "SELECT 1 FROM identity_group WHERE id = %s FOR SHARE", (group_id,)
    ).fetchone()
    return row is not None


def insert_tenant_member(
    conn: Connection, tenant_id: str, *, user_id: str | None = None, group_id: str | None = None
) -> bool:
    """False: the user or group belonged to the tenant already."""
    row = conn.execute(
        "INSERT INTO tenant_membership (id, tenant_id, user_id, group_id) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING 1",
        (new_id(), tenant_id, user_id, group_id),
    ).fetchone()
    return row is not None


def delete_tenant_member(
    conn: Connection, tenant_id: str, *, user_id: str | None = None, group_id: str | None = None
) -> bool:
    return (
        conn.execute(
            "DELETE FROM tenant_membership WHERE tenant_id = %s"
            " AND user_id IS NOT DISTINCT FROM %s AND group_id IS NOT DISTINCT FROM %s"
            " RETURNING 1",
            (tenant_id, user_id, group_id),
        ).fetchone()
        is not None
    )


# -- authorizations ------------------------------------------------------------------------------

_AUTHORIZATION = "id, type, user_id, group_id, resource_type, resource_id, permissions"


def _authorization(row: Any) -> AuthorizationRow:
    return AuthorizationRow(row[0], AuthorizationType(row[1]), *row[2:])


def lock_authorization(conn: Connection, authorization_id: UUID) -> AuthorizationRow | None:
    row = conn.execute(
        f"SELECT {_AUTHORIZATION} FROM authorization_rule WHERE id = %s FOR UPDATE",
        (authorization_id,),
    ).fetchone()
    return _authorization(row) if row else None


def upsert_authorization(conn: Connection, rule: AuthorizationRow) -> bool:
    """Write `rule` (a new one, or a change of the one with its id); False: another
    authorization of the same type already names that user or group, resource type and id
    (nothing written; the transaction goes on)."""
    savepoints.begin(conn, "authorization_write")
    try:
        row = _write_authorization(conn, rule)
    except psycopg.errors.UniqueViolation:
        savepoints.roll_back(conn, "authorization_write")
        return False
    savepoints.release(conn, "authorization_write")
    return row


def _write_authorization(conn: Connection, rule: AuthorizationRow) -> bool:
    row = conn.execute(
        "INSERT INTO authorization_rule"
        " (id, type, user_id, group_id, resource_type, resource_id, permissions)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET type = excluded.type, user_id = excluded.user_id,"
        " group_id = excluded.group_id, resource_type = excluded.resource_type,"
        " resource_id = excluded.resource_id, permissions = excluded.permissions"
        " RETURNING id",
        (
            rule.id,
            int(rule.type),
            rule.user_id,
            rule.group_id,
            rule.resource_type,
            rule.resource_id,
            rule.permissions,
        ),
    ).fetchone()
    return row is not None


def delete_authorization(conn: Connection, authorization_id: UUID) -> None:
    conn.execute("DELETE FROM authorization_rule WHERE id = %s", (authorization_id,))
