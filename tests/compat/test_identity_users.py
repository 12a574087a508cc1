"""/engine-rest/user and /identity over HTTP: Camunda's filters, bodies and answers, the admin
role for changes, a user's own profile, groups and password, the last admin kept, every change
audited, and a user created here logging in to the console with the role of their group."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from tests.compat.identity_support import audit_entries
from tests.server import PASSWORD, LiveServer, console_login, live_server

ANN = {
    "profile": {"id": "ann", "firstName": "Ann", "lastName": "Lee", "email": "ann@example.org"},
    "credentials": {"password": "ann-password-1"},
}
BOB = {
    "profile": {"id": "bob", "firstName": "Bob", "lastName": "Marsh", "email": "bob@corp.test"},
    "credentials": {"password": "bob-password-1"},
}


def _created(rest: httpx.Client, body: Mapping[str, object]) -> None:
    response = rest.post("/user/create", json=body)
    assert response.status_code == 204, response.text


def test_users_are_created_listed_filtered_and_counted(rest: httpx.Client) -> None:
    _created(rest, ANN)
    _created(rest, BOB)
    ids = [user["id"] for user in rest.get("/user").json()]
    assert ids == ["admin", "ann", "bob", "operator", "viewer"]
    assert rest.get("/user/count").json() == {"count": 5}
    assert rest.get("/user", params={"id": "ann"}).json() == [
        {"id": "ann", "firstName": "Ann", "lastName": "Lee", "email": "ann@example.org"}
    ]
    assert [u["id"] for u in rest.get("/user", params={"idIn": "bob,ann,nobody"}).json()] == [
        "ann",
        "bob",
    ]
    assert [u["id"] for u in rest.get("/user", params={"firstNameLike": "B%"}).json()] == ["bob"]
    assert [u["id"] for u in rest.get("/user", params={"lastName": "Lee"}).json()] == ["ann"]
    assert [u["id"] for u in rest.get("/user", params={"emailLike": "%corp%"}).json()] == ["bob"]
    assert [u["id"] for u in rest.get("/user", params={"memberOfGroup": "operator"}).json()] == [
        "operator"
    ]
    by_last = rest.get("/user", params={"sortBy": "lastName", "sortOrder": "desc"}).json()
    # Users without a last name sort as PostgreSQL sorts NULL: last ascending, first descending.
    assert [u["id"] for u in by_last] == ["admin", "operator", "viewer", "bob", "ann"]
    page = rest.get(
        "/user", params={"sortBy": "userId", "sortOrder": "asc", "firstResult": 1, "maxResults": 2}
    )
    assert [u["id"] for u in page.json()] == ["ann", "bob"]
    assert rest.get("/user/count", params={"emailLike": "%example%"}).json() == {"count": 1}
    bad_sort = rest.get("/user", params={"sortBy": "age", "sortOrder": "asc"})
    assert bad_sort.status_code == 400
    assert "sortBy" in bad_sort.json()["message"]


def test_profile_update_delete_and_unknown_users(rest: httpx.Client) -> None:
    _created(rest, ANN)
    assert rest.get("/user/ann/profile").json() == ANN["profile"]
    changed = {"id": "ann", "firstName": "Annie", "lastName": "Lee", "email": "annie@example.org"}
    assert rest.put("/user/ann/profile", json=changed).status_code == 204
    assert rest.get("/user/ann/profile").json() == changed
    renamed = rest.put("/user/ann/profile", json={**changed, "id": "anna"})
    assert renamed.status_code == 400
    assert "'id'" in renamed.json()["message"]

    missing = rest.get("/user/nobody/profile")
    assert missing.status_code == 404
    assert missing.json() == {
        "type": "InvalidRequestException",
        "message": "User with id nobody does not exist",
    }
    assert rest.put("/user/nobody/profile", json={"firstName": "N"}).status_code == 404
    assert rest.delete("/user/nobody").status_code == 404
    assert rest.post("/user/nobody/unlock").status_code == 404

    no_id = rest.post("/user/create", json={"profile": {"firstName": "X"}})
    assert no_id.status_code == 400
    assert "profile.id" in no_id.json()["message"]
    short = rest.post(
        "/user/create", json={"profile": {"id": "x"}, "credentials": {"password": "1"}}
    )
    assert short.status_code == 400
    assert "password" in short.json()["message"]
    not_text = rest.post("/user/create", json={"profile": {"id": "x", "email": 5}})
    assert not_text.status_code == 400
    assert "profile.email" in not_text.json()["message"]
    twice = rest.post("/user/create", json=ANN)
    assert twice.status_code == 400
    assert twice.json() == {
        "type": "InvalidRequestException",
        "message": "The user with id 'ann' already exists",
    }

    assert rest.delete("/user/ann").status_code == 204
    assert rest.get("/user/ann/profile").status_code == 404
    assert rest.get("/user/count", params={"id": "ann"}).json() == {"count": 0}


def test_a_user_created_here_logs_in_with_the_role_of_their_group(
    server: LiveServer, rest: httpx.Client
) -> None:
    _created(rest, ANN)
    # No built-in group yet: the password is right, but ann acts with no role.
    assert console_login(server.url, "ann", "ann-password-1").status_code != 303
    assert rest.put("/group/operator/members/ann").status_code == 204
    assert console_login(server.url, "ann", "ann-password-1").status_code == 303
    assert console_login(server.url, "ann", "wrong-password-1").status_code != 303
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("ann", "ann-password-1"), timeout=30
    ) as ann:
        # An operator: reads the engine, but of the users only themselves.
        assert ann.get("/process-instance/count").status_code == 200
        assert ann.get("/user").json() == [ANN["profile"]]
        assert ann.get("/user", params={"id": "admin"}).json() == []
        assert ann.get("/user/count").json() == {"count": 1}
        assert ann.get("/authorization").json() == []
        assert ann.post("/user/create", json=BOB).status_code == 403
        # Their own profile and groups they may read; someone else's not.
        assert ann.get("/user/ann/profile").json()["email"] == "ann@example.org"
        assert ann.get("/user/admin/profile").status_code == 403
        groups = ann.get("/identity/groups", params={"userId": "ann"}).json()
        assert groups == {
            "groups": [{"id": "operator", "name": "Operators"}],
            "groupUsers": [
                {
                    "id": "operator",
                    "firstName": None,
                    "lastName": None,
                    "displayName": "operator",
                }
            ],
        }
        assert ann.get("/identity/groups", params={"userId": "admin"}).status_code == 403
        assert ann.get("/identity/groups").status_code == 400
        # Their own password: only with the current one.
        wrong = ann.put(
            "/user/ann/credentials",
            json={"password": "ann-password-2", "authenticatedUserPassword": "nope-nope"},
        )
        assert wrong.status_code == 400
        assert "authenticatedUserPassword" in wrong.text or "authenticated" in wrong.text
        assert (
            ann.put("/user/ann/credentials", json={"password": "ann-password-2"}).status_code == 400
        )
        others = ann.put("/user/admin/credentials", json={"password": "taken-over-1"})
        assert others.status_code == 403
        changed = ann.put(
            "/user/ann/credentials",
            json={"password": "ann-password-2", "authenticatedUserPassword": "ann-password-1"},
        )
        assert changed.status_code == 204, changed.text
    assert console_login(server.url, "ann", "ann-password-1").status_code != 303
    assert console_login(server.url, "ann", "ann-password-2").status_code == 303
    # An admin sets another user's password without giving their own.
    assert rest.put("/user/ann/credentials", json={"password": "ann-password-3"}).status_code == 204
    assert console_login(server.url, "ann", "ann-password-3").status_code == 303


def test_identity_verify_and_options(server: LiveServer, rest: httpx.Client) -> None:
    assert rest.post(
        "/identity/verify", json={"username": "viewer", "password": PASSWORD}
    ).json() == {
        "authenticatedUser": "viewer",
        "authenticated": True,
    }
    assert rest.post("/identity/verify", json={"username": "viewer", "password": "x"}).json() == {
        "authenticatedUser": "viewer",
        "authenticated": False,
    }
    missing = rest.post("/identity/verify", json={"username": "viewer"})
    assert missing.status_code == 400
    assert missing.json()["message"] == "Username and password are required"
    base = f"{server.url}/engine-rest"
    assert rest.options("/user").json() == {
        "links": [
            {"method": "GET", "href": f"{base}/user", "rel": "list"},
            {"method": "GET", "href": f"{base}/user/count", "rel": "count"},
            {"method": "POST", "href": f"{base}/user/create", "rel": "create"},
        ]
    }
    with httpx.Client(base_url=base, auth=("viewer", PASSWORD), timeout=30) as viewer:
        assert viewer.options("/user").json() == {
            "links": [
                {"method": "GET", "href": f"{base}/user", "rel": "list"},
                {"method": "GET", "href": f"{base}/user/count", "rel": "count"},
            ]
        }
        assert (
            viewer.post("/identity/verify", json={"username": "a", "password": "b"}).status_code
            == 403
        )


def test_the_last_admin_stays(server: LiveServer, rest: httpx.Client) -> None:
    refused = rest.delete("/user/admin")
    assert refused.status_code == 400
    assert "admin" in refused.json()["message"]
    assert rest.delete("/group/admin/members/admin").status_code == 400
    # A second admin (through camunda-admin) lets the first go.
    _created(rest, ANN)
    assert rest.put("/group/camunda-admin/members/ann").status_code == 204
    with httpx.Client(
        base_url=f"{server.url}/engine-rest", auth=("ann", "ann-password-1"), timeout=30
    ) as ann:
        assert ann.delete("/group/admin/members/admin").status_code == 204
        assert ann.get("/user/count").json() == {"count": 4}
        assert ann.delete("/group/camunda-admin/members/ann").status_code == 400
        assert ann.delete("/user/ann").status_code == 400
    # The accounts API refuses the same.
    with httpx.Client(base_url=f"{server.url}/api/v1", headers=server.bearer(), timeout=30) as api:
        assert api.post("/users/ann/role", json={"role": "viewer"}).status_code == 409
        assert api.delete("/users/ann").status_code == 409


def test_user_changes_are_audited(server: LiveServer, rest: httpx.Client) -> None:
    _created(rest, ANN)
    profile = {"id": "ann", "firstName": "Annie", "lastName": None, "email": None}
    assert rest.put("/user/ann/profile", json=profile).status_code == 204
    assert rest.put("/user/ann/credentials", json={"password": "ann-password-2"}).status_code == 204
    assert rest.post("/user/ann/unlock").status_code == 204
    assert rest.delete("/user/ann").status_code == 204
    entries = [e for e in audit_entries(server, "User") if e["entityId"] == "ann"]
    assert entries == [
        {
            "userId": "admin",
            "operation": "Create",
            "entityId": "ann",
            "property": None,
            "before": None,
            "after": {"firstName": "Ann", "lastName": "Lee", "email": "ann@example.org"},
        },
        {
            "userId": "admin",
            "operation": "Update",
            "entityId": "ann",
            "property": "profile",
            "before": {"firstName": "Ann", "lastName": "Lee", "email": "ann@example.org"},
            "after": {"firstName": "Annie", "lastName": None, "email": None},
        },
        {
            "userId": "admin",
            "operation": "Update",
            "entityId": "ann",
            "property": "password",
            "before": None,
            "after": None,
        },
        {
            "userId": "admin",
            "operation": "Unlock",
            "entityId": "ann",
            "property": None,
            "before": None,
            "after": None,
        },
        {
            "userId": "admin",
            "operation": "Delete",
            "entityId": "ann",
            "property": None,
            "before": {"firstName": "Annie", "lastName": None, "email": None},
            "after": None,
        },
    ]
    assert "ann-password" not in str(audit_entries(server, "User"))


def test_unlock_lets_a_user_try_again_after_failures(database_url: str) -> None:
    limits = {
        "login_failures_per_user": 2,
        "login_failures_per_user_all_addresses": 3,
        "login_failures_per_address": 50,
        "login_failure_window_seconds": 300,
    }
    with live_server(database_url, run_jobs=False, settings_options=limits) as server:
        base = f"{server.url}/engine-rest"
        with httpx.Client(base_url=base, auth=("viewer", "wrong-password"), timeout=30) as wrong:
            assert [wrong.get("/version").status_code for _ in range(2)] == [401, 401]
            assert wrong.get("/version").status_code == 429
        with httpx.Client(base_url=base, auth=("viewer", PASSWORD), timeout=30) as right:
            assert right.get("/version").status_code == 429
            with httpx.Client(base_url=base, headers=server.bearer(), timeout=30) as admin:
                assert admin.post("/user/viewer/unlock").status_code == 204
            assert right.get("/version").status_code == 200
