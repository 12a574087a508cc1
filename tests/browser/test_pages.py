"""Every page renders at 1280 px without sideways scrolling, labels its inputs, and works with
the keyboard; the instance list filters and pages; definitions show counts and a heatmap."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from engine.core import audit
from engine.states import AuditChannel
from tests.browser.conftest import Login
from tests.browser.live import ConsoleServer
from tests.browser.processes import parallel_approval

pytestmark = pytest.mark.browser

CHECKS = """() => {
  const problems = [];
  if (document.documentElement.scrollWidth > window.innerWidth) {
    problems.push('scrolls sideways: ' + document.documentElement.scrollWidth);
  }
  for (const field of document.querySelectorAll('input, select, textarea')) {
    if (field.type === 'hidden') continue;
    const named = field.labels.length > 0 || field.getAttribute('aria-label');
    if (!named) problems.push('no label: ' + field.outerHTML.slice(0, 80));
  }
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.getAttributeNames()) {
      if (attr.startsWith('on')) problems.push('inline handler: ' + el.tagName + ' ' + attr);
    }
  }
  return problems;
}"""

FOCUS_RING = """() => {
  const el = document.activeElement;
  const style = getComputedStyle(el);
  return [el.tagName, style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2];
}"""


def check(page: Page, path: str) -> None:
    page.goto(path)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live")
    assert page.evaluate(CHECKS) == [], path


def test_pages_at_1280_with_labels_and_keyboard(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handles = [
        engine.start_latest(
            "parallel-approval",
            {"n": n, "tier": "gold" if n % 2 else "basic"},
            business_key=f"order-{n}",
        )
        for n in range(60)
    ]
    with audit.acting(audit.Actor("operator", AuditChannel.CONSOLE)):
        handles[0].suspend()  # audit entries: the audit page and the inspector's timeline
        handles[0].resume()
    page = login("operator")
    for path in (
        "/",
        "/definitions",
        "/definitions/parallel-approval",
        "/instances",
        f"/instances/{handles[0].id}",
        "/incidents",
        "/tasks",
        "/workers",
        "/cleanup",
        "/batches",
        "/audit",
    ):
        check(page, path)
    # The suspension, the resumption and the operator's log-in.
    expect(page.locator("tr[data-audit]")).to_have_count(3)

    page.goto("/instances")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#content")).to_be_focused()
    page.keyboard.press("Tab")
    tag, ring = page.evaluate(FOCUS_RING)
    assert tag == "SELECT" and ring

    rows = page.locator("#instance-rows tr[data-instance]")
    expect(rows).to_have_count(50)
    page.get_by_role("link", name="Next page").click()
    expect(rows).to_have_count(10)
    shown = set(rows.evaluate_all("rs => rs.map(r => r.dataset.instance)"))
    assert shown == {str(h.id) for h in handles[:10]}

    page.goto("/instances")
    page.locator("details.more-filters > summary").click()
    page.get_by_label("Variable", exact=True).fill("tier")
    page.get_by_label("equals").fill("gold")
    page.get_by_label("Business key").fill("order-7")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows).to_have_attribute("data-instance", str(handles[7].id))

    page.goto("/instances?var_name=n&var_value=3")
    expect(rows).to_have_count(1)
    handles[3].cancel()
    expect(page.locator(f'tr[data-instance="{handles[3].id}"]')).to_have_attribute(
        "data-state", "Terminated"
    )


def test_definition_counts_and_heatmap(console: ConsoleServer, login: Login) -> None:
    engine = console.engine
    engine.deploy(parallel_approval())
    handle = engine.start_latest("parallel-approval")
    for task in engine.user_tasks(handle.id):
        engine.complete_task(task.id)
    second = engine.start_latest("parallel-approval")
    page = login("operator")
    page.goto("/definitions")
    expect(page.locator('tr[data-key="parallel-approval"]')).to_contain_text("v1")
    page.get_by_role("link", name="parallel-approval").click()
    expect(page.locator("#diagram")).to_have_attribute("data-ready", "true")
    confirm = page.locator('.djs-overlays[data-container-id="Confirm"] .token-badge')
    expect(confirm).to_have_text("1")
    expect(page.locator('tr[data-node="Pack"] [data-col="tokens"]')).to_have_text("1")

    [pack] = [t for t in engine.user_tasks(second.id) if t.node_id == "Pack"]
    engine.complete_task(pack.id)
    expect(page.locator('tr[data-node="Pack"] [data-col="tokens"]')).to_have_text("0")
    expect(page.locator('tr[data-node="Pack"] [data-col="visits"]')).to_have_text("2")
    page.locator("#diagram-modes").get_by_label("Heatmap").check()
    expect(page.locator('.djs-overlays[data-container-id="Pack"] .heat-badge')).to_contain_text("2")
    expect(page.locator('.djs-overlays[data-container-id="Join"] .heat-badge')).to_contain_text("3")
    expect(page.locator('.djs-element[data-element-id="Join"]')).to_have_class(
        "djs-element djs-shape heat-5"
    )
    expect(page.locator('.djs-element[data-element-id="Split"]')).to_have_class(
        "djs-element djs-shape heat-4"
    )


def test_the_cleanup_button_starts_a_run_and_the_page_shows_it(
    console: ConsoleServer, login: Login
) -> None:
    page = login("operator")
    page.goto("/cleanup")
    by_hand = page.locator('.cleanup-runs tr[data-how="manual"]')
    expect(by_hand).to_have_count(0)
    page.get_by_role("button", name="Start cleanup now").click()
    expect(page.locator("#flash-cleanup")).to_contain_text("History cleanup started")
    expect(by_hand).to_have_count(1)
    expect(by_hand).to_have_attribute("data-state", "Finished")
    expect(page.locator(".cleanup-last")).to_contain_text("Last run: Finished")
    viewer = login("viewer")
    viewer.goto("/cleanup")
    expect(viewer.locator(".cleanup-last")).to_contain_text("Last run: Finished")
    expect(viewer.get_by_role("button", name="Start cleanup now")).to_have_count(0)
