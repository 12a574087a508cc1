"""Console sessions live in the database: they end at once on log-out, when their user is
deleted or changes password, when an admin ends them, and after their idle or absolute timeout;
a role change is seen at the next request. Also: log-in CSRF, Origin checks, cookie attributes,
and malformed credentials that must be refused, never answered with a 500."""

from __future__ import annotations

import base64
import hashlib
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.conftest import Client
from tests.api.helpers import start
from tests.server import PASSWORD, LiveServer, console_login, live_server, login_token


def new_user(admin: httpx.Client, role: str = "operator") -> str:
    name = f"u-{uuid.uuid4().hex[:8]}"
    made = admin.post("/users", json={"name": name, "role": role, "password": PASSWORD})
    assert made.status_code == 201, made.text
    return name


class Browser:
    """A console client: its session cookie, and the CSRF token of the pages it was shown."""

    def __init__(self, url: str, name: str, password: str = PASSWORD) -> None:
        response = console_login(url, name, password)
        assert response.status_code == 303, response.text
        self.cookie = response.cookies["interlock_session"]
        self.client = httpx.Client(
            base_url=url, cookies={"interlock_session": self.cookie}, timeout=30.0
        )
        page = self.client.get("/")
        assert page.status_code == 200
        found = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert found
        self.csrf = found.group(1)

    def get(self, path: str) -> httpx.Response:
        return self.client.get(path, follow_redirects=False)

    def post(self, path: str, **options: Any) -> httpx.Response:
        headers = {"X-CSRF-Token": self.csrf, "HX-Request": "true", **options.pop("headers", {})}
        return self.client.post(path, headers=headers, follow_redirects=False, **options)

    def logged_in(self) -> bool:
        answer = self.get("/instances")
        assert answer.status_code in (200, 303), answer.status_code
        return answer.status_code == 200

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def browsers(api: LiveServer) -> Iterator[Any]:
    made: list[Browser] = []

    def make(name: str, password: str = PASSWORD) -> Browser:
        browser = Browser(api.url, name, password)
        made.append(browser)
        return browser

    yield make
    for browser in made:
        browser.close()


def basic(name: str, password: str = PASSWORD) -> dict[str, str]:
    encoded = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def set_note(browser: Browser, instance_id: str, value: str) -> httpx.Response:
    return browser.post(
        f"/instances/{instance_id}/variables",
        data={"name": "note", "type": "string", "value": value},
    )


def test_deleting_a_user_ends_their_sessions_at_once(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    name = new_user(admin)
    browser = browsers(name)
    instance = start(admin, "review")["id"]
    assert set_note(browser, instance, "before").status_code == 200
    assert browser.logged_in()

    assert admin.delete(f"/users/{name}").status_code == 204

    assert not browser.logged_in()
    refused = set_note(browser, instance, "after")
    assert refused.status_code == 401
    variables = admin.get(f"/instances/{instance}/variables").json()
    assert variables["note"]["value"] == "before"


def test_log_out_ends_the_session_and_needs_the_csrf_token(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    browser = browsers(new_user(admin))
    forged = browser.client.post("/logout", follow_redirects=False)
    assert forged.status_code == 403
    assert browser.logged_in()

    out = browser.post("/logout")
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert "interlock_session=" in out.headers["set-cookie"]

    # The old cookie, sent again, names no session any more.
    assert not browser.logged_in()
    with api.engine.connection() as conn:
        left = conn.execute(
            "SELECT count(*) FROM console_session WHERE token_hash = %s",
            (hashlib.sha256(browser.cookie.encode()).hexdigest(),),
        ).fetchone()
    assert left == (0,)


def test_a_role_change_is_seen_at_the_next_request(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    name = new_user(admin, "operator")
    browser = browsers(name)
    # Retrying as a batch every incident of a definition that has none: allowed, nothing found.
    nothing = {"text": f"no-such-incident-{uuid.uuid4()}"}
    allowed = browser.post("/incidents/batch", data=nothing)
    assert allowed.status_code == 400 and "no open incident" in allowed.text, allowed.text

    changed = admin.post(f"/users/{name}/role", json={"role": "viewer"})
    assert changed.status_code == 204, changed.text

    # A viewer's group is granted no batch creation: refused by that permission.
    refused = browser.post("/incidents/batch", data=nothing)
    assert refused.status_code == 403 and "Not allowed" in refused.text, refused.text
    assert browser.logged_in()


def test_a_password_change_ends_sessions_and_the_old_basic_password(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    name = new_user(admin, "viewer")
    browser = browsers(name)
    url = f"{api.url}/api/v1/definitions"
    for _ in range(2):  # the second answer comes from the verified-password cache
        assert httpx.get(url, headers=basic(name)).status_code == 200

    changed = admin.post(f"/users/{name}/password", json={"password": "another-password-1"})
    assert changed.status_code == 204, changed.text

    assert not browser.logged_in()
    assert httpx.get(url, headers=basic(name)).status_code == 401
    assert httpx.get(url, headers=basic(name, "another-password-1")).status_code == 200


def test_a_deleted_users_basic_password_stops_working_at_once(
    api: LiveServer, admin: httpx.Client
) -> None:
    name = new_user(admin, "viewer")
    for url in (f"{api.url}/api/v1/definitions", f"{api.url}/engine-rest/process-definition"):
        for _ in range(2):
            assert httpx.get(url, headers=basic(name)).status_code == 200
    assert admin.delete(f"/users/{name}").status_code == 204
    for url in (f"{api.url}/api/v1/definitions", f"{api.url}/engine-rest/process-definition"):
        assert httpx.get(url, headers=basic(name)).status_code == 401


def test_the_cookie_carries_only_a_random_id_stored_as_its_digest(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    name = new_user(admin)
    browser = browsers(name)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", browser.cookie)
    assert name not in base64.urlsafe_b64decode(browser.cookie + "=").decode("latin-1")
    with api.engine.connection() as conn:
        rows = conn.execute(
            "SELECT s.token_hash, s.csrf_token, s.client_address, s.user_agent"
            " FROM console_session s JOIN credential c ON c.id = s.credential_id"
            " WHERE c.name = %s",
            (name,),
        ).fetchall()
    assert len(rows) == 1
    token_hash, csrf, address, agent = rows[0]
    assert token_hash == hashlib.sha256(browser.cookie.encode()).hexdigest()
    assert browser.cookie not in (csrf, address, agent)
    assert csrf == browser.csrf
    assert address == "127.0.0.1" and agent and "httpx" in agent


def test_admins_list_and_end_sessions(
    api: LiveServer, client: Client, admin: httpx.Client, browsers: Any
) -> None:
    name = new_user(admin)
    first, second = browsers(name), browsers(name)

    listed = admin.get("/sessions")
    assert listed.status_code == 200
    mine = [s for s in listed.json()["items"] if s["user"] == name]
    assert len(mine) == 2
    assert set(mine[0]) == {
        "id",
        "user",
        "role",
        "created_at",
        "last_seen_at",
        "expires_at",
        "client_address",
        "user_agent",
    }
    assert mine[0]["role"] == "operator" and mine[0]["client_address"] == "127.0.0.1"
    for secret in (first.cookie, second.cookie, first.csrf, second.csrf):
        assert secret not in listed.text
    with api.engine.connection() as conn:
        hashes = [r[0] for r in conn.execute("SELECT token_hash FROM console_session")]
    assert not any(h in listed.text for h in hashes)
    assert client("viewer").get("/sessions").status_code == 403
    assert client("operator").get("/sessions").status_code == 403

    one = mine[0]["id"]
    assert admin.delete(f"/sessions/{one}").status_code == 204
    assert admin.delete(f"/sessions/{one}").status_code == 404
    assert admin.delete("/sessions/not-an-id").status_code == 404
    assert sorted([first.logged_in(), second.logged_in()]) == [False, True]

    third = browsers(name)
    ended = admin.delete(f"/users/{name}/sessions")
    assert ended.status_code == 200 and ended.json() == {"ended": 2}
    assert not first.logged_in() and not second.logged_in() and not third.logged_in()
    assert admin.delete("/users/nobody-here/sessions").status_code == 404
    assert client("operator").delete(f"/users/{name}/sessions").status_code == 403


def _age(api: LiveServer, cookie: str, column: str, seconds: int) -> None:
    with api.engine.connection() as conn:
        conn.execute(
            f"UPDATE console_session SET {column} = now() - make_interval(secs => %s)"
            " WHERE token_hash = %s",
            (seconds, hashlib.sha256(cookie.encode()).hexdigest()),
        )


def _last_seen(api: LiveServer, cookie: str) -> Any:
    with api.engine.connection() as conn:
        row = conn.execute(
            "SELECT now() - last_seen_at FROM console_session WHERE token_hash = %s",
            (hashlib.sha256(cookie.encode()).hexdigest(),),
        ).fetchone()
    return row[0] if row else None


def test_idle_and_absolute_timeouts(api: LiveServer, admin: httpx.Client, browsers: Any) -> None:
    name = new_user(admin)
    idle, old, active = browsers(name), browsers(name), browsers(name)

    _age(api, idle.cookie, "last_seen_at", 31 * 60)  # the default idle timeout is 30 min
    assert not idle.logged_in()

    _age(api, old.cookie, "expires_at", 1)  # past its absolute end, however active
    assert not old.logged_in()

    # Seen 30 s ago: not written again yet (at most once a minute).
    _age(api, active.cookie, "last_seen_at", 30)
    assert active.logged_in()
    assert _last_seen(api, active.cookie).total_seconds() >= 29
    # Seen 29 min ago: still live, and marked seen now.
    _age(api, active.cookie, "last_seen_at", 29 * 60)
    assert active.logged_in()
    assert _last_seen(api, active.cookie).total_seconds() < 10
    assert active.logged_in()


def test_malformed_credentials_are_refused_not_errors(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    cookie = "interlock_session=eyJuYW1lIjoiYWRtaW4ifQ.\u00e9\u00fc".encode()
    page = httpx.get(f"{api.url}/instances", headers={b"Cookie": cookie})
    assert page.status_code == 303 and page.headers["location"].startswith("/login")
    post = httpx.post(f"{api.url}/logout", headers={b"Cookie": cookie, b"HX-Request": b"true"})
    assert post.status_code == 303
    retry = f"{api.url}/incidents/{uuid.uuid4()}/retry"
    post = httpx.post(retry, headers={b"Cookie": cookie, b"HX-Request": b"1"})
    assert post.status_code == 401

    with_nul = base64.b64encode(b"adm\x00in:" + PASSWORD.encode()).decode()
    not_utf8 = base64.b64encode(b"\xff\xfe:" + PASSWORD.encode()).decode()
    for value in (f"Basic {with_nul}", f"Basic {not_utf8}", "Basic %%%", "Basic", "Bearer"):
        for path in ("/api/v1/definitions", "/engine-rest/process-definition"):
            answer = httpx.get(f"{api.url}{path}", headers={"Authorization": value})
            assert answer.status_code == 401, (value, path, answer.text)

    browser = browsers(new_user(admin))
    token = "\u00e9t\u00e9-" + browser.csrf
    refused = browser.client.post(
        f"/incidents/{uuid.uuid4()}/retry",
        headers={"X-CSRF-Token": token.encode(), "HX-Request": "true"},
    )
    assert refused.status_code == 403 and refused.json()["type"] == "Forbidden"

    with httpx.Client(base_url=api.url) as fresh:
        form = fresh.get("/login")
        nul_login = fresh.post(
            "/login",
            data={"name": "adm\0in", "password": PASSWORD, "login_token": login_token(form.text)},
        )
    assert nul_login.status_code == 401 and "Wrong user name or password" in nul_login.text


def test_log_in_needs_the_forms_token(api: LiveServer) -> None:
    with httpx.Client(base_url=api.url) as browser:
        form = browser.get("/login")
        cookie = form.headers["set-cookie"]
        assert "interlock_login=" in cookie and "HttpOnly" in cookie
        assert "SameSite=strict" in cookie and "Path=/login" in cookie
        assert "Secure" not in cookie
        token = login_token(form.text)
        assert browser.cookies["interlock_login"] == token

        fields = {"name": "admin", "password": PASSWORD, "next": "/"}
        for sent in ({}, {"login_token": ""}, {"login_token": token[:-1] + "x"}):
            refused = browser.post("/login", data={**fields, **sent})
            assert refused.status_code == 403
            assert "expired" in refused.text and "interlock_session" not in refused.cookies

        # A cross-site form post: the attacker's page cannot read or set the cookie.
        outsider = httpx.post(f"{api.url}/login", data={**fields, "login_token": token})
        assert outsider.status_code == 403

        # The same form shown twice keeps the token: two tabs can both log in.
        assert login_token(browser.get("/login").text) == token
        done = browser.post("/login", data={**fields, "login_token": token})
        assert done.status_code == 303
        session = done.headers.get_list("set-cookie")
        assert any("interlock_session=" in c and "HttpOnly" in c for c in session)
        assert all("Secure" not in c for c in session)


def test_console_posts_from_another_origin_are_refused(
    api: LiveServer, admin: httpx.Client, browsers: Any
) -> None:
    browser = browsers(new_user(admin))
    evil = {"Origin": "http://evil.example"}
    missing = uuid.uuid4()
    assert browser.post(f"/incidents/{missing}/retry", headers=evil).status_code == 403
    assert browser.post("/logout", headers=evil).status_code == 403
    assert browser.post("/logout", headers={"Origin": "null"}).status_code == 403
    assert browser.logged_in()
    assert (
        browser.post(f"/incidents/{missing}/retry", headers={"Origin": api.url}).status_code == 404
    )

    with httpx.Client(base_url=api.url) as other:
        token = login_token(other.get("/login").text)
        fields = {"name": "admin", "password": PASSWORD, "login_token": token}
        assert other.post("/login", data=fields, headers=evil).status_code == 403
        assert other.post("/login", data=fields, headers={"Origin": api.url}).status_code == 303

    assert browser.post("/logout", headers={"Origin": api.url}).status_code == 303
    assert not browser.logged_in()


def test_public_url_decides_the_origin_and_makes_cookies_secure(database_url: str) -> None:
    options = {"public_url": "https://interlock.example"}
    with live_server(database_url, run_jobs=False, settings_options=options) as server:
        form = httpx.get(f"{server.url}/login")
        assert "Secure" in form.headers["set-cookie"]
        token = login_token(form.text)
        cookies = {"interlock_login": token}
        fields = {"name": "admin", "password": PASSWORD, "login_token": token}
        # The Host this request came to is not the public origin.
        wrong = httpx.post(
            f"{server.url}/login", data=fields, cookies=cookies, headers={"Origin": server.url}
        )
        assert wrong.status_code == 403
        done = httpx.post(
            f"{server.url}/login",
            data=fields,
            cookies=cookies,
            headers={"Origin": "https://interlock.example"},
        )
        assert done.status_code == 303
        assert all("Secure" in c for c in done.headers.get_list("set-cookie"))


def test_changing_an_unknown_user_or_a_short_password_is_refused(admin: httpx.Client) -> None:
    assert admin.post("/users/nobody-here/role", json={"role": "admin"}).status_code == 404
    assert admin.post("/tokens/nobody-here/role", json={"role": "admin"}).status_code == 404
    short = admin.post(f"/users/{new_user(admin)}/password", json={"password": "short"})
    assert short.status_code == 400
    wrong = admin.post(f"/users/{new_user(admin)}/role", json={"role": "root"})
    assert wrong.status_code == 400 and wrong.json()["detail"]["field"] == "role"
