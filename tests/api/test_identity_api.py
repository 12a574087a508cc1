"""/api/v1's users' profiles, groups, tenants and authorizations over HTTP: the answers, the
admin role, a user's own profile and permission check, the last admin kept, and every answer
matching its OpenAPI schema."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Client
from tests.api.test_openapi import problems
from tests.server import PASSWORD


def _valid(doc: dict[str, Any], method: str, path: str, response: httpx.Response) -> Any:
    documented = doc["paths"][path][method]["responses"]
    assert str(response.status_code) in documented, (method, path, response.text)
    schema = documented[str(response.status_code)]["content"]["application/json"]["schema"]
    assert problems(response.json(), schema, doc) == [], (method, path, response.text)
    return response.json()


def test_groups_tenants_and_profiles(admin: httpx.Client, client: Client) -> None:
    # The user `viewer` (an API token of the viewer group is nobody's own).
    viewer = client("", auth=("viewer", PASSWORD))
    doc = viewer.get("/openapi.json").json()
    created = admin.post("/groups", json={"id": "api-sales", "name": "Sales"})
    assert created.status_code == 201, created.text
    assert _valid(doc, "post", "/groups", created) == {
        "id": "api-sales",
        "name": "Sales",
        "type": None,
    }
    assert admin.post("/groups/api-sales/members/viewer").status_code == 204
    listed = _valid(doc, "get", "/groups", admin.get("/groups", params={"member": "viewer"}))
    assert listed == {
        "items": [
            {"id": "api-sales", "name": "Sales", "type": None},
            {"id": "viewer", "name": "Viewers", "type": "SYSTEM"},
        ],
        "next": None,
    }
    changed = admin.post("/groups/api-sales", json={"name": "Sales EMEA", "type": "WORKFLOW"})
    assert _valid(doc, "post", "/groups/{id}", changed)["name"] == "Sales EMEA"
    assert admin.post("/groups/viewer", json={"name": "Lookers"}).status_code == 400
    assert admin.delete("/groups/admin").status_code == 400
    assert admin.delete("/groups/api-sales/members/viewer").status_code == 204
    assert admin.delete("/groups/api-sales").status_code == 204
    assert admin.get("/groups/api-sales").status_code == 404
    # A viewer reads the groups they belong to and no other (READ on groups narrows the list).
    assert [g["id"] for g in viewer.get("/groups").json()["items"]] == ["viewer"]

    tenant = admin.post("/tenants", json={"id": "api-north", "name": "North"})
    assert _valid(doc, "post", "/tenants", tenant) == {"id": "api-north", "name": "North"}
    assert admin.post("/tenants/api-north/groups/viewer").status_code == 204
    # The viewer belongs to the tenant through their group.
    of_viewer = admin.get("/tenants", params={"user": "viewer"})
    assert _valid(doc, "get", "/tenants", of_viewer)["items"] == [
        {"id": "api-north", "name": "North"}
    ]
    assert admin.delete("/tenants/api-north/groups/viewer").status_code == 204
    assert admin.get("/tenants", params={"user": "viewer"}).json()["items"] == []
    assert admin.delete("/tenants/api-north").status_code == 204
    assert admin.get("/tenants/api-north").status_code == 404

    own = viewer.get("/users/viewer/profile")
    assert _valid(doc, "get", "/users/{name}/profile", own) == {
        "id": "viewer",
        "first_name": None,
        "last_name": None,
        "email": None,
    }
    assert viewer.get("/users/admin/profile").status_code == 403
    # Their own profile is theirs to change (UPDATE_OWN_USER), another's needs UPDATE on them.
    assert viewer.post("/users/viewer/profile", json={"first_name": "V"}).status_code == 200
    assert viewer.post("/users/admin/profile", json={"first_name": "A"}).status_code == 403
    set_profile = admin.post("/users/viewer/profile", json={"first_name": "Vera", "email": "v@x"})
    assert _valid(doc, "post", "/users/{name}/profile", set_profile)["first_name"] == "Vera"
    unknown = admin.post("/users/viewer/profile", json={"nickname": "V"})
    assert unknown.status_code == 400
    assert "nickname" in unknown.text


def test_authorizations_and_the_check(admin: httpx.Client, client: Client) -> None:
    viewer = client("", auth=("viewer", PASSWORD))
    doc = viewer.get("/openapi.json").json()
    body = {
        "type": "revoke",
        "user": "viewer",
        "resource_type": "ProcessDefinition",
        "resource_id": "payroll",
        "permissions": ["READ"],
    }
    created = admin.post("/authorizations", json=body)
    rule = _valid(doc, "post", "/authorizations", created)
    assert rule == {
        "id": rule["id"],
        "type": "revoke",
        "user": "viewer",
        "group": None,
        "resource_type": "ProcessDefinition",
        "resource_id": "payroll",
        "permissions": ["READ"],
    }
    listed = admin.get("/authorizations", params={"user": "viewer"})
    assert _valid(doc, "get", "/authorizations", listed)["items"] == [rule]
    check = {"permission": "READ", "resource_type": "ProcessDefinition"}
    payroll = viewer.get("/authorizations/check", params={**check, "resource_id": "payroll"})
    assert _valid(doc, "get", "/authorizations/check", payroll) == {
        "permission": "READ",
        "resource_type": "ProcessDefinition",
        "resource_id": "payroll",
        "authorized": False,
    }
    orders = viewer.get("/authorizations/check", params={**check, "resource_id": "orders"})
    assert orders.json()["authorized"] is True
    assert viewer.get("/authorizations/check", params={**check, "user": "admin"}).status_code == 403
    for_viewer = admin.get(
        "/authorizations/check", params={**check, "resource_id": "payroll", "user": "viewer"}
    )
    assert for_viewer.json()["authorized"] is False

    changed = admin.post(f"/authorizations/{rule['id']}", json={**body, "permissions": ["ALL"]})
    assert _valid(doc, "post", "/authorizations/{id}", changed)["permissions"] == ["ALL"]
    bad = admin.post("/authorizations", json={**body, "permissions": ["FLY"]})
    assert bad.status_code == 400
    assert bad.json()["detail"]["field"] == "permissions"
    bad_resource = admin.post("/authorizations", json={**body, "resource_type": "Spaceship"})
    assert bad_resource.status_code == 400
    assert "resource_type" in bad_resource.text
    assert admin.delete(f"/authorizations/{rule['id']}").status_code == 204
    assert admin.get(f"/authorizations/{rule['id']}").status_code == 404
    assert viewer.post("/authorizations", json=body).status_code == 403


def test_the_last_admin_stays(admin: httpx.Client) -> None:
    refused = admin.delete("/groups/admin/members/admin")
    assert refused.status_code == 409
    assert "admin" in refused.json()["message"]
