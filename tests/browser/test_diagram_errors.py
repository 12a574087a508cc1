"""A diagram that cannot be drawn, or whose live state cannot be loaded, says so on the page
instead of failing silently; a later update that succeeds takes the message away."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Route, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser

DIAGRAM_XML = re.compile(r"/definitions/parallel-approval/xml\?")
# The inspector's diagram state comes with the page's one live request.
INSTANCE_STATE = re.compile(r"/instances/[0-9a-f-]+/live\?")


def test_a_diagram_that_cannot_be_drawn_shows_why(console: ConsoleServer, login: Login) -> None:
    console.engine.deploy(parallel_approval())
    page = login("viewer")

    def broken(route: Route) -> None:
        route.fulfill(status=200, content_type="application/xml", body="<definitions><process")

    page.route(DIAGRAM_XML, broken)
    page.goto("/definitions/parallel-approval")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "error")
    message = page.locator("#diagram-error")
    expect(message).to_be_visible()
    expect(message).to_contain_text("The diagram could not be drawn: ")
    expect(message).to_have_attribute("role", "alert")
    expect(diagram).to_be_hidden()


def test_a_failed_update_is_shown_until_an_update_succeeds(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    diagram = page.locator("#diagram")
    expect(diagram).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    message = page.locator("#diagram-error")
    expect(message).to_be_hidden()

    def unavailable(route: Route) -> None:
        route.fulfill(status=503, content_type="text/plain", body="restarting")

    page.route(INSTANCE_STATE, unavailable)
    pack, invoice = sorted(engine.user_tasks(handle.id), key=lambda t: t.node_id != "Pack")
    engine.complete_task(pack.id)
    expect(message).to_be_visible()
    expect(message).to_have_text(
        "The diagram is not up to date: its state could not be loaded (503). "
        "It is updated again with the next change."
    )
    expect(diagram).to_have_class(re.compile(r"\bstale\b"))

    page.unroute(INSTANCE_STATE, unavailable)
    engine.complete_task(invoice.id)
    expect(message).to_be_hidden()
    expect(diagram).not_to_have_class(re.compile(r"\bstale\b"))
    expect(page.locator('.djs-overlays[data-container-id="Confirm"] .token-badge')).to_have_text(
        "1"
    )
