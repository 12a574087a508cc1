"""Single sign-on against the real OpenID provider the tests start (tests/oidc_provider.py): the
console's code flow over HTTP (state, errors, provisioning, role from groups, log-out through the
provider), bearer JWTs on /api/v1 and /engine-rest (signature with key rotation, issuer,
audience, expiry), and local passwords switched off."""

from __future__ import annotations

import base64
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import psycopg
import pytest
from psycopg import sql

from app import oidc
from app.oidc import REFETCH_SECONDS
from app.settings import OidcSettings, Settings, role_groups
from engine.db.database import connect_url_for
from engine.queries import accounts as account_reads
from tests.oidc_provider import (
    AUDIENCE,
    OTHER_AUDIENCE,
    OidcClient,
    OidcProvider,
    follow,
    login,
    new_signing_key,
    submit_form,
)
from tests.server import PASSWORD, LiveServer, free_port, live_server

SCOPES = "openid profile email groups"
ROLE_GROUPS = "admin=admin,operator=engineering"


Databases = Callable[[], str]


@pytest.fixture(scope="module")
def databases(
    pg_server: str, admin_connection: psycopg.Connection[Any], template_database: str
) -> Iterator[Databases]:
    """`databases()`: a new database for a server of the module's (each has its own users)."""
    names: list[str] = []

    def make() -> str:
        name = f"test_sso_{uuid.uuid4().hex[:10]}"
        admin_connection.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template_database)
            )
        )
        names.append(name)
        return connect_url_for(pg_server, name)

    yield make
    for name in names:
        admin_connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def sso_settings(provider: OidcProvider, client: OidcClient, **options: Any) -> OidcSettings:
    return OidcSettings(
        issuer=provider.issuer,
        client_id=client.client_id,
        client_secret=client.client_secret,
        scopes=SCOPES,
        audience=AUDIENCE,
        role_groups=role_groups(ROLE_GROUPS),
        **options,
    )


@pytest.fixture(scope="module")
def server(
    databases: Databases, oidc_provider: OidcProvider
) -> Iterator[tuple[LiveServer, OidcClient]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    client = oidc_provider.register_client([f"{url}/auth/callback"], [f"{url}/login"])
    options = {"public_url": url, "oidc": sso_settings(oidc_provider, client)}
    with live_server(databases(), port=port, settings_options=options) as live:
        yield live, client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def role_of(live: LiveServer, name: str) -> str | None:
    record = account_reads.password_record(live.engine, name)
    return record.role.value if record else None


def profile_of(live: LiveServer, name: str) -> tuple[str | None, ...] | None:
    with live.engine.connection() as conn:
        row = conn.execute(
            "SELECT first_name, last_name, email FROM identity_user WHERE id = %s", (name,)
        ).fetchone()
    return tuple(row) if row else None


def audit_entries(live: LiveServer, name: str) -> list[tuple[str, str, str, Any]]:
    """(operation, channel, user_id, details) of the entries about user `name`."""
    with live.engine.connection() as conn:
        rows = conn.execute(
            "SELECT operation, channel, user_id, details FROM audit_entry"
            " WHERE entity = 'User' AND entity_id = %s AND property = 'role' ORDER BY at, id",
            (name,),
        ).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def sign_in(browser: httpx.Client, provider: OidcProvider, username: str) -> httpx.Response:
    """The console's single sign-on as a browser does it, up to the callback's answer."""
    start = browser.get("/auth/sso", params={"next": "/incidents"})
    assert start.status_code == 303, start.text
    authorize = urlsplit(start.headers["location"])
    query = parse_qs(authorize.query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"]
    assert query["state"] and query["nonce"] and query["scope"] == [SCOPES]
    form = follow(browser, browser.get(start.headers["location"]))
    account = provider.accounts[username]
    signed_in = login(browser, form, username, account.password)
    back = follow(browser, signed_in, stop_at=str(browser.base_url))
    assert back.is_redirect, back.text
    return browser.get(back.headers["location"])


def csrf_of(browser: httpx.Client) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', browser.get("/").text)
    assert found
    return found.group(1)


def test_sign_in_provisions_the_user_with_the_role_of_their_groups_and_logs_out_at_the_provider(
    server: tuple[LiveServer, OidcClient], oidc_provider: OidcProvider
) -> None:
    live, _ = server
    with httpx.Client(base_url=live.url, timeout=30.0) as browser:
        answer = sign_in(browser, oidc_provider, "ada")
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == "/incidents"
        assert "interlock_session" in answer.cookies
        page = browser.get("/incidents")
        assert page.status_code == 200
        assert 'class="user">ada <span class="role">operator</span>' in page.text
        # Provisioned once, by the command, as ada's own console action, with her profile.
        assert role_of(live, "ada") == "operator"
        assert profile_of(live, "ada") == ("Ada", "Lovelace", "ada@example.org")
        [(operation, channel, user, details)] = audit_entries(live, "ada")
        assert (operation, channel, user) == ("Create", "console", "ada")
        assert details == {
            "provider": oidc_provider.issuer,
            "subject": "ada",
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "ada@example.org",
        }
        csrf = csrf_of(browser)

        # Log-out ends the session and goes on to the provider's end-session endpoint.
        out = browser.post("/logout", headers={"X-CSRF-Token": csrf, "HX-Request": "true"})
        assert out.status_code == 204
        end_session = urlsplit(out.headers["HX-Redirect"])
        metadata = oidc_provider.metadata()
        assert (
            f"{end_session.scheme}://{end_session.netloc}{end_session.path}"
            == (metadata["end_session_endpoint"])
        )
        params = parse_qs(end_session.query)
        assert params["post_logout_redirect_uri"] == [f"{live.url}/login"]
        assert params["id_token_hint"][0].count(".") == 2
        assert browser.get("/incidents").status_code == 303  # the session is gone
        confirm = browser.get(out.headers["HX-Redirect"])
        assert confirm.status_code == 200
        done = follow(
            browser, submit_form(browser, confirm, "op.logoutForm"), stop_at=f"{live.url}/login"
        )
        assert done.headers["location"] == f"{live.url}/login"


def test_each_sign_in_brings_the_role_in_line_with_the_groups(
    server: tuple[LiveServer, OidcClient], oidc_provider: OidcProvider
) -> None:
    live, _ = server
    # grace was an operator here; her provider group "admin" makes her an admin.
    made = httpx.post(
        f"{live.url}/api/v1/users",
        json={"name": "grace", "role": "operator", "password": PASSWORD},
        headers=live.bearer("admin"),
    )
    assert made.status_code == 201, made.text
    with httpx.Client(base_url=live.url, timeout=30.0) as browser:
        assert sign_in(browser, oidc_provider, "grace").status_code == 303
        assert browser.get("/sessions").status_code == 200
    assert role_of(live, "grace") == "admin"
    assert profile_of(live, "grace") == ("Grace", "Hopper", "grace@example.org")
    entries = audit_entries(live, "grace")
    assert entries[-1][:3] == ("Update", "console", "grace")


def test_a_callback_this_browser_did_not_start_or_with_another_state_is_refused(
    server: tuple[LiveServer, OidcClient], oidc_provider: OidcProvider
) -> None:
    live, _ = server
    with httpx.Client(base_url=live.url, timeout=30.0) as browser:
        alone = browser.get("/auth/callback", params={"code": "x", "state": "y"})
        assert alone.status_code == 400
        assert "Single sign-on failed: this sign-in was not started here" in alone.text
        assert browser.get("/auth/sso").status_code == 303
        forged = browser.get("/auth/callback", params={"code": "x", "state": "forged"})
        assert forged.status_code == 401, forged.text
        assert "does not belong to this sign-in (state)" in forged.text
        # The flow is forgotten: the real state cannot be used afterwards either.
        assert "interlock_sso_flow" not in browser.cookies
        assert browser.get("/auth/sso").status_code == 303
        denied = browser.get(
            "/auth/callback",
            params={
                "error": "access_denied",
                "error_description": "the user said no",
                "state": _flow_state(browser),
            },
        )
        assert denied.status_code == 401
        assert "the identity provider answered: the user said no" in denied.text
        assert browser.get("/auth/sso").status_code == 303
        bad_code = browser.get(
            "/auth/callback", params={"code": "not-a-code", "state": _flow_state(browser)}
        )
        assert bad_code.status_code == 401
        assert "refused the sign-in: invalid_grant" in bad_code.text


def unsigned(claims: dict[str, Any]) -> str:
    """A JWT with `alg` none: claims that verify with no key."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    claims = {"exp": int(time.time()) + 300, **claims}
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def _flow_state(browser: httpx.Client) -> str:
    cookie = browser.cookies["interlock_sso_flow"]
    state: str = json.loads(base64.urlsafe_b64decode(cookie + "=" * (-len(cookie) % 4)))["state"]
    return state


def test_a_provider_that_is_down_ends_on_the_log_in_page(databases: Databases) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    down = OidcSettings(issuer=f"http://127.0.0.1:{free_port()}", client_id="interlock")
    with (
        live_server(
            databases(), port=port, settings_options={"public_url": url, "oidc": down}
        ) as live,
        httpx.Client(base_url=live.url, timeout=30.0) as browser,
    ):
        answer = browser.get("/auth/sso")
        assert answer.status_code == 502
        assert "Single sign-on failed: the identity provider&#39;s discovery document" in (
            answer.text
        )
        assert 'id="sso-login"' in answer.text


def test_bearer_jwts_from_the_provider_on_both_apis(
    server: tuple[LiveServer, OidcClient], oidc_provider: OidcProvider
) -> None:
    live, _ = server
    # A machine's token (client credentials): its user is the client, a viewer.
    machine = oidc_provider.client_credentials_token()
    assert (
        httpx.get(f"{live.url}/engine-rest/process-definition", headers=bearer(machine)).status_code
        == 200
    )
    assert httpx.get(f"{live.url}/api/v1/definitions", headers=bearer(machine)).status_code == 200
    assert role_of(live, oidc_provider.client.client_id) == "viewer"

    # A person's token: the same user as their console log-in, with the role of their groups.
    alan = oidc_provider.authorization_code_tokens("alan", audience=AUDIENCE)["access_token"]
    assert httpx.get(f"{live.url}/api/v1/definitions", headers=bearer(alan)).status_code == 200
    assert httpx.get(f"{live.url}/api/v1/users", headers=bearer(alan)).status_code == 403
    assert role_of(live, "alan") == "viewer"
    [(operation, channel, user, _)] = audit_entries(live, "alan")
    assert (operation, channel, user) == ("Create", "api", "alan")
    grace = oidc_provider.mint({"sub": "grace", "groups": ["admin"]})
    users = httpx.get(f"{live.url}/api/v1/users", headers=bearer(grace))
    assert users.status_code == 200, users.text
    count = httpx.get(f"{live.url}/engine-rest/process-definition/count", headers=bearer(grace))
    assert count.status_code == 200
    # Calls that change nothing write nothing.
    assert len(audit_entries(live, "alan")) == 1
    httpx.get(f"{live.url}/api/v1/definitions", headers=bearer(alan))
    assert len(audit_entries(live, "alan")) == 1

    # Opaque API tokens keep working.
    assert httpx.get(f"{live.url}/api/v1/users", headers=live.bearer("admin")).status_code == 200


def test_expired_wrong_audience_foreign_and_forged_jwts_are_refused(
    server: tuple[LiveServer, OidcClient], oidc_provider: OidcProvider
) -> None:
    live, client = server
    refused = {
        "expired": oidc_provider.mint({"sub": "ada"}, expires_in=-120),
        "wrong audience": oidc_provider.client_credentials_token(OTHER_AUDIENCE),
        "the id token's audience": oidc_provider.mint({"sub": "ada", "aud": client.client_id}),
        "another issuer": oidc_provider.mint({"sub": "ada", "iss": "http://127.0.0.1:1"}),
        "unknown key": oidc_provider.mint({"sub": "ada"}, key=new_signing_key()),
        "unsigned": unsigned({"iss": oidc_provider.issuer, "aud": AUDIENCE, "sub": "ada"}),
        "no subject": oidc_provider.mint({"sub": None}),
    }
    for what, token in refused.items():
        for path in ("/engine-rest/process-definition", "/api/v1/definitions"):
            answer = httpx.get(f"{live.url}{path}", headers=bearer(token))
            assert answer.status_code == 401, (what, path, answer.text)


def test_a_token_signed_with_a_rotated_key_is_accepted_and_the_withdrawn_key_refused(
    server: tuple[LiveServer, OidcClient],
    oidc_provider: OidcProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    live, _ = server
    before = oidc_provider.client_credentials_token()
    assert httpx.get(f"{live.url}/api/v1/definitions", headers=bearer(before)).status_code == 200
    oidc_provider.rotate_keys()
    # An unknown key id makes the server fetch the keys again, at most once a REFETCH_SECONDS:
    # the server's clock is moved past that instead of waiting for it.
    monkeypatch.setattr(oidc, "clock", lambda: time.monotonic() + REFETCH_SECONDS)
    after = oidc_provider.client_credentials_token()
    answer = httpx.get(f"{live.url}/engine-rest/process-definition", headers=bearer(after))
    assert answer.status_code == 200, answer.text
    # The old key is no longer published: the server fetched the new set and dropped it.
    assert httpx.get(f"{live.url}/api/v1/definitions", headers=bearer(before)).status_code == 401


def test_local_passwords_switched_off(databases: Databases, oidc_provider: OidcProvider) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    client = oidc_provider.register_client([f"{url}/auth/callback"], [f"{url}/login"])
    options = {
        "public_url": url,
        "oidc": sso_settings(oidc_provider, client),
        "local_passwords": False,
    }
    basic = base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    with (
        live_server(databases(), port=port, settings_options=options) as live,
        httpx.Client(base_url=live.url, timeout=30.0) as browser,
    ):
        refused = httpx.get(
            f"{url}/api/v1/definitions", headers={"Authorization": f"Basic {basic}"}
        )
        assert refused.status_code == 401
        page = browser.get("/login")
        assert 'id="sso-login"' in page.text and 'name="password"' not in page.text
        token = re.search(r'name="login_token" value="([^"]+)"', page.text)
        posted = browser.post(
            "/login",
            data={
                "name": "admin",
                "password": PASSWORD,
                "next": "/",
                "login_token": token.group(1) if token else "",
            },
        )
        assert posted.status_code == 403
        assert "Log-in with a password is switched off" in posted.text
        assert "interlock_session" not in browser.cookies
        # API tokens and single sign-on still work.
        assert (
            httpx.get(f"{url}/api/v1/definitions", headers=live.bearer("viewer")).status_code == 200
        )
        assert sign_in(browser, oidc_provider, "alan").status_code == 303
        assert browser.get("/").status_code == 200


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_OIDC_ISSUER", "https://id.example.org/")
    monkeypatch.setenv("INTERLOCK_OIDC_CLIENT_ID", "interlock")
    monkeypatch.setenv("INTERLOCK_OIDC_ROLE_GROUPS", "admin=platform-admins, operator=ops")
    monkeypatch.setenv("INTERLOCK_PUBLIC_URL", "https://ops.example.org")
    monkeypatch.setenv("INTERLOCK_LOCAL_PASSWORDS", "off")
    settings = Settings.from_env()
    assert settings.oidc is not None and not settings.local_passwords
    oidc = settings.oidc
    assert oidc.issuer == "https://id.example.org"
    assert (oidc.scopes, oidc.user_claim, oidc.groups_claim) == (
        "openid profile email",
        "preferred_username",
        "groups",
    )
    assert oidc.role_for(["ops", "platform-admins"]).value == "admin"
    assert oidc.role_for(["ops"]).value == "operator"
    assert oidc.role_for(["admin"]).value == "viewer"  # only the configured groups count
    assert oidc.role_for(None).value == "viewer"
    monkeypatch.setenv("INTERLOCK_OIDC_ROLE_GROUPS", "root=platform-admins")
    with pytest.raises(ValueError, match="INTERLOCK_OIDC_ROLE_GROUPS"):
        Settings.from_env()
    monkeypatch.delenv("INTERLOCK_OIDC_ROLE_GROUPS")
    monkeypatch.setenv("INTERLOCK_OIDC_REDIRECT_URL", "https://ops.example.org/elsewhere")
    with pytest.raises(ValueError, match="must end with /auth/callback"):
        Settings.from_env()
    monkeypatch.delenv("INTERLOCK_OIDC_ISSUER")
    monkeypatch.delenv("INTERLOCK_OIDC_REDIRECT_URL")
    with pytest.raises(ValueError, match="INTERLOCK_LOCAL_PASSWORDS=off needs single sign-on"):
        Settings.from_env()
