"""Camunda's authorizations: `/authorization` (list, count, check, create, get, update, delete),
as Camunda 7's REST reference gives them. Reading and changing them needs the admin role; any
signed-in user may check their own permissions (checking another user's needs READ on the
Authorization resource, as in Camunda)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from starlette.responses import Response

from app import gates
from app.auth import user_id_of
from app.camunda.errors import invalid_request
from app.camunda.http import Call, Endpoint, found, json_response, listed, no_content, unfiltered
from app.camunda.identity_users import links, run, text_field
from app.gates import Gate
from app.params import as_uuid
from engine.commands.identity_authorizations import DeleteAuthorization, SaveAuthorization
from engine.core import actors
from engine.db.ids import new_id
from engine.identity.permissions import (
    ANY,
    PERMISSIONS,
    RESOURCE_NAMES,
    AuthorizationType,
    ResourceType,
    permission_bits,
    permission_names,
)
from engine.queries import identity as reads
from engine.queries.identity import AuthorizationRow


def authorization_view(call: Call, rule: AuthorizationRow, *, linked: bool) -> dict[str, Any]:
    resource = rule.resource_type
    view: dict[str, Any] = {
        "id": str(rule.id),
        "type": int(rule.type),
        "permissions": permission_names(ResourceType(resource), rule.permissions)
        if resource in PERMISSIONS
        else permission_names(ResourceType.APPLICATION, rule.permissions),
        "userId": rule.user_id,
        "groupId": rule.group_id,
        "resourceType": resource,
        "resourceId": rule.resource_id,
        "removalTime": None,
        "rootProcessInstanceId": None,
    }
    if linked:
        href = f"{call.base}/authorization/{rule.id}"
        view["links"] = [
            {"method": "GET", "href": href, "rel": "self"},
            {"method": "PUT", "href": href, "rel": "update"},
            {"method": "DELETE", "href": href, "rel": "delete"},
        ]
    return view


def _type(value: Any, name: str) -> AuthorizationType:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid_request(
            f"'{name}' must be 0 (global), 1 (grant) or 2 (revoke), not {value!r}"
        )
    try:
        return AuthorizationType(value)
    except ValueError:
        raise invalid_request(
            f"'{name}' must be 0 (global), 1 (grant) or 2 (revoke), not {value!r}"
        ) from None


def _resource_type(value: Any, name: str) -> ResourceType:
    if isinstance(value, bool) or not isinstance(value, int) or value not in RESOURCE_NAMES:
        known = ", ".join(str(int(r)) for r in ResourceType)
        raise invalid_request(f"'{name}' must be a resource type ({known}), not {value!r}")
    return ResourceType(value)


def _bits(resource: ResourceType, names: Any) -> int:
    if names is None:
        return 0
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise invalid_request("'permissions' must be an array of permission names")
    try:
        return permission_bits(resource, names)
    except KeyError as exc:
        raise invalid_request(
            f"'permissions': the permission {exc.args[0]!r} is not valid for the"
            f" '{RESOURCE_NAMES[resource]}' resource type"
        ) from None


def _query(call: Call, *, count: bool = False) -> list[AuthorizationRow] | int:
    kind = call.text("type")
    resource_type = call.integer("resourceType")
    return reads.authorizations(
        call.engine,
        call.page(reads.AUTHORIZATION_SORT),
        authorization_id=call.uuid("id"),
        type=None if kind is None else _type(kind, "type"),
        user_ids=call.csv("userIdIn"),
        group_ids=call.csv("groupIdIn"),
        resource_type=resource_type,
        resource_id=call.text("resourceId"),
        count=count,
    )


def _one(call: Call) -> AuthorizationRow:
    text = call.path["id"]
    rows = listed(
        reads.authorizations(call.engine, unfiltered(call).page({}), authorization_id=as_uuid(text))
    )
    return found(rows[0] if rows else None, f"Authorization with id {text} does not exist.")


def list_authorizations(call: Call) -> Response:
    return json_response(
        [authorization_view(call, row, linked=False) for row in listed(_query(call))]
    )


def count_authorizations(call: Call) -> Response:
    return json_response({"count": _query(call, count=True)})


def authorization_options(call: Call) -> Response:
    admin = [("GET", "", "list"), ("GET", "/count", "count"), ("POST", "/create", "create")]
    return links(
        call,
        "/authorization",
        admin if gates.passes(actors.current(), Gate.READ_AUTHORIZATIONS) else [],
    )


def get_authorization(call: Call) -> Response:
    return json_response(authorization_view(call, _one(call), linked=True))


def _rule(call: Call, rule_id: UUID, kind: AuthorizationType) -> AuthorizationRow:
    body = call.body if isinstance(call.body, dict) else {}
    if body.get("resourceType") is None:
        raise invalid_request("'resourceType' is required: the resource type's integer")
    resource = _resource_type(body.get("resourceType"), "resourceType")
    resource_id = text_field(body, "resourceId", "")
    if resource_id is None:
        raise invalid_request("'resourceId' is required: a resource id or '*'")
    return AuthorizationRow(
        rule_id,
        kind,
        text_field(body, "userId", ""),
        text_field(body, "groupId", ""),
        int(resource),
        resource_id,
        _bits(resource, body.get("permissions")),
    )


def create_authorization(call: Call) -> Response:
    body = call.body if isinstance(call.body, dict) else {}
    if body.get("type") is None:
        raise invalid_request("'type' is required: 0 (global), 1 (grant) or 2 (revoke)")
    rule = _rule(call, new_id(), _type(body.get("type"), "type"))
    run(call, SaveAuthorization(rule, create=True))
    return json_response(authorization_view(call, _one_by_id(call, rule.id), linked=True))


def _one_by_id(call: Call, rule_id: UUID) -> AuthorizationRow:
    rows = listed(
        reads.authorizations(call.engine, unfiltered(call).page({}), authorization_id=rule_id)
    )
    return found(rows[0] if rows else None, f"Authorization with id {rule_id} does not exist.")


def update_authorization(call: Call) -> Response:
    before = _one(call)
    run(call, SaveAuthorization(_rule(call, before.id, before.type), create=False))
    return no_content()


def delete_authorization(call: Call) -> Response:
    run(call, DeleteAuthorization(_one(call).id))
    return no_content()


def check(call: Call) -> Response:
    """Whether the caller (or, for one who may read authorizations, `userId`) holds the
    permission on the resource."""
    permission_name = call.text("permissionName")
    resource_name = call.text("resourceName")
    resource_type = call.integer("resourceType")
    for name, value in (
        ("permissionName", permission_name),
        ("resourceName", resource_name),
        ("resourceType", resource_type),
    ):
        if value is None:
            raise invalid_request(f"Query parameter '{name}' cannot be null")
    assert permission_name is not None and resource_type is not None
    resource = _resource_type(resource_type, "resourceType")
    try:
        permission = permission_bits(resource, [permission_name])
    except KeyError:
        raise invalid_request(
            f"'permissionName': the permission '{permission_name}' is not valid for the"
            f" '{RESOURCE_NAMES[resource]}' resource type"
        ) from None
    current = user_id_of(call.request)
    user_id, group_ids = current, reads.group_ids_of(call.engine, current) if current else []
    asked = call.text("userId")
    if asked is not None and asked != current:
        if current is not None and not reads.authorized(
            call.engine,
            user_id=current,
            group_ids=group_ids,
            permission=permission_bits(ResourceType.AUTHORIZATION, ["READ"]),
            resource_type=int(ResourceType.AUTHORIZATION),
        ):
            raise invalid_request("You must have READ permission for Authorization resource.", 403)
        user_id, group_ids = asked, reads.group_ids_of(call.engine, asked)
    given_groups = call.csv("groupIds")
    if given_groups is not None and asked is not None:
        group_ids = given_groups
    resource_id = call.text("resourceId")
    authorized = reads.authorized(
        call.engine,
        user_id=user_id,
        group_ids=group_ids,
        permission=permission,
        resource_type=int(resource),
        resource_id=None if resource_id in (None, ANY) else resource_id,
    )
    return json_response(
        {
            "permissionName": permission_name,
            "resourceName": resource_name,
            "resourceId": resource_id,
            "authorized": authorized,
        }
    )


endpoints = [
    Endpoint("/authorization", "GET", list_authorizations),
    Endpoint("/authorization", "OPTIONS", authorization_options),
    Endpoint("/authorization/count", "GET", count_authorizations),
    Endpoint("/authorization/check", "GET", check),
    Endpoint("/authorization/create", "POST", create_authorization, body="json"),
    Endpoint("/authorization/{id}", "GET", get_authorization),
    Endpoint("/authorization/{id}", "PUT", update_authorization, body="json"),
    Endpoint("/authorization/{id}", "DELETE", delete_authorization),
]
