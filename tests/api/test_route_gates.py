"""Routes need a signed-in caller and no role: what a caller may do is what their authorizations
allow, on every surface (a real server, real PostgreSQL, the console in Chromium once).

A user whose only group is a custom one granted READ_INSTANCE and UPDATE_INSTANCE on process
definition "a" (with READ on it, to read its diagram, and DELETE_INSTANCE, which cancelling
needs in Camunda) cancels, modifies and sets variables of an "a" instance over the console,
/api/v1 and /engine-rest, and is refused (403; Camunda's AuthorizationException on
/engine-rest) on a "b" instance, whose inspector is 404 to them; the inspector of "a" shows them
Cancel, Retry and Modify. A user with READ on users but not CREATE lists users and may not
create one. A user with no grant at all sees empty lists and no control that changes anything.
Users make and revoke API tokens of their own, which act as them and never with more."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser as Chromium
from playwright.sync_api import expect

from engine.api import Engine
from engine.builder import ProcessBuilder
from engine.commands.identity import AddGroupMember, CreateGroup, CreateUserProfile
from engine.commands.identity_authorizations import SaveAuthorization
from engine.identity.permissions import (
    AuthorizationType,
    ResourceType,
    permission_bits,
)
from engine.store.identity import AuthorizationRow
from tests.api.test_sessions import Browser
from tests.server import PASSWORD, LiveServer, login_token

PD = ResourceType.PROCESS_DEFINITION
OPERATES_A = "ops-of-a"  # the user whose group may read and change instances of "a" only
READS_USERS = "user-reader"  # the user whose group may read users, not create them
NOBODY = "no-grants"  # the user whose group is granted nothing
_serial = itertools.count()


def _grant(engine: Engine, group: str, resource: ResourceType, rid: str, *names: str) -> None:
    bits = permission_bits(resource, list(names))
    rule = AuthorizationRow(uuid.uuid4(), AuthorizationType.GRANT, None, group, resource, rid, bits)
    engine.run(SaveAuthorization(rule, create=True))


def _user_in_group(engine: Engine, user: str) -> str:
    """`user` (password PASSWORD), the only member of a custom group of their own."""
    group = f"{user}-group"
    engine.run(CreateUserProfile(user, password=PASSWORD))
    engine.run(CreateGroup(group, f"Group of {user}"))
    engine.run(AddGroupMember(group, user))
    return group


def _waiting(key: str) -> Any:
    """A process whose instances wait at the user task `wait`, after a timer-free start."""
    return (
        ProcessBuilder(key)
        .start_event("start")
        .user_task("wait")
        .end_event("end")
        .chain("start", "wait", "end")
        .build()
    )


@pytest.fixture(scope="module")
def gated(api: LiveServer) -> LiveServer:
    engine = api.engine
    engine.deploy(_waiting("a"), _waiting("b"), name="route gates")
    group = _user_in_group(engine, OPERATES_A)
    _grant(engine, group, PD, "a", "READ", "READ_INSTANCE", "UPDATE_INSTANCE", "DELETE_INSTANCE")
    _grant(engine, _user_in_group(engine, READS_USERS), ResourceType.USER, "*", "READ")
    _user_in_group(engine, NOBODY)
    return api


def _instance(server: LiveServer, key: str) -> str:
    return str(server.engine.start_latest(key).id)


def _state(server: LiveServer, instance_id: str) -> str:
    return str(server.engine.instance(instance_id).info().state)


def _rest(server: LiveServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/engine-rest", auth=(user, PASSWORD), timeout=30.0)


def _api(server: LiveServer, user: str) -> httpx.Client:
    return httpx.Client(base_url=f"{server.url}/api/v1", auth=(user, PASSWORD), timeout=30.0)


@pytest.fixture(scope="module")
def operates_a(gated: LiveServer) -> Iterator[Browser]:
    browser = Browser(gated.url, OPERATES_A)
    yield browser
    browser.close()


def _refused_by_permission(
    response: httpx.Response, key: str, permission: str = "UPDATE_INSTANCE"
) -> None:
    """/engine-rest's AuthorizationException naming the permission on the definition."""
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["type"] == "AuthorizationException", body
    assert f"'{permission}' permission on resource" in body["message"], body
    assert f"'{key}' of type 'ProcessDefinition'" in body["message"], body


# -- a custom group's grants on one definition, on each surface --------------------------------


def test_engine_rest_follows_the_grants_of_a_custom_group(gated: LiveServer) -> None:
    a, b = _instance(gated, "a"), _instance(gated, "b")
    with _rest(gated, OPERATES_A) as rest:
        variables = {"modifications": {"checked": {"value": 7, "type": "Integer"}}}
        assert rest.post(f"/process-instance/{a}/variables", json=variables).status_code == 204
        assert gated.engine.instance(a).variables()["checked"] == 7
        again = {"instructions": [{"type": "startBeforeActivity", "activityId": "wait"}]}
        modified = rest.post(f"/process-instance/{a}/modification", json=again)
        assert modified.status_code == 204, modified.text
        assert len(gated.engine.instance(a).user_tasks()) == 2
        assert rest.delete(f"/process-instance/{a}").status_code == 204
        assert _state(gated, a) == "Terminated"

        _refused_by_permission(rest.post(f"/process-instance/{b}/variables", json=variables), "b")
        _refused_by_permission(rest.post(f"/process-instance/{b}/modification", json=again), "b")
        _refused_by_permission(rest.delete(f"/process-instance/{b}"), "b", "DELETE_INSTANCE")
        assert _state(gated, b) == "Active"
        assert "checked" not in gated.engine.instance(b).variables()
        # What they may read is narrowed the same way: "a"'s instances, never "b"'s.
        kept = _instance(gated, "a")
        listed = rest.get("/process-instance").json()
        assert kept in {row["id"] for row in listed}
        assert {row["definitionId"].split(":")[0] for row in listed} == {"a"}
        assert rest.get(f"/process-instance/{b}").status_code == 404


def test_api_follows_the_grants_of_a_custom_group(gated: LiveServer) -> None:
    a, b = _instance(gated, "a"), _instance(gated, "b")
    with _api(gated, OPERATES_A) as api:
        variables = {"variables": {"checked": 8}}
        assert api.post(f"/instances/{a}/variables", json=variables).status_code == 200
        assert gated.engine.instance(a).variables()["checked"] == 8
        assert api.post(f"/instances/{a}/cancel").status_code == 200
        assert _state(gated, a) == "Terminated"

        for refused in (
            api.post(f"/instances/{b}/variables", json=variables),
            api.post(f"/instances/{b}/cancel"),
        ):
            assert refused.status_code == 403, refused.text
            assert refused.json()["type"] == "Forbidden"
            assert {"resource_type": "ProcessDefinition", "resource_id": "b"} in [
                {k: m[k] for k in ("resource_type", "resource_id")}
                for m in refused.json()["detail"]["missing"]
            ]
        assert _state(gated, b) == "Active"
        assert api.get(f"/instances/{b}").status_code == 404


def test_the_console_follows_the_grants_of_a_custom_group(
    gated: LiveServer, operates_a: Browser
) -> None:
    a, b = _instance(gated, "a"), _instance(gated, "b")
    page = operates_a.get(f"/instances/{a}")
    assert page.status_code == 200
    assert f'hx-post="/instances/{a}/cancel"' in page.text
    assert 'id="modify"' in page.text or "modify.js" in page.text
    assert operates_a.get(f"/instances/{b}").status_code == 404

    form = {"name": "checked", "type": "integer", "value": "9"}
    assert operates_a.post(f"/instances/{a}/variables", data=form).status_code == 200
    assert gated.engine.instance(a).variables()["checked"] == 9
    token = str(gated.engine.instance(a).tokens()[0].token_id)
    instructions = f'[{{"op": "before", "node": "wait"}}, {{"op": "cancel", "token": "{token}"}}]'
    modified = operates_a.post(f"/instances/{a}/modify", data={"instructions": instructions})
    assert modified.status_code == 200, modified.text
    assert operates_a.post(f"/instances/{a}/cancel").status_code == 200
    assert _state(gated, a) == "Terminated"

    for path, data in (
        (f"/instances/{b}/variables", form),
        (f"/instances/{b}/modify", {"instructions": instructions}),
        (f"/instances/{b}/cancel", {}),
    ):
        refused = operates_a.post(path, data=data)
        assert refused.status_code == 403, (path, refused.text)
        assert re.search(r"(UPDATE|DELETE)_INSTANCE on", refused.text), refused.text
    assert _state(gated, b) == "Active"


def test_the_inspector_shows_retry_where_the_grants_allow_it(
    gated: LiveServer, operates_a: Browser
) -> None:
    """An incident of "a" (a failed external task) offers Retry to a holder of UPDATE_INSTANCE
    on "a" (RETRY_JOB's permit accepts it), and the job panel its controls."""
    key = "a-external"
    gated.engine.deploy(
        ProcessBuilder(key)
        .start_event("start")
        .service_task("work", "Work", topic=key)
        .end_event("end")
        .chain("start", "work", "end")
        .build()
    )
    _grant(gated.engine, f"{OPERATES_A}-group", PD, key, "READ_INSTANCE", "UPDATE_INSTANCE")
    instance = _instance(gated, key)
    (task,) = gated.engine.fetch_and_lock("w", {key: 60_000})
    gated.engine.fail_external_task(task["id"], "w", "broken", retries=0)
    panel = operates_a.get(f"/instances/{instance}/panel/incidents")
    assert panel.status_code == 200
    assert re.search(r'hx-post="/incidents/[0-9a-f-]+/retry"', panel.text), panel.text


# -- identity reads and changes by their own permissions -----------------------------------------


def test_read_on_users_lists_them_and_creates_none(gated: LiveServer) -> None:
    with _rest(gated, READS_USERS) as rest:
        users = {row["id"] for row in rest.get("/user").json()}
        assert {"admin", "viewer", OPERATES_A, READS_USERS} <= users
        assert rest.get("/user/count").json()["count"] == len(users)
        created = rest.post(
            "/user/create",
            json={"profile": {"id": f"new-{next(_serial)}"}, "credentials": {"password": "x" * 12}},
        )
        assert created.status_code == 403, created.text
        assert created.json()["type"] == "AuthorizationException"
        assert "'CREATE' permission" in created.json()["message"]
    with _rest(gated, NOBODY) as rest:
        # Without READ on them, a user reads only themselves and the groups they belong to; no
        # tenant, no authorization (the lists are narrowed in SQL, their counts too).
        assert [row["id"] for row in rest.get("/user").json()] == [NOBODY]
        assert rest.get("/user/count").json() == {"count": 1}
        assert [row["id"] for row in rest.get("/group").json()] == [f"{NOBODY}-group"]
        assert rest.get("/tenant").json() == []
        assert rest.get("/authorization").json() == []
        assert rest.get("/authorization/count").json() == {"count": 0}


# -- no grant at all ----------------------------------------------------------------------------


def test_no_grant_sees_empty_lists_and_no_control(gated: LiveServer) -> None:
    for key in ("a", "b"):
        _instance(gated, key)
    with _rest(gated, NOBODY) as rest:
        for path in ("/process-instance", "/task", "/incident", "/job", "/process-definition"):
            answer = rest.get(path)
            assert (answer.status_code, answer.json()) == (200, []), path
        assert rest.get("/process-instance/count").json() == {"count": 0}
    with _api(gated, NOBODY) as api:
        assert api.get("/instances").json()["items"] == []
        # The gates of the routes that read no narrowed rows: the audit log, the webhooks.
        for path in ("/audit", "/webhooks"):
            refused = api.get(path)
            assert refused.status_code == 403, (path, refused.text)
    browser = Browser(gated.url, NOBODY)
    try:
        for path in ("/instances", "/incidents", "/tasks", "/definitions"):
            page = browser.get(path)
            main = re.search(r"<main\b.*</main>", page.text, re.S)
            assert main is not None, (path, page.status_code)
            assert not re.search(r"hx-post=|data-bulk-retry|data-select\b", main.group(0)), path
        nav = browser.get("/").text
        for hidden in ('href="/audit"', 'href="/admin/users"', 'href="/sessions"'):
            assert hidden not in nav
    finally:
        browser.close()


# -- API tokens of one's own ----------------------------------------------------------------------


def test_a_users_own_token_acts_as_them_and_no_more(gated: LiveServer) -> None:
    a, b = _instance(gated, "a"), _instance(gated, "b")
    with _api(gated, OPERATES_A) as api:
        made = api.post("/account/tokens", json={"name": "ops-script"})
        assert made.status_code == 201, made.text
        assert made.json()["owner"] == OPERATES_A
        token = made.json()["token"]
        assert api.get("/account/tokens").json()["items"] == [{"name": "ops-script"}]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"{gated.url}/api/v1", headers=headers, timeout=30.0) as bearer:
        assert bearer.post(f"/instances/{a}/cancel").status_code == 200
        assert bearer.post(f"/instances/{b}/cancel").status_code == 403
        assert bearer.get("/tokens").status_code == 403  # no admin's list
        assert bearer.post("/tokens", json={"name": "x", "role": "admin"}).status_code == 403
    # Nobody else's token is theirs to revoke; their own is.
    with _api(gated, NOBODY) as other:
        assert other.delete("/account/tokens/ops-script").status_code == 404
    with _api(gated, OPERATES_A) as api:
        assert api.delete("/account/tokens/ops-script").status_code == 204
        assert api.get("/account/tokens").json()["items"] == []
    with httpx.Client(base_url=f"{gated.url}/api/v1", headers=headers, timeout=30.0) as bearer:
        assert bearer.get("/instances").status_code == 401


def test_a_viewer_makes_a_token_on_the_account_page(gated: LiveServer) -> None:
    browser = Browser(gated.url, "viewer")
    try:
        made = browser.post("/account/tokens", data={"label": "viewer-own"})
        assert made.status_code == 200, made.text
        token = re.search(r'<code class="new-token">([^<]+)</code>', made.text)
        assert token is not None
        page = browser.get("/account").text
        assert 'data-token="viewer-own"' in page
        assert 'data-token="admin-token"' not in page  # group tokens are an admin's to see
        headers = {"Authorization": f"Bearer {token.group(1)}"}
        with httpx.Client(base_url=f"{gated.url}/api/v1", headers=headers) as bearer:
            assert bearer.get("/instances").status_code == 200
            assert bearer.post(f"/instances/{_instance(gated, 'a')}/cancel").status_code == 403
        revoked = browser.post("/account/tokens/viewer-own/revoke")
        assert revoked.status_code == 200, revoked.text
        assert 'data-token="viewer-own"' not in browser.get("/account").text
    finally:
        browser.close()


# -- the buttons in Chromium ----------------------------------------------------------------------


def test_chromium_shows_the_controls_the_grants_allow(gated: LiveServer, browser: Chromium) -> None:
    a = _instance(gated, "a")
    for user, shown in ((OPERATES_A, True), ("viewer", False)):
        context = browser.new_context(base_url=gated.url)
        form = context.request.get("/login")
        signed_in = context.request.post(
            "/login",
            form={
                "name": user,
                "password": PASSWORD,
                "next": "/",
                "login_token": login_token(form.text()),
            },
        )
        assert signed_in.ok, signed_in.status
        page = context.new_page()
        page.goto(f"/instances/{a}")
        expect(page.locator("#instance-state")).to_have_text("Active")
        cancel = page.get_by_role("button", name="Cancel instance")
        if shown:
            expect(cancel).to_be_visible()
        else:
            expect(cancel).to_have_count(0)
        context.close()
