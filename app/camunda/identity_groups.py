"""Groups and tenants with their members: `/group` and `/tenant`, as Camunda 7's REST reference
gives them. Reading and changing them needs the admin role."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app import gates
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listed, no_content, unfiltered
from app.camunda.identity_users import links, run, text_field
from app.gates import Gate
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
from engine.core import actors
from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
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


def _body_page(call: Call, body: dict[str, Any], sortable: dict[str, Any]) -> CamundaPage:
    """The page of a query sent as a body: firstResult and maxResults as query parameters (or,
    as some clients send them, in the body), the order as Camunda's `sorting` array (or a
    single sortBy and sortOrder)."""
    first = call.integer("firstResult")
    maximum = call.integer("maxResults")
    first = call.body_int("firstResult", first) or 0
    maximum = call.body_int("maxResults", maximum)
    sorting = body.get("sorting")
    if sorting is None and body.get("sortBy") is not None:
        sorting = [{"sortBy": body.get("sortBy"), "sortOrder": body.get("sortOrder")}]
    if sorting is not None and not isinstance(sorting, list):
        raise invalid_request("'sorting' must be an array of {sortBy, sortOrder}")
    order: list[tuple[str, bool]] = []
    for item in sorting or []:
        by = item.get("sortBy") if isinstance(item, dict) else None
        direction = item.get("sortOrder", "asc") if isinstance(item, dict) else None
        if by not in sortable or direction not in ("asc", "desc"):
            raise invalid_request(
                f"'sorting': sortBy must be one of {', '.join(sortable)} and sortOrder asc or"
                f" desc, not {item!r}"
            )
        order.append((str(by), direction == "desc"))
    return CamundaPage(first=first, max=maximum, sort=tuple(order))


def query_groups(call: Call) -> Response:
    """Camunda's `POST /group`: the filters of `GET /group` in a JSON body."""
    body = _body(call)
    ids = body.get("idIn")
    if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        raise invalid_request("'idIn' must be an array of group ids")
    rows = reads.groups(
        call.engine,
        _body_page(call, body, reads.GROUP_SORT),
        group_id=text_field(body, "id", ""),
        group_ids=ids,
        name=text_field(body, "name", ""),
        name_like=text_field(body, "nameLike", ""),
        type=text_field(body, "type", ""),
        member=text_field(body, "member", ""),
        member_of_tenant=text_field(body, "memberOfTenant", ""),
    )
    return json_response([group_view(row) for row in listed(rows)])


def list_groups(call: Call) -> Response:
    return json_response([group_view(row) for row in listed(_groups(call))])


def count_groups(call: Call) -> Response:
    return json_response({"count": _groups(call, count=True)})


def group_options(call: Call) -> Response:
    admin = [("GET", "", "list"), ("GET", "/count", "count"), ("POST", "/create", "create")]
    return links(call, "/group", admin if gates.passes(actors.current(), Gate.READ_GROUPS) else [])


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
    return links(
        call, "/tenant", admin if gates.passes(actors.current(), Gate.READ_TENANTS) else []
    )


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
    Endpoint("/group", "GET", list_groups),
    Endpoint("/group", "POST", query_groups, body="json"),
    Endpoint("/group", "OPTIONS", group_options),
    Endpoint("/group/count", "GET", count_groups),
    Endpoint("/group/create", "POST", create_group, body="json"),
    Endpoint("/group/{id}", "GET", get_group),
    Endpoint("/group/{id}", "PUT", update_group, body="json"),
    Endpoint("/group/{id}", "DELETE", delete_group),
    Endpoint("/group/{id}/members/{name}", "PUT", add_group_member),
    Endpoint("/group/{id}/members/{name}", "DELETE", remove_group_member),
    Endpoint("/tenant", "GET", list_tenants),
    Endpoint("/tenant", "OPTIONS", tenant_options),
    Endpoint("/tenant/count", "GET", count_tenants),
    Endpoint("/tenant/create", "POST", create_tenant, body="json"),
    Endpoint("/tenant/{id}", "GET", get_tenant),
    Endpoint("/tenant/{id}", "PUT", update_tenant, body="json"),
    Endpoint("/tenant/{id}", "DELETE", delete_tenant),
    Endpoint(_USERS, "PUT", add_tenant_user),
    Endpoint(_USERS, "DELETE", remove_tenant_user),
    Endpoint(_GROUPS, "PUT", add_tenant_group),
    Endpoint(_GROUPS, "DELETE", remove_tenant_group),
]
