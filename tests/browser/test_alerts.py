"""Stuck-instance alerts in Chromium: an operator adds a threshold on the definition page, the
engine's clock passes it, and without a reload the Alerts page lists the instance, the overview
and the definition page count it; the `alert.raised` webhook reaches a receiver on 127.0.0.1
exactly once, /metrics shows the gauge, and removing the threshold is audited."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from playwright.sync_api import expect

from engine.commands.webhooks import CreateSubscription
from engine.loops.alerts import TICK_ENV
from tests.browser.conftest import Login
from tests.browser.live import PASSWORD, ConsoleServer
from tests.engine.clock import ManualClock
from tests.engine.test_alerts import stuck_model
from tests.waiting import wait_until
from tests.webhooks.receiver import Receiver

SECRET = "alert-webhook-secret-1234"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def console(
    database_url: str, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ConsoleServer]:
    # A tick every 0.2 s, and deliveries to the receiver on 127.0.0.1 allowed.
    monkeypatch.setenv(TICK_ENV, "0.2")
    monkeypatch.setenv("INTERLOCK_WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8")
    server = ConsoleServer(database_url, clock=clock).start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


def ticked_since(console: ConsoleServer, clock: ManualClock) -> bool:
    """Whether the watch has raised up to the clock's current cut for every threshold."""
    with console.engine.connection() as conn:
        row = conn.execute(
            "SELECT bool_and(raised_until >= %s - make_interval(secs => seconds)) "
            "FROM alert_threshold",
            (clock.now,),
        ).fetchone()
    return bool(row and row[0])


def undelivered(console: ConsoleServer) -> int:
    with console.engine.connection() as conn:
        row = conn.execute("SELECT count(*) FROM webhook_delivery WHERE state <> 'delivered'")
        found = row.fetchone()
    return int(found[0]) if found else 0


def test_an_alert_appears_live_when_the_clock_passes_its_threshold_and_fires_one_webhook(
    login: Login, console: ConsoleServer, clock: ManualClock, receiver: Receiver
) -> None:
    engine = console.engine
    # The model declares no waiting threshold on Approve (a day); the operator sets 2 h.
    engine.deploy(stuck_model(key="shipping", waiting="P1D").encode())
    engine.run(CreateSubscription("alerts", receiver.url, SECRET, event_types=("alert.raised",)))
    stuck = engine.start_latest("shipping", business_key="order-77")
    page = login("operator")

    page.goto("/definitions/shipping")
    panel = page.locator("#definition-alerts")
    expect(panel.locator("#alert-thresholds")).to_contain_text("waiting longer than 1 d")
    form = panel.locator("#alert-add")
    form.get_by_label("Node").select_option(label="Approve")
    form.get_by_label("When").select_option("waiting")
    form.get_by_label("longer than").fill("PT2H")
    form.get_by_role("button", name="Add alert").click()
    expect(page.locator("#flash-alerts")).to_contain_text("Alert set")
    row = panel.locator("#alert-thresholds tr", has_text="Approve").filter(has_text="waiting")
    expect(row).to_contain_text("longer than 2 h")
    expect(row).to_contain_text("an operator")
    expect(panel.locator("#definition-alert-count")).to_have_attribute("data-alerts", "0")

    alerts_page = login("operator")
    alerts_page.goto("/alerts")
    expect(alerts_page.locator("#alert-total")).to_have_attribute("data-alerts", "0")
    overview = login("operator")
    overview.goto("/")
    expect(overview.locator("#open-alerts")).to_have_text("0")

    # Nothing commits from here on: only the clock passes the threshold, and the watch's tick
    # raises the alert.
    clock.advance(hours=2, minutes=5)

    listed = alerts_page.locator(f'tr[data-alert="{stuck.id}"]')
    expect(listed).to_be_visible()
    expect(listed).to_contain_text("shipping")
    expect(listed).to_contain_text("Approve")
    expect(listed).to_contain_text("order-77")
    expect(listed).to_contain_text("5 min")
    expect(listed).to_contain_text("waiting > 2 h")
    expect(alerts_page.locator("#alert-total")).to_have_attribute("data-alerts", "1")
    expect(overview.locator("#open-alerts")).to_have_text("1")
    expect(panel.locator("#definition-alert-count")).to_have_attribute("data-alerts", "1")
    listed.get_by_role("link", name="order-77").click()
    expect(alerts_page).to_have_url(f"{console.url}/instances/{stuck.id}")

    wait_until(lambda: receiver.first_acceptances(), "the alert's webhook")
    # The clock moves on and the watch ticks again (its cursor passes the new cut): the
    # crossing is not raised again.
    clock.advance(minutes=30)
    wait_until(lambda: ticked_since(console, clock), "a tick after the clock moved")
    wait_until(lambda: not undelivered(console), "every delivery made")
    [delivered] = receiver.first_acceptances()
    assert delivered.event == "alert.raised"
    body = delivered.body
    assert (body["event"], body["instance_id"], body["node_id"], body["definition_key"]) == (
        "alert.raised",
        str(stuck.id),
        "approve",
        "shipping",
    )

    metrics = httpx.get(f"{console.url}/metrics", auth=("admin", PASSWORD), timeout=10)
    assert metrics.status_code == 200
    assert 'interlock_open_alerts{definition_key="shipping",kind="waiting"} 1.0' in metrics.text

    # Removing the threshold: the alert goes, and the audit log says who removed what.
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Remove").click()
    expect(page.locator("#flash-alerts")).to_contain_text("Alert removed")
    expect(panel.locator("#definition-alert-count")).to_have_attribute("data-alerts", "0")
    expect(row).to_have_count(0)
    alerts_page.goto("/alerts")
    expect(alerts_page.locator("#alert-total")).to_have_attribute("data-alerts", "0")
    with engine.connection() as conn:
        audited = conn.execute(
            "SELECT user_id, operation, property, before, after FROM audit_entry "
            "WHERE property = 'alert.waiting:approve' ORDER BY at, id"
        ).fetchall()
    assert [(r[0], r[1], r[3], r[4]) for r in audited] == [
        ("operator", "Update", "P1D", "PT2H"),
        ("operator", "Delete", "PT2H", None),
    ]


def test_a_viewer_sees_alerts_but_no_way_to_change_thresholds(
    login: Login, console: ConsoleServer, clock: ManualClock
) -> None:
    console.engine.deploy(stuck_model(key="viewing").encode())
    console.engine.start_latest("viewing")
    clock.advance(hours=3)
    page = login("viewer")
    page.goto("/definitions/viewing")
    panel = page.locator("#definition-alerts")
    expect(panel.locator("#alert-thresholds")).to_contain_text("the model")
    expect(panel.locator("#definition-alert-count")).to_have_attribute("data-alerts", "1")
    expect(panel.locator("#alert-add")).to_have_count(0)
    expect(panel.get_by_role("button", name="Remove")).to_have_count(0)
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Alerts").click()
    expect(page.locator("#alert-total")).to_have_attribute("data-alerts", "1")
