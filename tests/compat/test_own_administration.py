"""A user may never take their own full administration (ALL on authorizations, as the admin
groups grant it) away from themselves over /engine-rest: deleting themselves, leaving the last
group that gives it, deleting or weakening an authorization that gives it, revoking it. Each is
a 400 with Camunda's body saying why, nothing is written; another administrator may make the
same change."""

from __future__ import annotations

from typing import Any

import httpx

from tests.compat.identity_support import audit_entries
from tests.server import LiveServer

ANN = {"profile": {"id": "ann"}, "credentials": {"password": "ann-password-1"}}
AUTHORIZATION = 4


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["type"] == "InvalidRequestException"
    assert "cannot take their own administration away" in body["message"]
    assert "ALL on Authorization" in body["message"]


def _second_admin(rest: httpx.Client) -> None:
    """ann joins the admin group, so no refusal here is for want of another admin."""
    assert rest.post("/user/create", json=ANN).status_code == 204
    assert rest.put("/group/admin/members/ann").status_code == 204


def _admin_group_grant(rest: httpx.Client) -> dict[str, Any]:
    [grant] = rest.get(
        "/authorization", params={"groupIdIn": "admin", "resourceType": AUTHORIZATION}
    ).json()
    return dict(grant)


def test_leaving_the_last_group_that_grants_it_or_deleting_oneself_is_refused(
    server: LiveServer, rest: httpx.Client
) -> None:
    _second_admin(rest)
    assert rest.put("/group/camunda-admin/members/admin").status_code == 204
    # camunda-admin still grants it: leaving admin is allowed.
    assert rest.delete("/group/admin/members/admin").status_code == 204
    memberships = len(audit_entries(server, "Group membership"))
    _refused(rest.delete("/group/camunda-admin/members/admin"))
    _refused(rest.delete("/user/admin"))
    # Nothing was written: admin is still a member and a user, no audit entry was added.
    assert rest.get("/group", params={"member": "admin"}).json()[0]["id"] == "camunda-admin"
    assert rest.get("/user/admin/profile").status_code == 200
    assert len(audit_entries(server, "Group membership")) == memberships
    # Another administrator may take admin out.
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("ann", "ann-password-1"), timeout=30
    ) as ann:
        assert ann.delete("/group/camunda-admin/members/admin").status_code == 204
        assert ann.get("/group/count", params={"member": "admin"}).json() == {"count": 0}


def test_deleting_weakening_or_revoking_ones_own_grant_is_refused(
    server: LiveServer, rest: httpx.Client
) -> None:
    _second_admin(rest)
    grant = _admin_group_grant(rest)
    assert grant["permissions"] == ["ALL"]
    body = {k: grant[k] for k in ("type", "userId", "groupId", "resourceType", "resourceId")}
    before = len(audit_entries(server, "Authorization"))
    _refused(rest.delete(f"/authorization/{grant['id']}"))
    _refused(rest.put(f"/authorization/{grant['id']}", json={**body, "permissions": ["READ"]}))
    # Moving the grant to another group takes it away just the same.
    moved = {**body, "groupId": "operator", "permissions": ["ALL"]}
    _refused(rest.put(f"/authorization/{grant['id']}", json=moved))
    revoke = {
        "type": 2,
        "permissions": ["DELETE"],
        "userId": "admin",
        "resourceType": AUTHORIZATION,
        "resourceId": "*",
    }
    _refused(rest.post("/authorization/create", json=revoke))
    assert _admin_group_grant(rest) == grant
    assert rest.get("/authorization/count", params={"type": 2}).json() == {"count": 0}
    assert len(audit_entries(server, "Authorization")) == before
    # A change that leaves it is made: the grant saved as it is, a revoke of one authorization
    # only, and the same revoke for another user.
    assert (
        rest.put(f"/authorization/{grant['id']}", json={**body, "permissions": ["ALL"]}).status_code
        == 204
    )
    one = rest.post("/authorization/create", json={**revoke, "resourceId": str(grant["id"])})
    assert one.status_code == 200, one.text
    theirs = rest.post("/authorization/create", json={**revoke, "userId": "ann"})
    assert theirs.status_code == 200, theirs.text


def test_a_grant_of_ones_own_keeps_it_when_leaving_the_admin_group(
    server: LiveServer, rest: httpx.Client
) -> None:
    _second_admin(rest)
    own = {
        "type": 1,
        "permissions": ["ALL"],
        "userId": "admin",
        "resourceType": AUTHORIZATION,
        "resourceId": "*",
    }
    created = rest.post("/authorization/create", json=own)
    assert created.status_code == 200, created.text
    # The user's own grant now gives it too: deleting the group's grant for both leaves it.
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("ann", "ann-password-1"), timeout=30
    ) as ann:
        group_grant = _admin_group_grant(ann)
    assert rest.delete(f"/authorization/{group_grant['id']}").status_code == 204
    # Their own grant is now the last: deleting it is refused.
    _refused(rest.delete(f"/authorization/{created.json()['id']}"))
    assert rest.get(f"/authorization/{created.json()['id']}").status_code == 200
