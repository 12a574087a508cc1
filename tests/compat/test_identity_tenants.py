"""/engine-rest/tenant over HTTP: Camunda's filters, bodies and answers, user and group
members, the admin role for every call, and every change audited."""

from __future__ import annotations

import httpx

from tests.compat.identity_support import audit_entries
from tests.server import PASSWORD, LiveServer


def _tenant(rest: httpx.Client, tenant_id: str, name: str) -> None:
    response = rest.post("/tenant/create", json={"id": tenant_id, "name": name})
    assert response.status_code == 204, response.text


def test_tenants_and_their_members(server: LiveServer, rest: httpx.Client) -> None:
    assert rest.get("/tenant").json() == []
    _tenant(rest, "north", "North region")
    _tenant(rest, "south", "South region")
    assert rest.get("/tenant").json() == [
        {"id": "north", "name": "North region"},
        {"id": "south", "name": "South region"},
    ]
    assert rest.get("/tenant/count").json() == {"count": 2}
    assert rest.get("/tenant/north").json() == {"id": "north", "name": "North region"}
    assert rest.get("/tenant", params={"nameLike": "South%"}).json() == [
        {"id": "south", "name": "South region"}
    ]
    assert [t["id"] for t in rest.get("/tenant", params={"idIn": "south"}).json()] == ["south"]
    by_id = rest.get("/tenant", params={"sortBy": "id", "sortOrder": "desc"}).json()
    assert [t["id"] for t in by_id] == ["south", "north"]

    assert rest.put("/tenant/north/user-members/viewer").status_code == 204
    assert rest.put("/tenant/south/group-members/operator").status_code == 204
    assert rest.put("/tenant/north/user-members/nobody").status_code == 404
    assert rest.put("/tenant/north/group-members/nothing").status_code == 404
    assert rest.put("/tenant/nowhere/user-members/viewer").status_code == 404
    assert [t["id"] for t in rest.get("/tenant", params={"userMember": "viewer"}).json()] == [
        "north"
    ]
    assert [t["id"] for t in rest.get("/tenant", params={"groupMember": "operator"}).json()] == [
        "south"
    ]
    # The operator user belongs to south through their group.
    assert rest.get("/tenant", params={"userMember": "operator"}).json() == []
    through_groups = {"userMember": "operator", "includingGroupsOfUser": "true"}
    assert [t["id"] for t in rest.get("/tenant", params=through_groups).json()] == ["south"]
    assert [u["id"] for u in rest.get("/user", params={"memberOfTenant": "south"}).json()] == [
        "operator"
    ]
    assert [g["id"] for g in rest.get("/group", params={"memberOfTenant": "south"}).json()] == [
        "operator"
    ]

    assert rest.delete("/tenant/north/user-members/viewer").status_code == 204
    assert rest.get("/tenant", params={"userMember": "viewer"}).json() == []
    assert rest.delete("/tenant/south/group-members/operator").status_code == 204
    assert rest.get("/tenant/count", params={"groupMember": "operator"}).json() == {"count": 0}

    assert rest.put("/tenant/north", json={"id": "north", "name": "North"}).status_code == 204
    assert rest.get("/tenant/north").json() == {"id": "north", "name": "North"}
    assert rest.put("/tenant/north", json={"id": "west", "name": "W"}).status_code == 400
    assert rest.put("/tenant/nowhere", json={"name": "W"}).status_code == 404
    assert rest.delete("/tenant/north").status_code == 204
    missing = rest.get("/tenant/north")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": "Tenant with id north does not exist",
    }
    twice = rest.post("/tenant/create", json={"id": "south", "name": "Again"})
    assert twice.status_code == 400
    assert twice.json()["message"] == "The tenant with id 'south' already exists"
    not_object = rest.post("/tenant/create", json=["south"])
    assert not_object.status_code == 400

    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("operator", PASSWORD), timeout=30
    ) as operator:
        # Without READ on tenants the list is narrowed to nothing, as Camunda's query is.
        listed = operator.get("/tenant")
        assert (listed.status_code, listed.json()) == (200, [])
        assert operator.post("/tenant/create", json={"id": "x"}).status_code == 403


def test_tenant_changes_are_audited(server: LiveServer, rest: httpx.Client) -> None:
    _tenant(rest, "north", "North region")
    assert rest.put("/tenant/north", json={"name": "North"}).status_code == 204
    assert rest.put("/tenant/north/user-members/viewer").status_code == 204
    assert rest.put("/tenant/north/group-members/operator").status_code == 204
    assert rest.delete("/tenant/north/user-members/viewer").status_code == 204
    assert rest.delete("/tenant/north/group-members/operator").status_code == 204
    assert rest.delete("/tenant/north").status_code == 204
    tenants = [
        (e["operation"], e["entityId"], e["property"], e["before"], e["after"])
        for e in audit_entries(server, "Tenant")
    ]
    assert tenants == [
        ("Create", "north", None, None, {"name": "North region"}),
        ("Update", "north", "name", "North region", "North"),
        ("Delete", "north", None, {"name": "North"}, None),
    ]
    memberships = [
        (e["userId"], e["operation"], e["property"], e["before"], e["after"])
        for e in audit_entries(server, "TenantMembership")
    ]
    assert memberships == [
        ("admin", "Create", "userId", None, "viewer"),
        ("admin", "Create", "groupId", None, "operator"),
        ("admin", "Delete", "userId", "viewer", None),
        ("admin", "Delete", "groupId", "operator", None),
    ]
