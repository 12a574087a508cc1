"""An open inspector refreshes with one request per burst of events, never two at once, and that
request brings every changed part: the tokens panel, the other panels, the diagram. A part the
user is typing in is refreshed around the form typed in, which stays as it is."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Request, Route, expect

from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval
from tests.waiting import wait_until

pytestmark = pytest.mark.browser

SETTLED = """() => {
  const live = window.Interlock.live;
  return live.busy === 0 && live.timer === null && live.wanted.size === 0;
}"""


class Requests:
    """The page's requests besides its event stream and static files, and the most that were
    in flight at once."""

    def __init__(self, page: Page) -> None:
        self.urls: list[str] = []
        self.open: set[Request] = set()
        self.most = 0
        page.on("request", self.started)
        page.on("requestfinished", self.ended)
        page.on("requestfailed", self.ended)

    def wanted(self, request: Request) -> bool:
        return "/stream" not in request.url and "/static/" not in request.url

    def started(self, request: Request) -> None:
        if self.wanted(request):
            self.urls.append(request.url)
            self.open.add(request)
            self.most = max(self.most, len(self.open))

    def ended(self, request: Request) -> None:
        self.open.discard(request)

    def clear(self) -> None:
        """Count afresh (the page has settled: what it asked for before has been answered)."""
        self.urls.clear()
        self.open.clear()
        self.most = 0


def settle(page: Page, console: ConsoleServer) -> None:
    """Wait until the page has had every event written so far and asks for nothing more."""
    with console.engine.connection() as conn:
        row = conn.execute("SELECT coalesce(max(seq), 0) FROM outbox_event").fetchone()
    newest = row[0] if row else 0
    page.wait_for_function("n => window.Interlock.lastSeq >= n", arg=newest)
    page.wait_for_function(SETTLED)


def test_a_burst_of_commits_costs_one_request(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    page = login("viewer")
    requests = Requests(page)
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    settle(page, console)
    requests.clear()
    events = page.evaluate("window.Interlock.received.length")

    # One commit: several events, one request, and the tokens panel shows the move.
    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Pack")
    engine.complete_task(pack.id)
    expect(page.locator("#tokens-body .join-count")).to_have_text("1/2")
    expect(page.locator('.djs-overlays[data-container-id="Join"] .join-badge')).to_have_text("1/2")
    settle(page, console)
    assert page.evaluate("window.Interlock.received.length") - events >= 2
    assert len(requests.urls) == 1, requests.urls
    assert f"/instances/{handle.id}/live?" in requests.urls[0]
    assert requests.most == 1
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
    expect(page.locator("#history-body li[data-node]")).to_have_count(5)

    # A burst of commits: the first event asks at once, the rest wait for that answer and are
    # asked for together after it. The first answer is held until every event has arrived, so
    # that a slow machine cannot answer it between two commits of the burst.
    requests.clear()
    events = page.evaluate("window.Interlock.received.length")
    held: list[Route] = []

    def hold(route: Route) -> None:
        if held:
            route.continue_()  # the burst's second request goes through
        else:
            held.append(route)

    page.route("**/live?*", hold)
    for n in range(8):
        handle.set_variables({"step": n})
    wait_until(
        lambda: page.evaluate("window.Interlock.received.length") - events >= 8 and held,
        "the burst's events and its first request",
    )
    held[0].continue_()
    page.unroute("**/live?*", hold)
    expect(page.locator('#variables-body tr[data-variable="step"] .value')).to_have_text("7")
    settle(page, console)
    assert len(held) == 1
    # One request when every event had arrived before the first was asked for, else two.
    assert 1 <= len(requests.urls) <= 2, requests.urls
    assert all("/live?" in url for url in requests.urls), requests.urls
    assert requests.most == 1


def test_a_part_being_edited_refreshes_around_what_was_typed(
    console: ConsoleServer, login: Login
) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    page = login("operator")
    page.goto(f"/instances/{handle.id}")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    settle(page, console)

    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Pack")
    typing = page.locator(f"#vars-{pack.id}")
    typing.fill('{"note": "half-typed"}')
    typing.focus()
    invoice = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Invoice")
    engine.complete_task(invoice.id)
    expect(page.locator("#tokens-body .join-count")).to_have_text("1/2")
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)
    settle(page, console)
    expect(typing).to_have_value('{"note": "half-typed"}')
    expect(typing).to_be_focused()

    # The focus leaves, but what was typed stays through the next refresh.
    page.locator("#h-diagram").click()
    handle.set_variables({"step": 1})
    expect(page.locator('#variables-body tr[data-variable="step"] .value')).to_have_text("1")
    settle(page, console)
    expect(typing).to_have_value('{"note": "half-typed"}')
    expect(page.locator("#user_tasks-body li[data-task]")).to_have_count(1)


def test_the_other_pages_ask_once_per_burst(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    page = login("viewer")
    requests = Requests(page)

    # The definition page: its per-node table and its diagram's state in one request.
    page.goto("/definitions/parallel-approval")
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    settle(page, console)
    requests.clear()
    pack = next(t for t in engine.user_tasks(handle.id) if t.node_id == "Pack")
    engine.complete_task(pack.id)
    expect(page.locator('tr[data-node="Join"] [data-col="tokens"]')).to_have_text("1")
    expect(page.locator('.djs-overlays[data-container-id="Join"] .token-badge')).to_have_text("1")
    settle(page, console)
    assert len(requests.urls) == 1, requests.urls
    assert "/definitions/parallel-approval/live?" in requests.urls[0]
    assert requests.most == 1

    # The instance list: a burst of starts, the first asks at once, the rest together after it.
    page.goto("/instances")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    settle(page, console)
    requests.clear()
    for _ in range(6):
        engine.start_latest("parallel-approval")
    expect(page.locator("#instance-rows tr[data-instance]")).to_have_count(7)
    settle(page, console)
    assert 1 <= len(requests.urls) <= 2, requests.urls
    assert requests.most == 1
