"""Webhooks in a real browser: an admin creates a subscription with the console's form, the
server's dispatcher parks what a failing receiver refuses as a dead letter, and the "Replay all"
button delivers it once the receiver works; under the pages' CSP, labelled, never showing the
secret."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from engine.states import DeliveryState
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.test_csp import visit, watch
from tests.browser.test_pages import CHECKS
from tests.waiting import wait_until
from tests.webhooks.conftest import SECRET, two_steps
from tests.webhooks.receiver import Receiver, verify

pytestmark = pytest.mark.browser


@pytest.fixture
def console(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ConsoleServer]:
    """The console with a dispatcher that gives up after one attempt and looks often."""
    monkeypatch.setenv("INTERLOCK_WEBHOOK_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("INTERLOCK_WEBHOOK_POLL_SECONDS", "0.2")
    server = ConsoleServer(database_url).start()
    try:
        yield server
    finally:
        server.close()


def dead_letters(console: ConsoleServer) -> int:
    with console.engine.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM webhook_delivery WHERE state = %s", (DeliveryState.DEAD,)
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver(always_fail=True).start()
    yield running
    running.stop()


def test_create_a_subscription_and_replay_its_dead_letter(
    console: ConsoleServer, login: Login, receiver: Receiver
) -> None:
    page = login("admin")
    violations = watch(page)
    visit(page, "/webhooks")
    assert page.evaluate(CHECKS) == []
    page.get_by_label("Name").fill("orders")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label("Secret").fill(SECRET)
    page.get_by_label("instance.started").check()
    page.get_by_role("button", name="Create subscription").click()
    expect(page.locator("#flash-webhooks")).to_contain_text("Subscription 'orders' created.")
    expect(page.locator("#webhook-rows")).to_contain_text("orders")

    console.engine.deploy(two_steps())
    handle = console.engine.start_latest("two-steps")
    wait_until(lambda: receiver.received, "the receiver to be called")
    assert [r.event for r in receiver.received] == ["instance.started"]
    wait_until(lambda: dead_letters(console) == 1, "the refused delivery to be a dead letter")

    page.get_by_role("link", name="orders").click()
    dead = page.locator("section[aria-labelledby=h-dead] tr[data-delivery]")
    expect(dead).to_have_count(1)
    expect(dead).to_contain_text("HTTP 500")
    assert page.evaluate(CHECKS) == []
    assert SECRET not in page.content()

    receiver.always_fail = False
    page.get_by_role("button", name="Replay all dead letters").click()
    expect(page.locator("#flash-webhooks")).to_contain_text("Replaying 1 dead letter.")
    wait_until(receiver.accepted, "the replayed delivery")
    (got,) = receiver.accepted()
    assert got.body["instance_id"] == str(handle.id)
    assert verify(SECRET, got)
    assert violations == [], violations
