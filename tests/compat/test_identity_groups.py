"""/engine-rest/group over HTTP: Camunda's filters, bodies and answers, members, the built-in
groups kept, the admin role for every call, and every change audited."""

from __future__ import annotations

import httpx

from tests.compat.identity_support import audit_entries
from tests.server import PASSWORD, LiveServer

BUILTIN = [
    {"id": "admin", "name": "Administrators", "type": "SYSTEM"},
    {"id": "camunda-admin", "name": "Camunda administrators", "type": "SYSTEM"},
    {"id": "operator", "name": "Operators", "type": "SYSTEM"},
    {"id": "viewer", "name": "Viewers", "type": "SYSTEM"},
]


def test_groups_are_created_listed_filtered_and_counted(rest: httpx.Client) -> None:
    assert rest.get("/group").json() == BUILTIN
    created = rest.post("/group/create", json={"id": "sales", "name": "Sales", "type": "WORKFLOW"})
    assert created.status_code == 204, created.text
    body = {"id": "support", "name": "Support desk", "type": "WORKFLOW"}
    assert rest.post("/group/create", json=body).status_code == 204
    assert rest.get("/group/count").json() == {"count": 6}
    assert rest.get("/group/sales").json() == {"id": "sales", "name": "Sales", "type": "WORKFLOW"}
    assert [g["id"] for g in rest.get("/group", params={"type": "WORKFLOW"}).json()] == [
        "sales",
        "support",
    ]
    assert [g["id"] for g in rest.get("/group", params={"nameLike": "%desk"}).json()] == ["support"]
    assert [g["id"] for g in rest.get("/group", params={"name": "Sales"}).json()] == ["sales"]
    assert [g["id"] for g in rest.get("/group", params={"idIn": "viewer,sales"}).json()] == [
        "sales",
        "viewer",
    ]
    by_name = rest.get("/group", params={"sortBy": "name", "sortOrder": "desc"}).json()
    assert [g["name"] for g in by_name] == [
        "Viewers",
        "Support desk",
        "Sales",
        "Operators",
        "Camunda administrators",
        "Administrators",
    ]
    assert rest.get("/group/count", params={"member": "viewer"}).json() == {"count": 1}
    assert [g["id"] for g in rest.get("/group", params={"member": "admin"}).json()] == ["admin"]

    twice = rest.post("/group/create", json=body)
    assert twice.status_code == 400
    assert twice.json()["message"] == "The group with id 'support' already exists"
    no_id = rest.post("/group/create", json={"name": "Nameless"})
    assert no_id.status_code == 400
    assert "'id'" in no_id.json()["message"]
    missing = rest.get("/group/nobody")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": "Group with id nobody does not exist",
    }


def test_members_update_and_delete(server: LiveServer, rest: httpx.Client) -> None:
    assert rest.post("/group/create", json={"id": "sales", "name": "Sales"}).status_code == 204
    assert rest.put("/group/sales/members/viewer").status_code == 204
    assert rest.put("/group/sales/members/viewer").status_code == 204  # already: nothing changes
    assert rest.put("/group/sales/members/operator").status_code == 204
    members = rest.get("/user", params={"memberOfGroup": "sales"}).json()
    assert [u["id"] for u in members] == ["operator", "viewer"]
    assert rest.put("/group/sales/members/nobody").status_code == 404
    assert rest.put("/group/nothing/members/viewer").status_code == 404
    assert rest.delete("/group/sales/members/operator").status_code == 204
    assert [g["id"] for g in rest.get("/group", params={"member": "operator"}).json()] == [
        "operator"
    ]
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("viewer", PASSWORD), timeout=30
    ) as viewer:
        assert viewer.get("/identity/groups", params={"userId": "viewer"}).json() == {
            "groups": [
                {"id": "sales", "name": "Sales"},
                {"id": "viewer", "name": "Viewers"},
            ],
            "groupUsers": [],
        }
        # Narrowed by READ on groups: a viewer reads the groups they belong to, no other.
        assert [g["id"] for g in viewer.get("/group").json()] == ["sales", "viewer"]
        assert viewer.put("/group/sales/members/operator").status_code == 403

    assert rest.put("/group/sales", json={"id": "sales", "name": "Sales EMEA"}).status_code == 204
    assert rest.get("/group/sales").json() == {"id": "sales", "name": "Sales EMEA", "type": None}
    assert rest.put("/group/sales", json={"id": "other", "name": "X"}).status_code == 400
    assert rest.put("/group/nothing", json={"name": "X"}).status_code == 404
    assert rest.delete("/group/sales").status_code == 204
    assert rest.get("/group/sales").status_code == 404
    assert [g["id"] for g in rest.get("/group", params={"member": "viewer"}).json()] == ["viewer"]
    assert rest.delete("/group/sales").status_code == 404


def test_builtin_groups_cannot_be_deleted_or_renamed(rest: httpx.Client) -> None:
    for group in BUILTIN:
        deleted = rest.delete(f"/group/{group['id']}")
        assert deleted.status_code == 400, group
        assert "built-in" in deleted.json()["message"]
        renamed = rest.put(f"/group/{group['id']}", json={**group, "name": "Renamed"})
        assert renamed.status_code == 400
    # Saving them as they are is fine.
    assert rest.put("/group/viewer", json=BUILTIN[3]).status_code == 204
    assert rest.get("/group").json() == BUILTIN


def test_group_changes_are_audited(server: LiveServer, rest: httpx.Client) -> None:
    assert rest.post("/group/create", json={"id": "sales", "name": "Sales"}).status_code == 204
    assert rest.put("/group/sales", json={"name": "Sales EMEA", "type": "X"}).status_code == 204
    assert rest.put("/group/sales/members/viewer").status_code == 204
    assert rest.put("/group/sales/members/viewer").status_code == 204
    assert rest.delete("/group/sales/members/viewer").status_code == 204
    assert rest.delete("/group/sales/members/viewer").status_code == 204
    assert rest.delete("/group/sales").status_code == 204
    groups = [
        (e["operation"], e["entityId"], e["before"], e["after"])
        for e in audit_entries(server, "Group")
    ]
    assert groups == [
        ("Create", "sales", None, {"name": "Sales", "type": None}),
        ("Update", "sales", {"name": "Sales", "type": None}, {"name": "Sales EMEA", "type": "X"}),
        ("Delete", "sales", {"name": "Sales EMEA", "type": "X"}, None),
    ]
    memberships = [
        (e["userId"], e["operation"], e["entityId"], e["property"], e["before"], e["after"])
        for e in audit_entries(server, "Group membership")
    ]
    # The builtin memberships of the server's users were written before anyone acted.
    assert memberships == [
        ("admin", "Create", "sales", "userId", None, "viewer"),
        ("admin", "Delete", "sales", "userId", "viewer", None),
    ]


def test_groups_are_queried_with_a_body(rest: httpx.Client) -> None:
    """`POST /group` takes the filters in its body, as Operaton's admin pages send them."""
    assert rest.post("/group/create", json={"id": "sales", "name": "Sales"}).status_code == 204
    assert rest.put("/group/sales/members/viewer").status_code == 204
    page = rest.post(
        "/group", json={"firstResult": 0, "maxResults": 2, "sortBy": "id", "sortOrder": "asc"}
    )
    assert page.status_code == 200, page.text
    assert [g["id"] for g in page.json()] == ["admin", "camunda-admin"]
    of_viewer = rest.post("/group", json={"member": "viewer", "maxResults": 50})
    assert of_viewer.json() == [
        {"id": "sales", "name": "Sales", "type": None},
        {"id": "viewer", "name": "Viewers", "type": "SYSTEM"},
    ]
    sorted_desc = rest.post(
        "/group",
        params={"firstResult": 1},
        json={
            "idIn": ["sales", "viewer", "admin"],
            "sorting": [{"sortBy": "name", "sortOrder": "desc"}],
        },
    )
    assert [g["id"] for g in sorted_desc.json()] == ["sales", "admin"]
    bad = rest.post("/group", json={"sorting": [{"sortBy": "size", "sortOrder": "asc"}]})
    assert bad.status_code == 400
    assert "sorting" in bad.json()["message"]
