"""Sessions in the browser: log in through the form, an admin ends another user's session from
the sessions page, and log-out ends one's own."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import VIEWPORT, Login
from tests.browser.live import PASSWORD, ConsoleServer

pytestmark = pytest.mark.browser


def session_count(console: ConsoleServer, name: str) -> int:
    with console.engine.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM console_session s JOIN credential c ON c.id = s.credential_id"
            " WHERE c.name = %s",
            (name,),
        ).fetchone()
    return int(row[0]) if row else 0


def test_an_admin_ends_another_users_session(console: ConsoleServer, login: Login) -> None:
    operator = login("operator")
    operator.goto("/instances")
    expect(operator.get_by_role("link", name="Sessions", include_hidden=True)).to_have_count(0)
    assert operator.request.get("/sessions").status == 403

    admin = login("admin")
    admin.goto("/")
    admin.locator("header.top .nav-more summary").click()
    admin.get_by_role("link", name="Sessions").click()
    expect(admin).to_have_url(f"{console.url}/sessions")
    row = admin.locator("tr[data-session]", has_text="operator")
    expect(row).to_have_count(1)
    expect(admin.locator("tr[data-session]", has_text="(this session)")).to_have_count(1)

    # End session is an htmx control: it answers once the page's scripts are in place.
    expect(admin.locator("html")).to_have_attribute("data-console", "ready")
    # The answer itself draws the list again: no live refresh is needed (none gets through).
    admin.route("**/sessions?fragment=1", lambda route: route.abort())
    row.get_by_role("button", name="End session").click()
    expect(admin.locator("#flash-sessions")).to_contain_text("Session ended")
    expect(admin.locator("tr[data-session]", has_text="operator")).to_have_count(0)
    assert session_count(console, "operator") == 0

    operator.goto("/instances")
    expect(operator).to_have_url(f"{console.url}/login?next=/instances")


def test_log_in_through_the_form_and_log_out(console: ConsoleServer, browser: Browser) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=console.url)
    try:
        page = context.new_page()
        page.goto("/incidents")
        expect(page).to_have_url(f"{console.url}/login?next=/incidents")
        page.get_by_label("User").fill("viewer")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{console.url}/incidents")
        assert session_count(console, "viewer") == 1

        # Log out is an htmx control: it answers once the page's scripts are in place.
        expect(page.locator("html")).to_have_attribute("data-console", "ready")
        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(f"{console.url}/login")
        assert session_count(console, "viewer") == 0
        page.goto("/incidents")
        expect(page).to_have_url(f"{console.url}/login?next=/incidents")
    finally:
        context.close()
