"""The console's Admin section refuses an admin every change that would take their own full
administration (ALL on authorizations) away from them, with the reason next to the form and a
400, and writes nothing: leaving the last group that grants it (from the user's page or the
group's), deleting themselves, deleting, weakening or revoking the grant. Another admin may make
the same change."""

from __future__ import annotations

import httpx

from engine.commands.identity import AddGroupMember, CreateUserProfile
from engine.identity.permissions import ALL, ResourceType
from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
from engine.store.identity import AuthorizationRow
from tests.app.test_admin_pages import Console
from tests.server import LiveServer

ANN_PASSWORD = "ann-password-1"


def _refused(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert 'class="flash error"' in response.text
    assert "cannot take their own administration away" in response.text


def _ok(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert 'class="flash ok"' in response.text, response.text


def _grant(server: LiveServer, group: str) -> AuthorizationRow:
    rules = reads.authorizations(
        server.engine,
        CamundaPage(),
        group_ids=[group],
        resource_type=int(ResourceType.AUTHORIZATION),
    )
    assert isinstance(rules, list)
    [rule] = rules
    return rule


def test_an_admin_cannot_take_their_own_administration_away_in_the_console(
    server: LiveServer,
) -> None:
    # ann is a second admin, and admin is in both admin groups.
    server.engine.run(CreateUserProfile("ann", password=ANN_PASSWORD))
    server.engine.run(AddGroupMember("admin", "ann"))
    server.engine.run(AddGroupMember("camunda-admin", "admin"))
    admin = Console(server.url, "admin")
    try:
        # camunda-admin still grants it: leaving admin is a change like any other.
        _ok(admin.post("/admin/users/admin/groups/remove", {"group_id": "admin"}))
        _refused(admin.post("/admin/users/admin/groups/remove", {"group_id": "camunda-admin"}))
        _refused(admin.post("/admin/groups/camunda-admin/members/remove", {"user_id": "admin"}))
        _refused(admin.post("/admin/users/admin/delete"))

        grant = _grant(server, "camunda-admin")
        assert grant.permissions == ALL
        _refused(admin.post(f"/admin/authorizations/{grant.id}/delete"))
        weaker = {
            "resource": "Authorization",
            "type": "grant",
            "group_id": "camunda-admin",
            "resource_id": "*",
            "permissions": ["READ", "UPDATE"],
        }
        _refused(admin.post(f"/admin/authorizations/{grant.id}", weaker))
        revoke = {
            "resource": "Authorization",
            "type": "revoke",
            "user_id": "admin",
            "resource_id": "*",
            "permissions": "DELETE",
        }
        _refused(admin.post("/admin/authorizations", revoke))

        # Nothing was written.
        assert _grant(server, "camunda-admin") == grant
        assert reads.group_ids_of(server.engine, "admin") == ["camunda-admin"]
        assert reads.authorizations(server.engine, CamundaPage(), user_ids=["admin"]) == []
    finally:
        admin.client.close()

    # Another admin takes admin out of camunda-admin.
    ann = Console(server.url, "ann", ANN_PASSWORD)
    try:
        _ok(ann.post("/admin/groups/camunda-admin/members/remove", {"user_id": "admin"}))
        assert reads.group_ids_of(server.engine, "admin") == []
    finally:
        ann.client.close()
