"""Users' profiles, groups, tenants and Camunda's authorizations in the native API's style (the
same commands and reads as /engine-rest/user, /group, /tenant and /authorization). Admins only,
but for a user's own profile and checking one's own permissions. Resource types and
authorization types are named (`ProcessDefinition`, `grant`), permissions by their names."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.requests import Request
from starlette.responses import Response

from app import gates
from app.api.body import Body
from app.api.http import Op, Param, Reply, call, engine_of, path_id, path_text, reply, run
from app.api.schemas import BOOLEAN, STRING, array, nullable, record, ref, request
from app.api.schemas import UUID as UUID_SCHEMA
from app.auth import require, user_id_of
from app.gates import Gate
from app.params import Query
from engine.commands.identity import (
    AddGroupMember,
    CreateGroup,
    DeleteGroup,
    RemoveGroupMember,
    UpdateGroup,
    UpdateUserProfile,
)
from engine.commands.identity_authorizations import DeleteAuthorization, SaveAuthorization
from engine.commands.identity_tenants import (
    AddTenantMember,
    CreateTenant,
    DeleteTenant,
    RemoveTenantMember,
    UpdateTenant,
)
from engine.core import actors
from engine.db.ids import new_id
from engine.errors import BadRequest, NotFound
from engine.identity.permissions import (
    RESOURCE_NAMES,
    AuthorizationType,
    ResourceType,
    permission_bits,
    permission_names,
    resource_named,
)
from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
from engine.queries.identity import AuthorizationRow, GroupRow, TenantRow, UserRow

ALL_ROWS = CamundaPage()
TYPES = {t.name.lower(): t for t in AuthorizationType}

PROFILE = record(
    {
        "id": STRING,
        "first_name": nullable(STRING),
        "last_name": nullable(STRING),
        "email": nullable(STRING),
    }
)
GROUP = record({"id": STRING, "name": nullable(STRING), "type": nullable(STRING)})
TENANT = record({"id": STRING, "name": nullable(STRING)})
AUTHORIZATION = record(
    {
        "id": UUID_SCHEMA,
        "type": {**STRING, "enum": list(TYPES)},
        "user": nullable(STRING),
        "group": nullable(STRING),
        "resource_type": STRING,
        "resource_id": STRING,
        "permissions": array(STRING),
    }
)
CHECK = record(
    {
        "permission": STRING,
        "resource_type": STRING,
        "resource_id": nullable(STRING),
        "authorized": BOOLEAN,
    }
)


def _list(item: dict[str, Any]) -> dict[str, Any]:
    return record({"items": array(item), "next": {"type": "null"}})


PROFILE_BODY = request({"first_name": STRING, "last_name": STRING, "email": STRING})
GROUP_BODY = request({"id": STRING, "name": STRING, "type": STRING}, required=("id",))
GROUP_CHANGE = request({"name": STRING, "type": STRING})
TENANT_BODY = request({"id": STRING, "name": STRING}, required=("id",))
TENANT_CHANGE = request({"name": STRING})
AUTHORIZATION_BODY = request(
    {
        "type": {**STRING, "enum": list(TYPES)},
        "user": STRING,
        "group": STRING,
        "resource_type": STRING,
        "resource_id": STRING,
        "permissions": array(STRING),
    },
    required=("type", "resource_type", "resource_id"),
)


def _items(values: list[dict[str, Any]]) -> dict[str, Any]:
    return {"items": values, "next": None}


# -- profiles -----------------------------------------------------------------------------------


def _profile(user: UserRow) -> dict[str, Any]:
    return {
        "id": user.id,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
    }


def _user(engine: Any, user: str) -> UserRow:
    rows = reads.users(engine, ALL_ROWS, user_id=user)
    assert isinstance(rows, list)
    if not rows:
        raise NotFound(f"no user named '{user}'", field="name")
    return rows[0]


async def get_profile(request: Request) -> Response:
    user = path_text(request, "name")
    gates.demand_readable_user(actors.current(), user)
    return reply(_profile(await call(_user, engine_of(request), user)))


async def set_profile(request: Request) -> Response:
    user = path_text(request, "name")
    body = await Body.read(request, PROFILE_BODY)
    await run(
        request,
        UpdateUserProfile(
            user, body.text("first_name"), body.text("last_name"), body.text("email")
        ),
    )
    return reply(_profile(await call(_user, engine_of(request), user)))


# -- groups -------------------------------------------------------------------------------------


def _group(row: GroupRow) -> dict[str, Any]:
    return {"id": row.id, "name": row.name, "type": row.type}


def _one_group(engine: Any, group_id: str) -> GroupRow:
    rows = reads.groups(engine, ALL_ROWS, group_id=group_id)
    assert isinstance(rows, list)
    if not rows:
        raise NotFound(f"no group '{group_id}'", field="id")
    return rows[0]


async def list_groups(request: Request) -> Response:
    query = Query(request.query_params)
    rows = await call(
        reads.groups,
        engine_of(request),
        ALL_ROWS,
        member=query.text("member"),
        type=query.text("type"),
        name_like=query.text("name_like"),
    )
    assert isinstance(rows, list)
    return reply(_items([_group(row) for row in rows]))


async def add_group(request: Request) -> Response:
    body = await Body.read(request, GROUP_BODY)
    group_id = body.required_text("id")
    await run(request, CreateGroup(group_id, body.text("name"), body.text("type")))
    return reply(_group(await call(_one_group, engine_of(request), group_id)), 201)


async def get_group(request: Request) -> Response:
    return reply(_group(await call(_one_group, engine_of(request), path_text(request, "id"))))


async def change_group(request: Request) -> Response:
    group_id = path_text(request, "id")
    body = await Body.read(request, GROUP_CHANGE)
    await run(request, UpdateGroup(group_id, body.text("name"), body.text("type")))
    return reply(_group(await call(_one_group, engine_of(request), group_id)))


async def delete_group(request: Request) -> Response:
    await run(request, DeleteGroup(path_text(request, "id")))
    return Response(status_code=204)


async def add_member(request: Request) -> Response:
    await run(request, AddGroupMember(path_text(request, "id"), path_text(request, "name")))
    return Response(status_code=204)


async def remove_member(request: Request) -> Response:
    await run(request, RemoveGroupMember(path_text(request, "id"), path_text(request, "name")))
    return Response(status_code=204)


# -- tenants ------------------------------------------------------------------------------------


def _tenant(row: TenantRow) -> dict[str, Any]:
    return {"id": row.id, "name": row.name}


def _one_tenant(engine: Any, tenant_id: str) -> TenantRow:
    rows = reads.tenants(engine, ALL_ROWS, tenant_id=tenant_id)
    assert isinstance(rows, list)
    if not rows:
        raise NotFound(f"no tenant '{tenant_id}'", field="id")
    return rows[0]


async def list_tenants(request: Request) -> Response:
    query = Query(request.query_params)
    rows = await call(
        reads.tenants,
        engine_of(request),
        ALL_ROWS,
        user_member=query.text("user"),
        group_member=query.text("group"),
        including_groups_of_user=True,
    )
    assert isinstance(rows, list)
    return reply(_items([_tenant(row) for row in rows]))


async def add_tenant(request: Request) -> Response:
    body = await Body.read(request, TENANT_BODY)
    tenant_id = body.required_text("id")
    await run(request, CreateTenant(tenant_id, body.text("name")))
    return reply(_tenant(await call(_one_tenant, engine_of(request), tenant_id)), 201)


async def get_tenant(request: Request) -> Response:
    return reply(_tenant(await call(_one_tenant, engine_of(request), path_text(request, "id"))))


async def change_tenant(request: Request) -> Response:
    tenant_id = path_text(request, "id")
    body = await Body.read(request, TENANT_CHANGE)
    await run(request, UpdateTenant(tenant_id, body.text("name")))
    return reply(_tenant(await call(_one_tenant, engine_of(request), tenant_id)))


async def delete_tenant(request: Request) -> Response:
    await run(request, DeleteTenant(path_text(request, "id")))
    return Response(status_code=204)


def _tenant_member(request: Request, kind: str) -> dict[str, str]:
    return {"user_id" if kind == "users" else "group_id": path_text(request, "name")}


async def add_tenant_user(request: Request) -> Response:
    await run(
        request, AddTenantMember(path_text(request, "id"), **_tenant_member(request, "users"))
    )
    return Response(status_code=204)


async def remove_tenant_user(request: Request) -> Response:
    member = _tenant_member(request, "users")
    await run(request, RemoveTenantMember(path_text(request, "id"), **member))
    return Response(status_code=204)


async def add_tenant_group(request: Request) -> Response:
    member = _tenant_member(request, "groups")
    await run(request, AddTenantMember(path_text(request, "id"), **member))
    return Response(status_code=204)


async def remove_tenant_group(request: Request) -> Response:
    member = _tenant_member(request, "groups")
    await run(request, RemoveTenantMember(path_text(request, "id"), **member))
    return Response(status_code=204)


# -- authorizations -----------------------------------------------------------------------------


def _resource(name: str | None, field: str) -> ResourceType:
    found = resource_named(name or "")
    if found is None:
        known = ", ".join(RESOURCE_NAMES.values())
        raise BadRequest(f"unknown resource type '{name}'; known: {known}", field=field)
    return found


def _bits(resource: ResourceType, names: tuple[str, ...] | None, field: str) -> int:
    try:
        return permission_bits(resource, list(names or ()))
    except KeyError as exc:
        raise BadRequest(
            f"'{exc.args[0]}' is no permission of {RESOURCE_NAMES[resource]}", field=field
        ) from None


def _authorization(row: AuthorizationRow) -> dict[str, Any]:
    resource = ResourceType(row.resource_type)
    return {
        "id": str(row.id),
        "type": row.type.name.lower(),
        "user": row.user_id,
        "group": row.group_id,
        "resource_type": RESOURCE_NAMES[resource],
        "resource_id": row.resource_id,
        "permissions": permission_names(resource, row.permissions),
    }


def _one_authorization(engine: Any, rule_id: UUID) -> AuthorizationRow:
    rows = reads.authorizations(engine, ALL_ROWS, authorization_id=rule_id)
    assert isinstance(rows, list)
    if not rows:
        raise NotFound(f"no authorization '{rule_id}'", field="id")
    return rows[0]


async def list_authorizations(request: Request) -> Response:
    query = Query(request.query_params)
    kind = query.one_of("type", TYPES)
    resource = query.text("resource_type")
    user, group = query.text("user"), query.text("group")
    rows = await call(
        reads.authorizations,
        engine_of(request),
        ALL_ROWS,
        type=None if kind is None else TYPES[kind],
        user_ids=None if user is None else [user],
        group_ids=None if group is None else [group],
        resource_type=None if resource is None else int(_resource(resource, "resource_type")),
        resource_id=query.text("resource_id"),
    )
    assert isinstance(rows, list)
    return reply(_items([_authorization(row) for row in rows]))


async def _save(request: Request, rule_id: UUID, create: bool) -> AuthorizationRow:
    body = await Body.read(request, AUTHORIZATION_BODY)
    kind = body.required_text("type")
    if kind not in TYPES:
        raise BadRequest(f"'type' is one of {', '.join(TYPES)}", field="type")
    resource = _resource(body.required_text("resource_type"), "resource_type")
    rule = AuthorizationRow(
        rule_id,
        TYPES[kind],
        body.text("user"),
        body.text("group"),
        int(resource),
        body.required_text("resource_id"),
        _bits(resource, body.strings("permissions"), "permissions"),
    )
    await run(request, SaveAuthorization(rule, create=create))
    return await call(_one_authorization, engine_of(request), rule_id)


async def add_authorization(request: Request) -> Response:
    return reply(_authorization(await _save(request, new_id(), True)), 201)


async def get_authorization(request: Request) -> Response:
    row = await call(_one_authorization, engine_of(request), path_id(request))
    return reply(_authorization(row))


async def change_authorization(request: Request) -> Response:
    return reply(_authorization(await _save(request, path_id(request), False)))


async def delete_authorization(request: Request) -> Response:
    await run(request, DeleteAuthorization(path_id(request)))
    return Response(status_code=204)


def _check(engine: Any, user: str | None, permission: int, resource: int, rid: str | None) -> bool:
    groups = reads.group_ids_of(engine, user) if user else []
    return reads.authorized(
        engine,
        user_id=user,
        group_ids=groups,
        permission=permission,
        resource_type=resource,
        resource_id=rid,
    )


async def check_authorization(request: Request) -> Response:
    query = Query(request.query_params)
    name = query.text("permission")
    if name is None:
        raise BadRequest("'permission' is required", field="permission")
    resource = _resource(query.text("resource_type"), "resource_type")
    bits = _bits(resource, (name,), "permission")
    user = query.text("user") or user_id_of(request)
    if user != user_id_of(request):
        require(request, Gate.READ_AUTHORIZATIONS)
    resource_id = query.text("resource_id")
    allowed = await call(_check, engine_of(request), user, bits, int(resource), resource_id)
    return reply(
        {
            "permission": name,
            "resource_type": RESOURCE_NAMES[resource],
            "resource_id": resource_id,
            "authorized": allowed,
        }
    )


_NONE = {204: Reply("Done", None)}
# What a caller who is no admin gets asking about somebody else.
_OTHERS = Reply("Somebody else's, and the caller is no admin", ref("Error"))
_G, _T, _A = "/groups/{id}", "/tenants/{id}", "/authorizations/{id}"

operations = [
    Op(
        "GET",
        "/users/{name}/profile",
        get_profile,
        "A user's profile (anyone: their own)",
        replies={200: Reply("Profile", PROFILE), 403: _OTHERS},
    ),
    Op(
        "POST",
        "/users/{name}/profile",
        set_profile,
        "Change a user's profile",
        body=PROFILE_BODY,
        body_required=True,
        replies={200: Reply("Profile", PROFILE)},
    ),
    Op(
        "GET",
        "/groups",
        list_groups,
        "List groups",
        query=(
            Param("member", STRING, "the groups of this user"),
            Param("type", STRING),
            Param("name_like", STRING, "a LIKE pattern"),
        ),
        replies={200: Reply("Groups", _list(GROUP))},
    ),
    Op(
        "POST",
        "/groups",
        add_group,
        "Create a group",
        body=GROUP_BODY,
        body_required=True,
        replies={201: Reply("Created", GROUP)},
    ),
    Op("GET", _G, get_group, "A group", replies={200: Reply("Group", GROUP)}),
    Op(
        "POST",
        _G,
        change_group,
        "Change a group's name and type (not a built-in group's)",
        body=GROUP_CHANGE,
        body_required=True,
        replies={200: Reply("Group", GROUP)},
    ),
    Op("DELETE", _G, delete_group, "Delete a group (not a built-in one)", replies=_NONE),
    Op(
        "POST",
        _G + "/members/{name}",
        add_member,
        "Add a user to a group",
        replies=_NONE,
    ),
    Op(
        "DELETE",
        _G + "/members/{name}",
        remove_member,
        "Take a user out of a group (never the last admin)",
        replies=_NONE,
    ),
    Op(
        "GET",
        "/tenants",
        list_tenants,
        "List tenants",
        query=(
            Param("user", STRING, "the tenants of this user, also through their groups"),
            Param("group", STRING, "the tenants of this group"),
        ),
        replies={200: Reply("Tenants", _list(TENANT))},
    ),
    Op(
        "POST",
        "/tenants",
        add_tenant,
        "Create a tenant",
        body=TENANT_BODY,
        body_required=True,
        replies={201: Reply("Created", TENANT)},
    ),
    Op(
        "GET",
        _T,
        get_tenant,
        "A tenant",
        replies={200: Reply("Tenant", TENANT)},
    ),
    Op(
        "POST",
        _T,
        change_tenant,
        "Rename a tenant",
        body=TENANT_CHANGE,
        body_required=True,
        replies={200: Reply("Tenant", TENANT)},
    ),
    Op("DELETE", _T, delete_tenant, "Delete a tenant", replies=_NONE),
    Op(
        "POST",
        _T + "/users/{name}",
        add_tenant_user,
        "Add a user to a tenant",
        replies=_NONE,
    ),
    Op(
        "DELETE",
        _T + "/users/{name}",
        remove_tenant_user,
        "Take a user out of a tenant",
        replies=_NONE,
    ),
    Op(
        "POST",
        _T + "/groups/{name}",
        add_tenant_group,
        "Add a group to a tenant",
        replies=_NONE,
    ),
    Op(
        "DELETE",
        _T + "/groups/{name}",
        remove_tenant_group,
        "Take a group out of a tenant",
        replies=_NONE,
    ),
    Op(
        "GET",
        "/authorizations",
        list_authorizations,
        "List authorizations",
        query=(
            Param("type", STRING, "global, grant or revoke"),
            Param("user", STRING),
            Param("group", STRING),
            Param("resource_type", STRING, "e.g. ProcessDefinition"),
            Param("resource_id", STRING),
        ),
        replies={200: Reply("Authorizations", _list(AUTHORIZATION))},
    ),
    Op(
        "GET",
        "/authorizations/check",
        check_authorization,
        "Whether a user (anyone: themselves) holds a permission, by Camunda's precedence",
        query=(
            Param("permission", STRING, required=True),
            Param("resource_type", STRING, required=True),
            Param("resource_id", STRING),
            Param("user", STRING, "admins: another user"),
        ),
        replies={200: Reply("Checked", CHECK), 403: _OTHERS},
    ),
    Op(
        "POST",
        "/authorizations",
        add_authorization,
        "Create an authorization",
        body=AUTHORIZATION_BODY,
        body_required=True,
        replies={201: Reply("Created", AUTHORIZATION)},
    ),
    Op(
        "GET",
        _A,
        get_authorization,
        "An authorization",
        replies={200: Reply("Authorization", AUTHORIZATION)},
    ),
    Op(
        "POST",
        _A,
        change_authorization,
        "Change an authorization",
        body=AUTHORIZATION_BODY,
        body_required=True,
        replies={200: Reply("Authorization", AUTHORIZATION)},
    ),
    Op("DELETE", _A, delete_authorization, "Delete an authorization", replies=_NONE),
]
