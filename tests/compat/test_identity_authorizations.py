"""/engine-rest/authorization over HTTP: the built-in groups' grants, Camunda's filters, bodies
and answers, `/check` by Camunda's precedence (a user's own revoke beats their group's grant),
the admin role for changes, and every change audited."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.identity_support import audit_entries
from tests.server import PASSWORD, LiveServer

KEYS = {
    "id",
    "type",
    "permissions",
    "userId",
    "groupId",
    "resourceType",
    "resourceId",
    "removalTime",
    "rootProcessInstanceId",
}


def _client(server: LiveServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(user, PASSWORD), timeout=30)


def _check(client: httpx.Client, permission: str, name: str, kind: int, **more: str) -> Any:
    params: dict[str, str | int] = {
        "permissionName": permission,
        "resourceName": name,
        "resourceType": kind,
        **more,
    }
    response = client.get("/authorization/check", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_builtin_grants_are_listed(rest: httpx.Client) -> None:
    viewer_access = rest.get("/authorization", params={"groupIdIn": "viewer", "resourceType": 0})
    [row] = viewer_access.json()
    assert set(row) == KEYS
    assert {k: v for k, v in row.items() if k != "id"} == {
        "type": 1,
        "permissions": ["ACCESS"],
        "userId": None,
        "groupId": "viewer",
        "resourceType": 0,
        "resourceId": "*",
        "removalTime": None,
        "rootProcessInstanceId": None,
    }
    admin_users = rest.get(
        "/authorization", params={"groupIdIn": "admin,camunda-admin", "resourceType": 1}
    ).json()
    assert sorted((r["groupId"], r["permissions"]) for r in admin_users) == [
        ("admin", ["ALL"]),
        ("camunda-admin", ["ALL"]),
    ]
    # Viewers are granted nothing on users; operators nothing more on deployments.
    assert rest.get(
        "/authorization/count", params={"groupIdIn": "viewer", "resourceType": 1}
    ).json() == {"count": 0}
    [deployments] = rest.get(
        "/authorization", params={"groupIdIn": "operator", "resourceType": 9}
    ).json()
    assert deployments["permissions"] == ["READ"]


def test_authorizations_are_created_changed_and_deleted(
    server: LiveServer, rest: httpx.Client
) -> None:
    body = {
        "type": 1,
        "permissions": ["READ", "UPDATE"],
        "userId": "viewer",
        "resourceType": 1,
        "resourceId": "operator",
    }
    created = rest.post("/authorization/create", json=body)
    assert created.status_code == 200, created.text
    rule = created.json()
    rule_id = rule["id"]
    href = f"{server.url}/engine-rest/authorization/{rule_id}"
    assert rule == {
        "id": rule_id,
        "type": 1,
        "permissions": ["READ", "UPDATE"],
        "userId": "viewer",
        "groupId": None,
        "resourceType": 1,
        "resourceId": "operator",
        "removalTime": None,
        "rootProcessInstanceId": None,
        "links": [
            {"method": "GET", "href": href, "rel": "self"},
            {"method": "PUT", "href": href, "rel": "update"},
            {"method": "DELETE", "href": href, "rel": "delete"},
        ],
    }
    assert rest.get(f"/authorization/{rule_id}").json() == rule
    assert rest.get("/authorization", params={"userIdIn": "viewer"}).json() == [
        {k: v for k, v in rule.items() if k != "links"}
    ]
    assert rest.get("/authorization/count", params={"id": rule_id}).json() == {"count": 1}
    assert rest.get("/authorization/count", params={"resourceId": "operator"}).json() == {
        "count": 1
    }
    twice = rest.post("/authorization/create", json=body)
    assert twice.status_code == 400
    assert "exists" in twice.json()["message"]

    changed = {**body, "permissions": ["DELETE"], "resourceId": "*"}
    assert rest.put(f"/authorization/{rule_id}", json=changed).status_code == 204
    after = rest.get(f"/authorization/{rule_id}").json()
    assert (after["permissions"], after["resourceId"], after["type"]) == (["DELETE"], "*", 1)

    assert rest.delete(f"/authorization/{rule_id}").status_code == 204
    missing = rest.get(f"/authorization/{rule_id}")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": f"Authorization with id {rule_id} does not exist.",
    }
    assert rest.delete(f"/authorization/{rule_id}").status_code == 404
    assert rest.put("/authorization/not-an-id", json=body).status_code == 404

    with _client(server, "operator") as operator:
        # Of the authorizations, a user who is no admin reads only their own.
        assert operator.get("/authorization").json() == []
        assert operator.get("/authorization/count").json() == {"count": 0}
        assert operator.post("/authorization/create", json=body).status_code == 403


def test_bad_authorization_bodies_name_the_field(rest: httpx.Client) -> None:
    base = {"type": 1, "permissions": ["READ"], "groupId": "sales", "resourceType": 6}
    cases = {
        "type": {**base, "type": 7, "resourceId": "*"},
        "permissions": {**base, "permissions": ["FLY"], "resourceId": "*"},
        "resourceType": {**base, "resourceType": "Process", "resourceId": "*"},
        "resourceId": base,
        "userId": {**base, "userId": "ann", "resourceId": "*"},
        "userId'": {**base, "groupId": None, "userId": "*", "resourceId": "*"},
    }
    for field, body in cases.items():
        response = rest.post("/authorization/create", json=body)
        assert response.status_code == 400, (field, response.text)
        assert field.rstrip("'") in response.json()["message"], (field, response.json())
    untyped = {k: v for k, v in base.items() if k != "type"}
    no_type = rest.post("/authorization/create", json=untyped)
    assert no_type.status_code == 400
    assert "'type'" in no_type.json()["message"]
    # A global authorization applies to everybody: its userId is "*".
    global_rule = {"type": 0, "permissions": ["READ"], "resourceType": 6, "resourceId": "open"}
    created = rest.post("/authorization/create", json=global_rule)
    assert created.status_code == 200, created.text
    assert (created.json()["userId"], created.json()["groupId"]) == ("*", None)


def test_check_follows_camundas_precedence(server: LiveServer, rest: httpx.Client) -> None:
    with _client(server, "viewer") as viewer:
        assert _check(viewer, "READ", "ProcessDefinition", 6) == {
            "permissionName": "READ",
            "resourceName": "ProcessDefinition",
            "resourceId": None,
            "authorized": True,
        }
        assert _check(viewer, "DELETE", "ProcessDefinition", 6)["authorized"] is False
        assert _check(viewer, "READ", "User", 1, resourceId="operator")["authorized"] is False

        grant = {"type": 1, "permissions": ["READ"], "userId": "viewer", "resourceType": 1}
        granted = rest.post("/authorization/create", json={**grant, "resourceId": "operator"})
        assert granted.status_code == 200, granted.text
        assert _check(viewer, "READ", "User", 1, resourceId="operator") == {
            "permissionName": "READ",
            "resourceName": "User",
            "resourceId": "operator",
            "authorized": True,
        }
        assert _check(viewer, "READ", "User", 1, resourceId="admin")["authorized"] is False
        assert _check(viewer, "READ", "User", 1)["authorized"] is False

        # The user's own revoke beats their group's grant, for that definition only.
        revoke = {
            "type": 2,
            "permissions": ["READ"],
            "userId": "viewer",
            "resourceType": 6,
            "resourceId": "payroll",
        }
        assert rest.post("/authorization/create", json=revoke).status_code == 200
        assert (
            _check(viewer, "READ", "ProcessDefinition", 6, resourceId="payroll")["authorized"]
            is False
        )
        assert (
            _check(viewer, "READ", "ProcessDefinition", 6, resourceId="orders")["authorized"]
            is True
        )

        # Checking somebody else needs READ on authorizations.
        other = viewer.get(
            "/authorization/check",
            params={
                "permissionName": "READ",
                "resourceName": "User",
                "resourceType": 1,
                "userId": "admin",
            },
        )
        assert other.status_code == 403
        needs_read = "You must have READ permission for Authorization resource."
        assert other.json()["message"] == needs_read
        missing = viewer.get(
            "/authorization/check", params={"resourceName": "User", "resourceType": 1}
        )
        assert missing.status_code == 400
        assert missing.json()["message"] == "Query parameter 'permissionName' cannot be null"
        unknown = viewer.get(
            "/authorization/check",
            params={"permissionName": "FLY", "resourceName": "User", "resourceType": 1},
        )
        assert unknown.status_code == 400
        assert "FLY" in unknown.json()["message"]
    # An admin checks for another user.
    for_viewer = _check(rest, "READ", "ProcessDefinition", 6, resourceId="payroll", userId="viewer")
    assert for_viewer["authorized"] is False
    assert _check(rest, "DELETE", "ProcessDefinition", 6, resourceId="payroll")["authorized"]


def test_authorization_changes_are_audited(server: LiveServer, rest: httpx.Client) -> None:
    body = {
        "type": 1,
        "permissions": ["READ"],
        "groupId": "sales",
        "resourceType": 6,
        "resourceId": "orders",
    }
    rule_id = rest.post("/authorization/create", json=body).json()["id"]
    changed = {**body, "permissions": ["READ", "READ_INSTANCE"]}
    assert rest.put(f"/authorization/{rule_id}", json=changed).status_code == 204
    assert rest.delete(f"/authorization/{rule_id}").status_code == 204
    first = {
        "type": 1,
        "userId": None,
        "groupId": "sales",
        "resourceType": 6,
        "resourceId": "orders",
        "permissions": ["READ"],
    }
    second = {**first, "permissions": ["READ", "READ_INSTANCE"]}
    assert [
        (e["userId"], e["operation"], e["entityId"], e["before"], e["after"])
        for e in audit_entries(server, "Authorization")
    ] == [
        ("admin", "Create", rule_id, None, first),
        ("admin", "Update", rule_id, first, second),
        ("admin", "Delete", rule_id, second, None),
    ]
