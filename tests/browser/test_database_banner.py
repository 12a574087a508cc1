"""The console while the database is unavailable: a page load answers the "Database
unavailable" page, htmx refreshes that answer 503 raise the banner over the open page (and the
first answer after the outage lowers it), and the event stream reports losing and regaining the
database when its connection is cut."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.waiting import wait_until

pytestmark = pytest.mark.browser

CHANGED = "document.dispatchEvent(new CustomEvent('interlock:changed'))"


def refused() -> None:
    raise psycopg.OperationalError("connection refused")


@pytest.fixture
def outage(console: ConsoleServer) -> Iterator[list[bool]]:
    """`outage[0] = True` makes the console's engine find the database unreachable: its next
    look (a connection attempt) fails, so every request fails fast as during a real outage."""
    availability = console.engine.availability
    probe = availability._probe
    state = [False]

    def looking() -> None:
        if state[0]:
            refused()
        probe()

    def marked_up() -> None:
        # Work already under way when the test cut the database off may still succeed; only
        # a look after the cut ends the outage.
        if not state[0]:
            mark_up()

    mark_up = availability.mark_up
    availability._probe = looking
    availability.mark_up = marked_up  # type: ignore[method-assign]
    yield state
    availability._probe = probe
    availability.mark_up = mark_up  # type: ignore[method-assign]


def go_down(console: ConsoleServer, outage: list[bool]) -> None:
    outage[0] = True
    console.engine.availability.mark_down("the test cut the database off")


def test_htmx_requests_raise_and_lower_the_banner(
    console: ConsoleServer, login: Login, outage: list[bool]
) -> None:
    page = login("viewer")
    page.goto("/instances")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    banner = page.locator("#db-banner")
    expect(banner).to_be_hidden()

    go_down(console, outage)
    page.evaluate(CHANGED)  # the live regions refresh: their requests answer 503
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("Database unavailable.")

    # Back: the live regions ask again until the server's probe has seen the database.
    outage[0] = False

    def lowered() -> bool:
        page.evaluate(CHANGED)
        return banner.is_hidden()

    wait_until(lowered, "the banner lowered after the outage")
    expect(banner).to_be_hidden()


def test_a_page_load_while_down_shows_the_unavailable_page(
    console: ConsoleServer, login: Login, outage: list[bool]
) -> None:
    page = login("viewer")
    go_down(console, outage)
    response = page.goto("/instances")
    assert response is not None and response.status == 503
    assert response.headers["retry-after"] == "2"
    expect(page.locator("#db-banner")).to_be_visible()
    expect(page.locator("#db-banner")).to_contain_text("Database unavailable.")

    # Back: once the server's probe has seen the database again, a page load answers 200.
    outage[0] = False

    def loads() -> bool:
        answer = page.goto("/instances")
        return answer is not None and answer.status == 200

    wait_until(loads, "a page load answered 200 after the outage")
    expect(page.locator("#db-banner")).to_be_hidden()


def test_the_stream_reports_its_connection_lost_and_back(
    console: ConsoleServer, login: Login
) -> None:
    page = login("viewer")
    page.goto("/instances")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    with psycopg.connect(console.database_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = 'interlock-stream' AND datname = current_database()"
        ).fetchall()
    assert ended == [(True,)]
    page.wait_for_function(
        "() => window.Interlock.received.filter(([, type]) => type === 'database').length >= 2"
    )
    expect(page.locator("#db-banner")).to_be_hidden()
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
