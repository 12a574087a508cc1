"""The Admin section and the Account page in Chromium: an admin creates a user and a group,
puts the user in it, grants them READ on every process definition through the matrix, and the
new user signs in and sees their Account page with their name. Every page passes the console's
page checks (labelled fields, no sideways scrolling, no inline handlers) with no script error
and no CSP violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from engine.queries import identity as reads
from engine.queries.camunda.common import CamundaPage
from tests.browser.conftest import TIMEOUT_MS, VIEWPORT, Login
from tests.browser.live import ConsoleServer
from tests.browser.test_csp import watch
from tests.browser.test_pages import check

pytestmark = pytest.mark.browser

NEW_PASSWORD = "ada-lovelace-1815"


def ready(page: Page, path: str) -> None:
    check(page, path)
    expect(page.locator("html")).to_have_attribute("data-console", "ready")


def test_an_admin_grants_a_new_user_who_then_sees_their_account(
    console: ConsoleServer, login: Login, browser: Browser
) -> None:
    admin = login("admin")
    violations = watch(admin)
    for path in (
        "/admin/users",
        "/admin/users/viewer",
        "/admin/groups",
        "/admin/groups/admin",
        "/admin/tenants",
        "/admin/authorizations",
        "/admin/authorizations?resource=Batch",
        "/sessions",
        "/account",
    ):
        check(admin, path)

    admin.goto("/")
    admin.locator("header.top .nav-more summary").click()
    admin.get_by_role("navigation", name="Console").get_by_role("link", name="Admin").click()
    expect(admin).to_have_url(f"{console.url}/admin/users")
    expect(admin.locator("html")).to_have_attribute("data-console", "ready")
    form = admin.get_by_role("form", name="New user")
    form.get_by_label("Id", exact=True).fill("ada")
    form.get_by_label("First name").fill("Ada")
    form.get_by_label("Last name").fill("Lovelace")
    form.get_by_label("Password").fill(NEW_PASSWORD)
    form.get_by_role("button", name="Create user").click()
    expect(admin.locator("#flash-new-user")).to_contain_text("User 'ada' created")
    expect(admin.locator('tr[data-user="ada"]')).to_have_count(1)

    # A refusal is shown next to the form, in words.
    form.get_by_role("button", name="Create user").click()
    expect(admin.locator("#flash-new-user")).to_contain_text("already exists")

    ready(admin, "/admin/groups")
    form = admin.get_by_role("form", name="New group")
    form.get_by_label("Id", exact=True).fill("analysts")
    form.get_by_label("Name").fill("Analysts")
    form.get_by_role("button", name="Create group").click()
    expect(admin.locator('tr[data-group="analysts"]')).to_have_count(1)
    admin.locator('tr[data-group="analysts"]').get_by_role("link", name="analysts").click()
    expect(admin).to_have_url(f"{console.url}/admin/groups/analysts")
    expect(admin.locator("html")).to_have_attribute("data-console", "ready")
    admin.get_by_role("form", name="Add member").locator("select").select_option("ada")
    admin.get_by_role("button", name="Add member").click()
    expect(admin.locator('li[data-member="ada"]')).to_have_count(1)

    # Signing in takes a role: a built-in group, added from the user's page.
    ready(admin, "/admin/users/ada")
    admin.get_by_role("form", name="Add to group").locator("select").select_option("viewer")
    admin.get_by_role("button", name="Add to group").click()
    expect(admin.locator('#admin-user-groups li[data-group="viewer"]')).to_have_count(1)
    expect(admin.locator('#admin-user-groups li[data-group="analysts"]')).to_have_count(1)

    ready(admin, "/admin/authorizations")
    expect(admin.get_by_role("form", name="Which resources").locator("select")).to_have_value(
        "ProcessDefinition"
    )
    form = admin.get_by_role("form", name="New authorization")
    form.get_by_label("Type").select_option("grant")
    form.get_by_label("User").fill("ada")
    form.get_by_label("Resource id").fill("*")
    form.get_by_role("checkbox", name="READ", exact=True).check()
    form.get_by_role("button", name="Create authorization").click()
    expect(admin.locator("#flash-rule-form")).to_contain_text("Authorization created")
    row = admin.locator("tr[data-authorization]", has_text="user ada")
    expect(row).to_have_count(1)
    expect(row.locator('[data-permission="READ"]')).to_have_attribute("data-held", "yes")
    expect(row.locator('[data-permission="DELETE"]')).to_have_attribute("data-held", "no")
    assert violations == [], violations

    context = browser.new_context(viewport=VIEWPORT, base_url=console.url)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda error: errors.append(str(error)))
        theirs = watch(page)
        page.goto("/account")
        page.get_by_label("User").fill("ada")
        page.get_by_label("Password").fill(NEW_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{console.url}/account")
        expect(page.get_by_role("heading", level=1)).to_contain_text("Ada Lovelace")
        expect(page.locator("a.account")).to_contain_text("ada")
        expect(page.get_by_role("link", name="Admin", include_hidden=True)).to_have_count(0)
        ready(page, "/account")
        expect(page.locator("tr[data-session]")).to_have_count(1)
        expect(page.get_by_role("form", name="Change password")).to_be_visible()
        page.get_by_label("E-mail").fill("ada@example.com")
        page.get_by_role("button", name="Save profile").click()
        expect(page.locator("#flash-profile")).to_contain_text("saved")
        assert page.request.get("/admin/users").status == 403
        assert theirs == [], theirs
    finally:
        context.close()
    assert errors == [], errors
    users = reads.users(console.engine, CamundaPage(), user_id="ada")
    assert isinstance(users, list) and [u.email for u in users] == ["ada@example.com"]
