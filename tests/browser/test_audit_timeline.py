"""The audit log where operators look: an operator suspends an instance from its inspector, and
the entry (who, what) appears live in the history timeline of every open inspector, a viewer's
included; the audit page lists it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser


def test_an_operation_appears_live_in_the_timeline(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval", business_key="order-audit")
    watcher = login("viewer")
    watcher.goto(f"/instances/{handle.id}")
    expect(watcher.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(watcher.locator("#history-body li.audit-entry")).to_have_count(0)

    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    page.get_by_role("button", name="Suspend").click()
    expect(page.locator("#flash-header")).to_contain_text("suspended")

    for seen in (page, watcher):
        entry = seen.locator("#history-body li.audit-entry")
        expect(entry).to_have_count(1)
        expect(entry).to_contain_text("Suspend")
        expect(entry).to_contain_text("by operator (console)")

    # The instance's entries: the two log-ins above are entries of the log too.
    page.goto(f"/audit?instance={handle.id}")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    expect(page.locator("tr[data-audit]")).to_have_count(1)
    expect(page.locator("tr[data-audit]")).to_contain_text("Suspended")

    # An annotation: saved from the page, which then lists that change as an entry of its own.
    page.get_by_label("Annotation of entry").fill("customer asked, ticket 42")
    page.get_by_role("button", name="Annotate").click()
    expect(page.locator("#flash-audit")).to_contain_text("Annotation saved")
    expect(page.locator("tr[data-audit]")).to_have_count(2)
    expect(page.locator("tr[data-audit]").first).to_contain_text("SetAnnotation")
    expect(page.locator("tr[data-audit]").nth(1)).to_contain_text("customer asked, ticket 42")
