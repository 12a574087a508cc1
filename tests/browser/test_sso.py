"""Single sign-on in Chromium against the real OpenID provider (tests/oidc_provider.py): the
log-in page's button, the provider's own form, the user's provider groups mapped to a role (an
admin opens the admin page, a viewer may not act), and log-out ending the console session and
the provider's through its end-session endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from app.settings import OidcSettings
from tests.browser.conftest import TIMEOUT_MS, VIEWPORT
from tests.browser.live import ConsoleServer
from tests.browser.test_sessions import session_count
from tests.oidc_provider import AUDIENCE, OidcProvider

pytestmark = pytest.mark.browser


@pytest.fixture
def sso_console(database_url: str, oidc_provider: OidcProvider) -> Iterator[ConsoleServer]:
    server = ConsoleServer(database_url)
    client = oidc_provider.register_client([f"{server.url}/auth/callback"], [f"{server.url}/login"])
    server.settings_options = {
        "public_url": server.url,
        "oidc": OidcSettings(
            issuer=oidc_provider.issuer,
            client_id=client.client_id,
            client_secret=client.client_secret,
            scopes="openid profile email groups",
            audience=AUDIENCE,
        ),
    }
    server.start()
    try:
        yield server
    finally:
        server.close()


def sign_in(page: Page, console: ConsoleServer, provider: OidcProvider, username: str) -> None:
    page.goto("/incidents")
    expect(page).to_have_url(f"{console.url}/login?next=/incidents")
    page.get_by_role("link", name="Sign in with single sign-on").click()
    expect(page).to_have_url(re.compile("^" + re.escape(provider.issuer) + "/"))
    page.locator("#username").fill(username)
    page.locator("#password").fill(provider.accounts[username].password)
    page.locator("#login-submit").click()
    expect(page).to_have_url(f"{console.url}/incidents")


def test_sign_in_with_the_provider_map_groups_and_log_out_there(
    sso_console: ConsoleServer, oidc_provider: OidcProvider, browser: Browser
) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=sso_console.url)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in(page, sso_console, oidc_provider, "grace")
        expect(page.locator(".who .user")).to_have_text("grace admin")
        assert session_count(sso_console, "grace") == 1

        # Her provider group "admin" makes her an admin: the admin page opens.
        page.locator("header.top .nav-more summary").click()
        page.get_by_role("link", name="Sessions").click()
        expect(page).to_have_url(f"{sso_console.url}/sessions")
        expect(page.locator("tr[data-session]", has_text="grace")).to_have_count(1)

        # Log-out ends the session here, then at the provider, and comes back to log-in.
        end_session = oidc_provider.metadata()["end_session_endpoint"]
        with page.expect_request(lambda request: request.url.startswith(end_session)) as sent:
            page.get_by_role("button", name="Log out").click()
        assert "id_token_hint=" in sent.value.url
        expect(page).to_have_url(f"{sso_console.url}/login")
        assert session_count(sso_console, "grace") == 0
        page.goto("/incidents")
        expect(page).to_have_url(f"{sso_console.url}/login?next=/incidents")
        # The provider's session ended too: signing in again asks for the password.
        page.get_by_role("link", name="Sign in with single sign-on").click()
        expect(page.locator("#login-form")).to_be_visible()
    finally:
        context.close()
    assert errors == []


def test_a_viewer_by_their_groups_cannot_act(
    sso_console: ConsoleServer, oidc_provider: OidcProvider, browser: Browser
) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=sso_console.url)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        sign_in(page, sso_console, oidc_provider, "alan")
        expect(page.locator(".who .user")).to_have_text("alan viewer")
        expect(page.get_by_role("link", name="Sessions", include_hidden=True)).to_have_count(0)
        assert page.request.get("/sessions").status == 403
        csrf = page.locator('meta[name="csrf-token"]').get_attribute("content") or ""
        ended = page.request.post("/sessions/end-others", headers={"X-CSRF-Token": csrf})
        assert ended.status == 403
        assert "needs ALL on every authorization" in ended.text()
        assert session_count(sso_console, "alan") == 1
    finally:
        context.close()
