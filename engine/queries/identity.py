"""Reads of users, groups, tenants and authorizations, with Camunda's filters and sorting, and
whether a user holds a permission (Camunda's precedence, engine/identity/evaluate.py, over the
rows that could apply). Every filter goes through `Where`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import LiteralString
from uuid import UUID

from psycopg import sql

from engine.identity.evaluate import Rule, is_authorized
from engine.identity.permissions import ANY, AuthorizationType
from engine.queries import Connection, query
from engine.queries.camunda.common import CamundaPage
from engine.sql import covers
from engine.sql.filters import Where, order_by
from engine.sql.filters import count as count_rows
from engine.store.identity import AuthorizationRow as AuthorizationRow  # app/ reads them here
from engine.store.identity import GroupRow as GroupRow
from engine.store.identity import TenantRow as TenantRow
from engine.store.identity import UserRow as UserRow

USER_SORT: dict[str, LiteralString] = {
    "userId": "u.id",
    "firstName": "u.first_name",
    "lastName": "u.last_name",
    "email": "u.email",
}
GROUP_SORT: dict[str, LiteralString] = {"id": "g.id", "name": "g.name", "type": "g.type"}
TENANT_SORT: dict[str, LiteralString] = {"id": "t.id", "name": "t.name"}
AUTHORIZATION_SORT: dict[str, LiteralString] = {
    "resourceType": "a.resource_type",
    "resourceId": "a.resource_id",
}


def _page(
    where: Where, page: CamundaPage, sort: dict[str, LiteralString], tie: LiteralString
) -> sql.Composable:
    return order_by(page.sort, sort, tie) + where.offset_limit(page.first, page.max)


@query
def users(
    conn: Connection,
    page: CamundaPage,
    *,
    user_id: str | None = None,
    user_ids: Sequence[str] | None = None,
    first_name: str | None = None,
    first_name_like: str | None = None,
    last_name: str | None = None,
    last_name_like: str | None = None,
    email: str | None = None,
    email_like: str | None = None,
    member_of_group: str | None = None,
    member_of_tenant: str | None = None,
    count: bool = False,
) -> list[UserRow] | int:
    """Users by Camunda's filters (None: not filtered); their number when `count`. Only those
    the request's principal may read (READ on them; themselves always)."""
    where = Where()
    where.authorized(covers.user("u.id"))
    where.equals("u.id", user_id)
    where.any_of("u.id", user_ids)
    where.equals("u.first_name", first_name)
    where.like("u.first_name", first_name_like)
    where.equals("u.last_name", last_name)
    where.like("u.last_name", last_name_like)
    where.equals("u.email", email)
    where.like("u.email", email_like)
    if member_of_group is not None:
        where.exists(
            "SELECT 1 FROM group_membership m WHERE m.user_id = u.id AND m.group_id = {}",
            member_of_group,
        )
    if member_of_tenant is not None:
        where.exists(
            "SELECT 1 FROM tenant_membership tm WHERE tm.tenant_id = {} AND (tm.user_id = u.id"
            " OR tm.group_id IN (SELECT m.group_id FROM group_membership m"
            " WHERE m.user_id = u.id))",
            member_of_tenant,
        )
    source = sql.SQL("FROM identity_user u")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL("SELECT u.id, u.first_name, u.last_name, u.email ")
        + source
        + where.sql()
        + _page(where, page, USER_SORT, "u.id")
    )
    return [UserRow(*row) for row in conn.execute(statement, where.params()).fetchall()]


@query
def groups(
    conn: Connection,
    page: CamundaPage,
    *,
    group_id: str | None = None,
    group_ids: Sequence[str] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    type: str | None = None,
    member: str | None = None,
    member_of_tenant: str | None = None,
    count: bool = False,
) -> list[GroupRow] | int:
    """Groups by Camunda's filters (`member`: the groups a user belongs to); only those the
    request's principal may read (READ on them)."""
    where = Where()
    where.authorized(covers.group("g.id"))
    where.equals("g.id", group_id)
    where.any_of("g.id", group_ids)
    where.equals("g.name", name)
    where.like("g.name", name_like)
    where.equals("g.type", type)
    if member is not None:
        where.exists(
            "SELECT 1 FROM group_membership m WHERE m.group_id = g.id AND m.user_id = {}",
            member,
        )
    if member_of_tenant is not None:
        where.exists(
            "SELECT 1 FROM tenant_membership tm WHERE tm.group_id = g.id AND tm.tenant_id = {}",
            member_of_tenant,
        )
    source = sql.SQL("FROM identity_group g")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL("SELECT g.id, g.name, g.type ")
        + source
        + where.sql()
        + _page(where, page, GROUP_SORT, "g.id")
    )
    return [GroupRow(*row) for row in conn.execute(statement, where.params()).fetchall()]


@query
def tenants(
    conn: Connection,
    page: CamundaPage,
    *,
    tenant_id: str | None = None,
    tenant_ids: Sequence[str] | None = None,
    name: str | None = None,
    name_like: str | None = None,
    user_member: str | None = None,
    group_member: str | None = None,
    including_groups_of_user: bool = False,
    count: bool = False,
) -> list[TenantRow] | int:
    """Tenants by Camunda's filters: `user_member` names a user belonging to the tenant (also
    through their groups when `including_groups_of_user`), `group_member` a group; only those
    the request's principal may read (READ on them)."""
    where = Where()
    where.authorized(covers.tenant("t.id"))
    where.equals("t.id", tenant_id)
    where.any_of("t.id", tenant_ids)
    where.equals("t.name", name)
    where.like("t.name", name_like)
    if user_member is not None:
        if including_groups_of_user:
            where.exists(
                "SELECT 1 FROM tenant_membership tm WHERE tm.tenant_id = t.id AND (tm.user_id = {}"
                " OR tm.group_id IN (SELECT m.group_id FROM group_membership m"
                " WHERE m.user_id = {}))",
                user_member,
                user_member,
            )
        else:
            where.exists(
                "SELECT 1 FROM tenant_membership tm WHERE tm.tenant_id = t.id AND tm.user_id = {}",
                user_member,
            )
    if group_member is not None:
        where.exists(
            "SELECT 1 FROM tenant_membership tm WHERE tm.tenant_id = t.id AND tm.group_id = {}",
            group_member,
        )
    source = sql.SQL("FROM tenant t")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL("SELECT t.id, t.name ")
        + source
        + where.sql()
        + _page(where, page, TENANT_SORT, "t.id")
    )
    return [TenantRow(*row) for row in conn.execute(statement, where.params()).fetchall()]


_AUTHORIZATION: LiteralString = (
    "SELECT a.id, a.type, a.user_id, a.group_id, a.resource_type, a.resource_id, a.permissions "
)


def _authorization(row: tuple[object, ...]) -> AuthorizationRow:
    (id_, type_, user_id, group_id, resource_type, resource_id, permissions) = row
    assert isinstance(id_, UUID) and isinstance(type_, int)
    assert isinstance(resource_type, int) and isinstance(permissions, int)
    return AuthorizationRow(
        id_,
        AuthorizationType(type_),
        None if user_id is None else str(user_id),
        None if group_id is None else str(group_id),
        resource_type,
        str(resource_id),
        permissions,
    )


@query
def authorizations(
    conn: Connection,
    page: CamundaPage,
    *,
    authorization_id: UUID | None = None,
    type: AuthorizationType | None = None,
    user_ids: Sequence[str] | None = None,
    group_ids: Sequence[str] | None = None,
    resource_type: int | None = None,
    resource_id: str | None = None,
    count: bool = False,
) -> list[AuthorizationRow] | int:
    """Authorizations by Camunda's filters (None: not filtered); only those the request's
    principal may read (READ on them)."""
    where = Where()
    where.authorized(covers.authorization("a.id"))
    where.equals("a.id", authorization_id)
    where.equals("a.type", None if type is None else int(type))
    where.any_of("a.user_id", user_ids)
    where.any_of("a.group_id", group_ids)
    where.equals("a.resource_type", resource_type)
    where.equals("a.resource_id", resource_id)
    source = sql.SQL("FROM authorization_rule a")
    if count:
        return count_rows(conn, source, where)
    statement = (
        sql.SQL(_AUTHORIZATION)
        + source
        + where.sql()
        + _page(where, page, AUTHORIZATION_SORT, "a.id")
    )
    return [_authorization(row) for row in conn.execute(statement, where.params()).fetchall()]


@query
def group_ids_of(conn: Connection, user_id: str) -> list[str]:
    """The ids of the groups the user belongs to, in order."""
    where = Where()
    where.equals("m.user_id", user_id)
    statement = (
        sql.SQL("SELECT m.group_id FROM group_membership m") + where.sql() + sql.SQL(" ORDER BY 1")
    )
    return [str(row[0]) for row in conn.execute(statement, where.params()).fetchall()]


@query
def fellow_members(conn: Connection, group_ids: Sequence[str]) -> list[UserRow]:
    """The users who belong to any of `group_ids`, by id."""
    where = Where()
    where.exists(
        "SELECT 1 FROM group_membership m WHERE m.user_id = u.id AND m.group_id = ANY({})",
        list(group_ids),
    )
    statement = (
        sql.SQL("SELECT u.id, u.first_name, u.last_name, u.email FROM identity_user u")
        + where.sql()
        + sql.SQL(" ORDER BY u.id")
    )
    return [UserRow(*row) for row in conn.execute(statement, where.params()).fetchall()]


@query
def authorized(
    conn: Connection,
    *,
    user_id: str | None,
    group_ids: Sequence[str],
    permission: int,
    resource_type: int,
    resource_id: str | None = None,
) -> bool:
    """Whether the user, a member of `group_ids`, holds every bit of `permission` on the
    resource, by Camunda's precedence over the rows that could apply (the user's, their
    groups', the global ones; on the resource id or `*`)."""
    where = Where()
    where.equals("a.resource_type", resource_type)
    where.any_of("a.resource_id", [ANY] if resource_id is None else [ANY, resource_id])
    where.add(
        "(a.type = {} OR a.user_id = {} OR a.group_id = ANY({}))",
        int(AuthorizationType.GLOBAL),
        user_id,
        list(group_ids),
    )
    statement = sql.SQL(_AUTHORIZATION) + sql.SQL("FROM authorization_rule a") + where.sql()
    rules = [
        Rule(r.type, r.user_id, r.group_id, r.resource_type, r.resource_id, r.permissions)
        for r in (_authorization(row) for row in conn.execute(statement, where.params()).fetchall())
    ]
    return is_authorized(
        rules,
        user_id=user_id,
        group_ids=group_ids,
        permission=permission,
        resource_type=resource_type,
        resource_id=resource_id,
    )
