"""Groups and tenants with their members: `/group` and `/tenant`, as Camunda 7's REST reference
gives them. Reading and changing them needs the admin role."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listed, no_content, unfiltered
from app.camunda.identity_users import is_admin, links, run, text_field
from engine.commands.identity import (
    AddGroupMember,
    CreateGroup,
    DeleteGroup,
    RemoveGroupMember,
    UpdateGroup,
)
from engine.commands.identity_tenants import (
    AddTenantMember,
    CreateTenant,
    DeleteTenant,
    RemoveTenantMember,
    UpdateTenant,
)
from engine.identity.accounts import Role
from engine.queries import identity as reads
from engine.queries.identity import GroupRow, TenantRow


def _body(call: Call) -> dict[str, Any]:
    if not isinstance(call.body, dict):
        raise invalid_request("The request body must be a JSON object")
    return call.body


def _same_id(call: Call, body: dict[str, Any], what: str) -> None:
    given = text_field(body, "id", "")
    if given is not None and given != call.path["id"]:
        raise invalid_request(f"'id' must be the {what}'s id '{call.path['id']}': it cannot change")


def _new_id(body: dict[str, Any], what: str) -> str:
    given = text_field(body, "id", "")
    if not given:
        raise invalid_request(f"'id' is required: the new {what}'s id")
    return given


# -- groups --------------------------------------------------------------------------------------


def group_view(group: GroupRow) -> dict[str, Any]:
    return {"id": group.id, "name": group.name, "type": group.type}


def _groups(call: Call, *, count: bool = False) -> list[GroupRow] | int:
    return reads.groups(
        call.engine,
        call.page(reads.GROUP_SORT),
        group_id=call.text("id"),
        group_ids=call.csv("idIn"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        type=call.text("type"),
        member=call.text("member"),
        member_of_tenant=call.text("memberOfTenant"),
        count=count,
    )


def list_groups(call: Call) -> Response:
    return json_response([group_view(row) for row in listed(_groups(call))])


def count_groups(call: Call) -> Response:
    return json_response({"count": _groups(call, count=True)})


def group_options(call: Call) -> Response:
    admin = [("GET", "", "list"), ("GET", "/count", "count"), ("POST", "/create", "create")]
    return links(call, "/group", admin if is_admin(call) else [])


def get_group(call: Call) -> Response:
    group_id = call.path["id"]
    rows = listed(reads.groups(call.engine, unfiltered(call).page({}), group_id=group_id))
    row = found(rows[0] if rows else None, f"Group with id {group_id} does not exist")
    return json_response(group_view(row))


def create_group(call: Call) -> Response:
    body = _body(call)
    run(
        call,
        CreateGroup(
            _new_id(body, "group"), text_field(body, "name", ""), text_field(body, "type", "")
        ),
    )
    return no_content()


def update_group(call: Call) -> Response:
    body = _body(call)
    _same_id(call, body, "group")
    run(
        call,
        UpdateGroup(call.path["id"], text_field(body, "name", ""), text_field(body, "type", "")),
    )
    return no_content()


def delete_group(call: Call) -> Response:
    run(call, DeleteGroup(call.path["id"]))
    return no_content()


def add_group_member(call: Call) -> Response:
    run(call, AddGroupMember(call.path["id"], call.path["name"]))
    return no_content()


def remove_group_member(call: Call) -> Response:
    run(call, RemoveGroupMember(call.path["id"], call.path["name"]))
    return no_content()


# -- tenants -------------------------------------------------------------------------------------


def tenant_view(tenant: TenantRow) -> dict[str, Any]:
    return {"id": tenant.id, "name": tenant.name}


def _tenants(call: Call, *, count: bool = False) -> list[TenantRow] | int:
    return reads.tenants(
        call.engine,
        call.page(reads.TENANT_SORT),
        tenant_id=call.text("id"),
        tenant_ids=call.csv("idIn"),
        name=call.text("name"),
        name_like=call.text("nameLike"),
        user_member=call.text("userMember"),
        group_member=call.text("groupMember"),
        including_groups_of_user=bool(call.flag("includingGroupsOfUser")),
        count=count,
    )


def list_tenants(call: Call) -> Response:
    return json_response([tenant_view(row) for row in listed(_tenants(call))])


def count_tenants(call: Call) -> Response:
    return json_response({"count": _tenants(call, count=True)})


def tenant_options(call: Call) -> Response:
    admin = [("GET", "", "list"), ("GET", "/count", "count"), ("POST", "/create", "create")]
    return links(call, "/tenant", admin if is_admin(call) else [])


def get_tenant(call: Call) -> Response:
    tenant_id = call.path["id"]
    rows = listed(reads.tenants(call.engine, unfiltered(call).page({}), tenant_id=tenant_id))
    row = found(rows[0] if rows else None, f"Tenant with id {tenant_id} does not exist")
    return json_response(tenant_view(row))


def create_tenant(call: Call) -> Response:
    body = _body(call)
    run(call, CreateTenant(_new_id(body, "tenant"), text_field(body, "name", "")))
    return no_content()


def update_tenant(call: Call) -> Response:
    body = _body(call)
    _same_id(call, body, "tenant")
    run(call, UpdateTenant(call.path["id"], text_field(body, "name", "")))
    return no_content()


def delete_tenant(call: Call) -> Response:
    run(call, DeleteTenant(call.path["id"]))
    return no_content()


def add_tenant_user(call: Call) -> Response:
    run(call, AddTenantMember(call.path["id"], user_id=call.path["name"]))
    return no_content()


def remove_tenant_user(call: Call) -> Response:
    run(call, RemoveTenantMember(call.path["id"], user_id=call.path["name"]))
    return no_content()


def add_tenant_group(call: Call) -> Response:
    run(call, AddTenantMember(call.path["id"], group_id=call.path["name"]))
    return no_content()


def remove_tenant_group(call: Call) -> Response:
    run(call, RemoveTenantMember(call.path["id"], group_id=call.path["name"]))
    return no_content()


_USERS = "/tenant/{id}/user-members/{name}"
_GROUPS = "/tenant/{id}/group-members/{name}"

endpoints = [
    Endpoint("/group", "GET", Role.ADMIN, list_groups),
    Endpoint("/group", "OPTIONS", Role.VIEWER, group_options),
    Endpoint("/group/count", "GET", Role.ADMIN, count_groups),
    Endpoint("/group/create", "POST", Role.ADMIN, create_group, body="json"),
    Endpoint("/group/{id}", "GET", Role.ADMIN, get_group),
    Endpoint("/group/{id}", "PUT", Role.ADMIN, update_group, body="json"),
    Endpoint("/group/{id}", "DELETE", Role.ADMIN, delete_group),
    Endpoint("/group/{id}/members/{name}", "PUT", Role.ADMIN, add_group_member),
    Endpoint("/group/{id}/members/{name}", "DELETE", Role.ADMIN, remove_group_member),
    Endpoint("/tenant", "GET", Role.ADMIN, list_tenants),
    Endpoint("/tenant", "OPTIONS", Role.VIEWER, tenant_options),
    Endpoint("/tenant/count", "GET", Role.ADMIN, count_tenants),
    Endpoint("/tenant/create", "POST", Role.ADMIN, create_tenant, body="json"),
    Endpoint("/tenant/{id}", "GET", Role.ADMIN, get_tenant),
    Endpoint("/tenant/{id}", "PUT", Role.ADMIN, update_tenant, body="json"),
    Endpoint("/tenant/{id}", "DELETE", Role.ADMIN, delete_tenant),
    Endpoint(_USERS, "PUT", Role.ADMIN, add_tenant_user),
    Endpoint(_USERS, "DELETE", Role.ADMIN, remove_tenant_user),
    Endpoint(_GROUPS, "PUT", Role.ADMIN, add_tenant_group),
    Endpoint(_GROUPS, "DELETE", Role.ADMIN, remove_tenant_group),
]
