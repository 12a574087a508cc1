"""The console's Admin section and Account page over HTTP against a real server: an admin
creates a user, puts them in a group and grants them an authorization through the matrix form,
and the rows are there; everyone else gets 403 on every admin page and change; a change without
the CSRF token is refused; bad input answers the form's message with a 4xx, never a 500."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from engine.identity.permissions import ResourceType, permission_names
from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
from tests.server import PASSWORD, LiveServer, console_login

ALL_ROWS = CamundaPage()

PAGES = [
    "/admin",
    "/admin/users",
    "/admin/users/admin",
    "/admin/groups",
    "/admin/groups/admin",
    "/admin/tenants",
    "/admin/authorizations",
    "/admin/authorizations?resource=Deployment",
]
MUTATIONS = [
    "/admin/users",
    "/admin/users/admin/profile",
    "/admin/users/admin/password",
    "/admin/users/admin/delete",
    "/admin/users/admin/groups/add",
    "/admin/users/admin/groups/remove",
    "/admin/groups",
    "/admin/groups/viewer/rename",
    "/admin/groups/viewer/delete",
    "/admin/groups/viewer/members/add",
    "/admin/groups/viewer/members/remove",
    "/admin/tenants",
    "/admin/tenants/t1/rename",
    "/admin/tenants/t1/delete",
    "/admin/tenants/t1/members/add",
    "/admin/tenants/t1/members/remove",
    "/admin/authorizations",
    "/admin/authorizations/00000000-0000-0000-0000-000000000001",
    "/admin/authorizations/00000000-0000-0000-0000-000000000001/delete",
    # A group's token (the admin's own to revoke are theirs: tests/api/test_route_gates.py).
    "/account/tokens/admin-token/revoke",
]


class Console:
    """A signed-in console client with the CSRF token of the pages it was shown."""

    def __init__(self, url: str, name: str, password: str = PASSWORD) -> None:
        login = console_login(url, name, password)
        assert login.status_code == 303, login.text
        self.client = httpx.Client(
            base_url=url,
            cookies={"interlock_session": login.cookies["interlock_session"]},
            timeout=30,
        )
        found = re.search(r'name="csrf-token" content="([^"]+)"', self.client.get("/").text)
        assert found
        self.csrf = found.group(1)

    def get(self, path: str) -> httpx.Response:
        return self.client.get(path, follow_redirects=False)

    def post(self, path: str, data: Any = None, *, csrf: bool = True) -> httpx.Response:
        headers = {"HX-Request": "true"} | ({"X-CSRF-Token": self.csrf} if csrf else {})
        return self.client.post(path, data=data or {}, headers=headers, follow_redirects=False)


@pytest.fixture
def as_role(server: LiveServer) -> Iterator[Any]:
    made: list[Console] = []

    def make(name: str, password: str = PASSWORD) -> Console:
        made.append(Console(server.url, name, password))
        return made[-1]

    yield make
    for console in made:
        console.client.close()


def _ok(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    assert 'class="flash ok"' in response.text, response.text
    return response.text


def test_an_admin_creates_a_user_puts_them_in_a_group_and_grants_them_through_the_matrix(
    server: LiveServer, as_role: Any
) -> None:
    admin = as_role("admin")
    assert 'href="/admin/users"' in admin.get("/").text
    _ok(
        admin.post(
            "/admin/users",
            {"id": "ada", "first_name": "Ada", "last_name": "Lovelace", "password": PASSWORD},
        )
    )
    _ok(admin.post("/admin/groups", {"id": "analysts", "name": "Analysts"}))
    _ok(admin.post("/admin/groups/analysts/members/add", {"user_id": "ada"}))
    # A user acts with a role only in a built-in group: without one they cannot sign in.
    _ok(admin.post("/admin/users/ada/groups/add", {"group_id": "viewer"}))
    assert 'data-group="viewer"' in admin.get("/admin/users/ada").text
    _ok(
        admin.post(
            "/admin/authorizations",
            {
                "resource": "ProcessDefinition",
                "type": "grant",
                "user_id": "ada",
                "resource_id": "*",
                "permissions": ["READ", "READ_INSTANCE"],
            },
        )
    )

    users = reads.users(server.engine, ALL_ROWS, user_id="ada")
    assert isinstance(users, list) and [(u.first_name, u.last_name) for u in users] == [
        ("Ada", "Lovelace")
    ]
    members = reads.users(server.engine, ALL_ROWS, member_of_group="analysts")
    assert isinstance(members, list) and [u.id for u in members] == ["ada"]
    groups = reads.groups(server.engine, ALL_ROWS, member="ada")
    assert isinstance(groups, list) and {g.id for g in groups} == {"analysts", "viewer"}
    rules = reads.authorizations(
        server.engine,
        ALL_ROWS,
        user_ids=["ada"],
        resource_type=int(ResourceType.PROCESS_DEFINITION),
    )
    assert isinstance(rules, list) and len(rules) == 1
    assert permission_names(ResourceType.PROCESS_DEFINITION, rules[0].permissions) == [
        "READ",
        "READ_INSTANCE",
    ]

    # Every change is audited as the admin's, from the console.
    with server.engine.connection() as conn:
        entries = conn.execute(
            "SELECT operation, entity, entity_id FROM audit_entry"
            " WHERE user_id = 'admin' AND channel = 'console' AND entity_id <> 'admin'"
            " ORDER BY at, id"
        ).fetchall()
    assert [tuple(e) for e in entries] == [
        ("Create", "User", "ada"),
        ("Create", "Group", "analysts"),
        ("Create", "Group membership", "analysts"),
        ("Create", "Group membership", "viewer"),
        ("Create", "Authorization", str(rules[0].id)),
    ], entries

    listed = admin.get("/admin/users?like=love").text
    assert 'data-user="ada"' in listed and 'data-user="viewer"' not in listed
    assert 'data-member="ada"' in admin.get("/admin/groups/analysts").text
    matrix = admin.get("/admin/authorizations?resource=ProcessDefinition").text
    row = matrix[matrix.index(f'data-authorization="{rules[0].id}"') :]
    row = row[: row.index("</tr>")]
    assert 'data-permission="READ" data-held="yes"' in row
    assert 'data-permission="READ_INSTANCE" data-held="yes"' in row
    assert 'data-permission="DELETE" data-held="no"' in row

    # The new user signs in and sees their Account page with their name.
    ada = as_role("ada")
    account = ada.get("/account")
    assert account.status_code == 200
    assert "Ada" in account.text and "Lovelace" in account.text
    assert 'href="/admin/users"' not in account.text


def test_everyone_but_an_admin_is_refused_every_admin_page_and_change(as_role: Any) -> None:
    for role in ("viewer", "operator"):
        console = as_role(role)
        assert 'href="/admin/users"' not in console.get("/").text
        assert 'href="/account"' in console.get("/").text
        for path in PAGES:
            assert console.get(path).status_code == 403, (role, path)
        for path in MUTATIONS:
            answer = console.post(path, {"id": "x", "user_id": "x", "group_id": "x"})
            assert answer.status_code == 403, (role, path, answer.text)


def test_a_change_without_the_csrf_token_is_refused(server: LiveServer, as_role: Any) -> None:
    admin = as_role("admin")
    refused = admin.post("/admin/users", {"id": "mallory", "password": PASSWORD}, csrf=False)
    assert refused.status_code == 403
    assert reads.users(server.engine, ALL_ROWS, user_id="mallory") == []
    assert admin.post("/account/profile", {"first_name": "X"}, csrf=False).status_code == 403


@pytest.mark.parametrize(
    ("path", "data", "status", "words"),
    [
        ("/admin/users", {"id": "viewer", "password": PASSWORD}, 409, "already exists"),
        ("/admin/users", {"id": "bob", "password": "short"}, 400, "at least"),
        ("/admin/users", {"id": " bob", "password": PASSWORD}, 400, "without surrounding"),
        ("/admin/users/admin/delete", {}, 409, "leave no user in an admin group"),
        ("/admin/users/nobody/password", {"password": PASSWORD}, 404, "does not exist"),
        ("/admin/groups", {"id": "admin"}, 409, "already exists"),
        ("/admin/groups/viewer/delete", {}, 400, "built-in group"),
        ("/admin/groups/viewer/rename", {"name": "Lookers"}, 400, "built-in group"),
        ("/admin/groups/admin/members/remove", {"user_id": "admin"}, 409, "no user in an admin"),
        ("/admin/groups/viewer/members/add", {"user_id": "nobody"}, 404, "does not exist"),
        ("/admin/tenants/t9/members/add", {"user_id": "viewer"}, 404, "does not exist"),
        (
            "/admin/authorizations",
            {
                "resource": "Task",
                "type": "grant",
                "user_id": "viewer",
                "resource_id": "*",
                "permissions": "READ_INSTANCE",
            },
            400,
            "has no permission READ_INSTANCE",
        ),
        (
            "/admin/authorizations",
            {"resource": "Task", "type": "grant", "resource_id": "*", "permissions": "READ"},
            400,
            "either a userId or a groupId",
        ),
        (
            "/admin/authorizations",
            {"resource": "Nothing", "type": "grant", "user_id": "viewer", "resource_id": "*"},
            400,
            "unknown resource type",
        ),
        (
            "/admin/authorizations",
            {"resource": "Task", "type": "allow", "user_id": "viewer", "resource_id": "*"},
            400,
            "the type is one of",
        ),
        (
            "/account/password",
            {"current": "wrong-password", "password": "n" * 12, "repeat": "n" * 12},
            400,
            "password is not valid",
        ),
        (
            "/account/password",
            {"current": PASSWORD, "password": "n" * 12, "repeat": "m" * 12},
            400,
            "differ",
        ),
    ],
)
def test_bad_input_is_answered_with_its_message_next_to_the_form(
    as_role: Any, path: str, data: dict[str, str], status: int, words: str
) -> None:
    answer = as_role("admin").post(path, data)
    assert answer.status_code == status, answer.text
    assert 'class="flash error"' in answer.text
    assert words in answer.text


def test_an_unknown_resource_type_page_is_a_400(as_role: Any) -> None:
    admin = as_role("admin")
    assert admin.get("/admin/authorizations?resource=Nothing").status_code == 400
    assert admin.get("/admin/users/nobody").status_code == 404


def test_tenants_and_authorizations_are_changed_and_deleted(
    server: LiveServer, as_role: Any
) -> None:
    admin = as_role("admin")
    _ok(admin.post("/admin/tenants", {"id": "acme", "name": "Acme"}))
    _ok(admin.post("/admin/tenants/acme/rename", {"name": "Acme Ltd"}))
    _ok(admin.post("/admin/tenants/acme/members/add", {"user_id": "viewer"}))
    _ok(admin.post("/admin/tenants/acme/members/add", {"group_id": "operator"}))
    page = admin.get("/admin/tenants/acme").text
    assert 'data-member-user="viewer"' in page and 'data-member-group="operator"' in page
    _ok(admin.post("/admin/tenants/acme/members/remove", {"user_id": "viewer"}))
    assert 'data-member-user="viewer"' not in admin.get("/admin/tenants/acme").text
    _ok(admin.post("/admin/tenants/acme/delete"))
    assert reads.tenants(server.engine, ALL_ROWS, tenant_id="acme") == []

    _ok(admin.post("/admin/groups", {"id": "auditors"}))
    _ok(
        admin.post(
            "/admin/authorizations",
            {
                "resource": "Deployment",
                "type": "grant",
                "group_id": "auditors",
                "resource_id": "*",
                "permissions": "READ",
            },
        )
    )
    rules = reads.authorizations(
        server.engine, ALL_ROWS, group_ids=["auditors"], resource_type=int(ResourceType.DEPLOYMENT)
    )
    assert isinstance(rules, list) and len(rules) == 1
    rule = rules[0]
    assert admin.get(f"/admin/authorizations/{rule.id}").status_code == 200
    _ok(
        admin.post(
            f"/admin/authorizations/{rule.id}",
            {
                "resource": "Deployment",
                "type": "grant",
                "group_id": "auditors",
                "resource_id": "*",
                "permissions": ["READ", "DELETE"],
            },
        )
    )
    changed = reads.authorizations(server.engine, ALL_ROWS, authorization_id=rule.id)
    assert isinstance(changed, list)
    assert permission_names(ResourceType.DEPLOYMENT, changed[0].permissions) == ["READ", "DELETE"]
    _ok(admin.post(f"/admin/authorizations/{rule.id}/delete"))
    assert reads.authorizations(server.engine, ALL_ROWS, authorization_id=rule.id) == []


def test_a_user_keeps_their_own_account(server: LiveServer, as_role: Any) -> None:
    viewer = as_role("viewer")
    other = as_role("viewer")
    _ok(viewer.post("/account/profile", {"first_name": "Vera", "email": "vera@example.com"}))
    page = viewer.get("/account").text
    assert "Vera" in page and "vera@example.com" in page
    assert page.count("data-session=") == 2
    # Their own tokens only: the tokens of a group are an admin's to see and revoke.
    assert 'data-token="admin-token"' not in page and "No API tokens of yours" in page
    _ok(viewer.post("/account/sessions/end-others"))
    assert other.get("/instances").status_code == 303
    assert viewer.get("/account").text.count("data-session=") == 1
    _ok(
        viewer.post(
            "/account/password",
            {"current": PASSWORD, "password": "a-new-password", "repeat": "a-new-password"},
        )
    )
    assert console_login(server.url, "viewer", "a-new-password").status_code == 303


def test_an_admin_creates_a_token_shown_once_and_revokes_it(as_role: Any) -> None:
    admin = as_role("admin")
    made = admin.post("/account/tokens", {"label": "ci", "role": "operator"})
    assert made.status_code == 200, made.text
    token = re.search(r'<code class="new-token">([^<]+)</code>', made.text)
    assert token
    probe = httpx.get(
        str(admin.client.base_url) + "/api/v1/instances",
        headers={"Authorization": f"Bearer {token.group(1)}"},
    )
    assert probe.status_code == 200
    assert token.group(1) not in admin.get("/account").text
    _ok(admin.post("/account/tokens/ci/revoke"))
    probe = httpx.get(
        str(admin.client.base_url) + "/api/v1/instances",
        headers={"Authorization": f"Bearer {token.group(1)}"},
    )
    assert probe.status_code == 401
