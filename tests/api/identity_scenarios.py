"""The identity routes of /api/v1 for the role matrix (tests/api/test_roles.py): a request to
each, on targets made fresh for it, and the identity rows a mutation could change."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from engine.api import Engine
from engine.commands.accounts import CreateUser
from engine.commands.identity import AddGroupMember, CreateGroup
from engine.commands.identity_authorizations import SaveAuthorization
from engine.commands.identity_tenants import AddTenantMember, CreateTenant
from engine.db.ids import new_id
from engine.identity.accounts import Role
from engine.identity.permissions import AuthorizationType, ResourceType
from engine.queries import Connection
from engine.store.identity import AuthorizationRow

Call = tuple[str, dict[str, Any]]
_serial = itertools.count(1)


def _unique(prefix: str) -> str:
    return f"{prefix}-{next(_serial)}"


def _user(engine: Engine) -> str:
    name = _unique("identity-user")
    engine.run(CreateUser(name, Role.VIEWER, "a-long-password"))
    return name


def _group(engine: Engine) -> str:
    group_id = _unique("group")
    engine.run(CreateGroup(group_id, "A group"))
    return group_id


def _tenant(engine: Engine) -> str:
    tenant_id = _unique("tenant")
    engine.run(CreateTenant(tenant_id, "A tenant"))
    return tenant_id


def _authorization(engine: Engine) -> str:
    rule = AuthorizationRow(
        new_id(),
        AuthorizationType.GRANT,
        None,
        _unique("group"),
        int(ResourceType.PROCESS_DEFINITION),
        _unique("definition"),
        2,
    )
    engine.run(SaveAuthorization(rule, create=True))
    return str(rule.id)


def _member(engine: Engine) -> Call:
    group, user = _group(engine), _user(engine)
    engine.run(AddGroupMember(group, user))
    return f"/groups/{group}/members/{user}", {}


def _tenant_user(engine: Engine) -> Call:
    tenant, user = _tenant(engine), _user(engine)
    engine.run(AddTenantMember(tenant, user_id=user))
    return f"/tenants/{tenant}/users/{user}", {}


def _tenant_group(engine: Engine) -> Call:
    tenant, group = _tenant(engine), _group(engine)
    engine.run(AddTenantMember(tenant, group_id=group))
    return f"/tenants/{tenant}/groups/{group}", {}


def _rule_body() -> dict[str, Any]:
    return {
        "json": {
            "type": "grant",
            "group": _unique("group"),
            "resource_type": "ProcessDefinition",
            "resource_id": "*",
            "permissions": ["READ"],
        }
    }


SCENARIOS: dict[tuple[str, str], Callable[[Engine], Call]] = {
    ("POST", "/users/{name}/profile"): lambda e: (
        f"/users/{_user(e)}/profile",
        {"json": {"first_name": "Someone"}},
    ),
    ("POST", "/groups"): lambda e: ("/groups", {"json": {"id": _unique("group")}}),
    ("POST", "/groups/{id}"): lambda e: (f"/groups/{_group(e)}", {"json": {"name": "Renamed"}}),
    ("DELETE", "/groups/{id}"): lambda e: (f"/groups/{_group(e)}", {}),
    ("POST", "/groups/{id}/members/{name}"): lambda e: (
        f"/groups/{_group(e)}/members/{_user(e)}",
        {},
    ),
    ("DELETE", "/groups/{id}/members/{name}"): _member,
    ("POST", "/tenants"): lambda e: ("/tenants", {"json": {"id": _unique("tenant")}}),
    ("POST", "/tenants/{id}"): lambda e: (f"/tenants/{_tenant(e)}", {"json": {"name": "New"}}),
    ("DELETE", "/tenants/{id}"): lambda e: (f"/tenants/{_tenant(e)}", {}),
    ("POST", "/tenants/{id}/users/{name}"): lambda e: (
        f"/tenants/{_tenant(e)}/users/{_user(e)}",
        {},
    ),
    ("DELETE", "/tenants/{id}/users/{name}"): _tenant_user,
    ("POST", "/tenants/{id}/groups/{name}"): lambda e: (
        f"/tenants/{_tenant(e)}/groups/{_group(e)}",
        {},
    ),
    ("DELETE", "/tenants/{id}/groups/{name}"): _tenant_group,
    ("POST", "/authorizations"): lambda e: ("/authorizations", _rule_body()),
    ("POST", "/authorizations/{id}"): lambda e: (
        f"/authorizations/{_authorization(e)}",
        _rule_body(),
    ),
    ("DELETE", "/authorizations/{id}"): lambda e: (f"/authorizations/{_authorization(e)}", {}),
}


def identity_rows(conn: Connection) -> Any:
    """Every user's profile, group, membership, tenant, tenant membership and authorization."""
    return conn.execute(
        "SELECT (SELECT json_agg(u ORDER BY u.id) FROM identity_user u),"
        " (SELECT json_agg(g ORDER BY g.id) FROM identity_group g),"
        " (SELECT json_agg(m ORDER BY m.group_id, m.user_id) FROM group_membership m),"
        " (SELECT json_agg(t ORDER BY t.id) FROM tenant t),"
        " (SELECT json_agg(tm ORDER BY tm.id) FROM tenant_membership tm),"
        " (SELECT json_agg(a ORDER BY a.id) FROM authorization_rule a)"
    ).fetchone()


# The audit entry each route writes (operation, entity, whether it names an instance).
EXPECTED: dict[tuple[str, str], tuple[str, str, bool]] = {
    ("POST", "/users/{name}/profile"): ("Update", "User", False),
    ("POST", "/groups"): ("Create", "Group", False),
    ("POST", "/groups/{id}"): ("Update", "Group", False),
    ("DELETE", "/groups/{id}"): ("Delete", "Group", False),
    ("POST", "/groups/{id}/members/{name}"): ("Create", "Group membership", False),
    ("DELETE", "/groups/{id}/members/{name}"): ("Delete", "Group membership", False),
    ("POST", "/tenants"): ("Create", "Tenant", False),
    ("POST", "/tenants/{id}"): ("Update", "Tenant", False),
    ("DELETE", "/tenants/{id}"): ("Delete", "Tenant", False),
    ("POST", "/tenants/{id}/users/{name}"): ("Create", "TenantMembership", False),
    ("DELETE", "/tenants/{id}/users/{name}"): ("Delete", "TenantMembership", False),
    ("POST", "/tenants/{id}/groups/{name}"): ("Create", "TenantMembership", False),
    ("DELETE", "/tenants/{id}/groups/{name}"): ("Delete", "TenantMembership", False),
    ("POST", "/authorizations"): ("Create", "Authorization", False),
    ("POST", "/authorizations/{id}"): ("Update", "Authorization", False),
    ("DELETE", "/authorizations/{id}"): ("Delete", "Authorization", False),
}
